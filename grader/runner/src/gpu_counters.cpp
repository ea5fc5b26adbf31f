// The GPU's counters of each kernel of a call, through CUPTI's range profiler. See gpu_counters.hpp.
//
// The sequence is CUPTI's (cupti_range_profiler.h, cupti_profiler_host.h): initialise the
// profiler, ask the chip's name and which counters this context may read, build a configuration
// image for the metrics on the host, enable the range profiler on the context, and for each
// session size and initialise a counter-data image, set the configuration (one range per kernel),
// start, run, stop, decode, then evaluate each range's metrics on the host.
//
// Replay: where the metrics fit in one pass (the five counts below are one pass on the GH100 chip of
// the H100 and the H200, seen on an H200), the session is a user replay of one pass: the call runs once, as it
// would anyway, and each kernel is counted as it runs. Kernel replay, which CUPTI needs where they
// take more passes, saves and restores device memory around each kernel and, measured on an H200
// (CUDA 13.0), costs about 65 ms more on every second kernel of a session, however small: a call of
// 8 tiny kernels was counted in 260-315 ms by kernel replay, 16-88 ms by a user-replayed pass.
#include "gpu_counters.hpp"

#include "convlab/wire.hpp"

#ifdef CONVLAB_HAVE_CUPTI
#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <dlfcn.h>
#endif

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

namespace convlab::runner {
#ifdef CONVLAB_HAVE_CUPTI
namespace {

// Each quantity from the first of its metrics that this chip has; a byte count is turned into
// 4-byte words, an instruction count (per thread) taken as it is. (Seen on an H100 with CUDA 13:
// the byte counts exist; no barrier count does, so barriers stay the compiled code's fact.)
//
// Asynchronous copies (cp.async, SASS LDGSTS) are neither in the load nor in the store counts: a
// kernel that fetched every tap with cp.async into shared memory and read it there showed 0
// global loads (seen on an H200 with CUDA 13: smsp__sass_data_bytes_mem_global_op_ld 0 and
// smsp__sass_data_bytes_mem_global_op_ldgsts 4 KB for 256 copies of 16 bytes). Their own counts
// are added where the chip has them (`also`), so that such a copy is the global load and the
// shared store it is.
//
// Generic loads and stores (SASS LD and ST: through a pointer whose address space the compiler
// did not know) are counted as global ones, even where they reach shared memory: seen on an H200
// (ncu, CUDA 13.0), the warp matrix API's load_matrix_sync and store_matrix_sync from and to shared
// memory, compiled to generic accesses, showed as 14 MB of global_op_ld and 2.6 MB of global_op_st
// in a kernel with no global load at all. Lab 06 judges tensor-core kernels' tiles from their
// compiled code, not from these counts (technique_lab06.hpp, keeps_a_tile).
struct Quantity {
  double KernelCounts::*field;
  std::vector<std::pair<const char*, double>> candidates;  // base metric, factor
  std::vector<std::pair<const char*, double>> also = {};   // added to the chosen one where present
};
const std::vector<Quantity>& quantities() {
  static const std::vector<Quantity> q = {
      {&KernelCounts::global_load_words,
       {{"smsp__sass_data_bytes_mem_global_op_ld", 0.25}, {"smsp__sass_thread_inst_executed_op_global_ld_pred_on", 1}},
       {{"smsp__sass_data_bytes_mem_global_op_ldgsts", 0.25}}},
      {&KernelCounts::global_store_words,
       {{"smsp__sass_data_bytes_mem_global_op_st", 0.25}, {"smsp__sass_thread_inst_executed_op_global_st_pred_on", 1}}},
      {&KernelCounts::shared_load_words,
       {{"smsp__sass_data_bytes_mem_shared_op_ld", 0.25}, {"smsp__sass_thread_inst_executed_op_shared_ld_pred_on", 1}}},
      {&KernelCounts::global_load_instructions, {{"smsp__sass_inst_executed_op_global_ld", 32}},
       {{"smsp__sass_inst_executed_op_ldgsts", 32}}},
      {&KernelCounts::shared_store_words,
       {{"smsp__sass_data_bytes_mem_shared_op_st", 0.25}, {"smsp__sass_thread_inst_executed_op_shared_st_pred_on", 1}},
       {{"smsp__sass_data_bytes_mem_shared_op_ldgsts", 0.25}}},
      // The tensor cores' work with TF32 operands: "math ops", two per multiply-add. Checked with ncu
      // on an H200 (CUDA 13.0): 28 311 552 for a window kernel of 14 155 776 multiply-adds (its m16n16k8
      // products, padding included), exactly. The instruction count sm__inst_executed_pipe_tensor_op_hmma
      // is not a measure of it: through this profiler it reported 40 to 300 per output for kernels with
      // no tensor-core instruction (wire.hpp, Evidence::tensor_counted).
      // Hopper's warpgroup products (wgmma, SASS HGMMA) are counted apart from HMMA's, per SM only
      // (no smsp__ form): added where the chip has the count (sm_90), so that a wgmma kernel's work
      // is the tensor cores' work it is. Checked with ncu on an H200 (CUDA 13.0): 924 844 032 for
      // a wgmma implicit GEMM (now lab 06's reference wgmma_kernel) on N4 C64 56x56 K64 3x3
      // (462 422 016 multiply-adds), exactly; its HMMA count 0.
      {&KernelCounts::tensor_macs, {{"smsp__ops_path_tensor_op_hmma_src_tf32_dst_fp32", 0.5}},
       {{"sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32", 0.5}}},
  };
  return q;
}

std::string words(CUptiResult r) {
  const char* s = nullptr;
  cuptiGetResultString(r, &s);
  return std::string(s ? s : "unknown CUPTI error") + " (" + std::to_string(int(r)) + ")";
}

void check(CUptiResult r, const char* what) {
  if (r != CUPTI_SUCCESS) throw std::runtime_error(std::string("CUPTI ") + what + " failed: " + words(r));
}

// Why the counters are refused, in words an instructor can act on.
std::string refused(CUptiResult r, const char* what) {
  if (r == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    return "this machine does not let this user read the GPU's performance counters (CUPTI: "
           "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, what ncu calls ERR_NVGPUCTRPERM; an administrator can allow it "
           "with the driver option NVreg_RestrictProfilingToAdminUsers=0, docs/grading.md says how)";
  if (r == CUPTI_ERROR_NOT_SUPPORTED || r == CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED ||
      r == CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED || r == CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED)
    return "this GPU or its virtualisation does not offer performance counters (CUPTI " + std::string(what) + ": " +
           words(r) + ")";
  return std::string("CUPTI could not set up the counters (") + what + ": " + words(r) + ")";
}

// The most kernels counted in one call (wire::kMaxCountedLaunches, which the judge knows too).
// CUPTI's counter-data image holds this many ranges (about 92 KB each), and its size is what most of
// the profiler's fixed costs follow: measured on an H200 (CUDA 13.0), with 512 ranges (47 MB) a
// session's set-up took 14 ms, every second stop 60-70 ms more and the first session 0.55-0.75 s;
// with 128 (12 MB) 2-3 ms, 15 ms and 0.26 s. The most a reference launches in a counted call is 18
// (lab 5's Jacobi solver, 10 sweeps): this leaves room for an honest design that launches a few
// kernels a sweep. A call that launches more is not judged on partial counts: the runner fails it
// (run_entry) with wire::too_many_launches() (seen on the H200: the profiler counts the first 128
// kernels of such a call and reports none dropped).
constexpr std::size_t kMaxRanges = wire::kMaxCountedLaunches;

// The counters are one per GPU: while another context counts (`ctest -j` runs technique tests
// side by side), CUPTI answers CUPTI_ERROR_HARDWARE_BUSY (seen on an H100, from the counter
// availability query on). Such a call is tried again, with a growing pause, for up to a minute,
// or until `quitting` (the runner ends while prepare()'s thread waits).
template <class Call>
CUptiResult when_free(Call call, const std::atomic<bool>* quitting = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  auto pause = std::chrono::milliseconds(10);
  for (;;) {
    const CUptiResult r = call();
    if (r != CUPTI_ERROR_HARDWARE_BUSY || std::chrono::steady_clock::now() > deadline) return r;
    if (quitting && quitting->load()) return r;
    std::this_thread::sleep_for(pause);
    pause = std::min(pause * 2, std::chrono::milliseconds(250));
  }
}

}  // namespace

// Nothing is torn down: the runner's process ends with its context, and CUPTI with it (a
// runner that counted is never timed again: remote::set_counting). A set-up still under way in
// prepare()'s thread is waited for (a CUPTI call, at most about a second; a wait for busy counters
// stops at once).
GpuCounters::~GpuCounters() {
  quitting_ = true;
  if (preparing_.joinable()) preparing_.join();
}

std::string GpuCounters::find_context() {
  // The runner's context (the runtime makes its primary context current on first use).
  if (cudaFree(nullptr) != cudaSuccess) {
    cudaGetLastError();
    return "no CUDA device to count on";
  }
  // The driver's current context, through the runtime: the runner does not link the driver
  // library, so that it starts (and says "no GPU") on a machine that has none.
  using CtxGetCurrent = CUresult (*)(CUcontext*);
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &entry, 12000, cudaEnableDefault, &found) != cudaSuccess ||
      found != cudaDriverEntryPointSuccess)
    entry = nullptr;
  cudaGetLastError();
  if (!entry)  // the driver library the runtime has loaded, asked directly
    if (void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD)) entry = dlsym(driver, "cuCtxGetCurrent");
  if (!entry) return "the CUDA driver does not offer cuCtxGetCurrent, which the counters need";
  CUcontext ctx = nullptr;
  if (reinterpret_cast<CtxGetCurrent>(entry)(&ctx) != CUDA_SUCCESS || !ctx) return "no CUDA context to count in";
  if (cudaGetDevice(&device_) != cudaSuccess) {
    cudaGetLastError();
    return "no CUDA device to count on";
  }
  ctx_ = ctx;
  return {};
}

void GpuCounters::prepare() {
  if (tried_ || preparing_.joinable()) return;
  if (!find_context().empty()) return;  // ready() finds it again and says why
  // Measured on an H200 (probes at stop 40): this host-side work in another thread while the
  // serving thread timed a kernel left the kernel's median unchanged (0.4745 ms either way).
  preparing_ = std::thread([this] { why_ = set_up_host(); });
}

bool GpuCounters::ready(std::string* why) {
  if (!tried_) {
    tried_ = true;
    if (preparing_.joinable()) {
      preparing_.join();  // why_: what the thread found
    } else {
      why_ = find_context();
      if (why_.empty()) why_ = set_up_host();
    }
    if (why_.empty()) why_ = enable();
    ok_ = why_.empty();
  }
  if (!ok_ && why) *why = why_;
  return ok_;
}

// The profiler initialised, on this device, and its host object for the chip and the counters this
// context may read: "" or why not.
std::string GpuCounters::open_host() {
  // This thread works in the runner's context too (the counter availability query takes it).
  if (cudaSetDevice(device_) != cudaSuccess) {
    cudaGetLastError();
    return "no CUDA device to count on";
  }
  CUpti_Profiler_Initialize_Params init{};
  init.structSize = CUpti_Profiler_Initialize_Params_STRUCT_SIZE;
  if (const CUptiResult r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) return refused(r, "initialize");
  CUpti_Device_GetChipName_Params chip{};
  chip.structSize = CUpti_Device_GetChipName_Params_STRUCT_SIZE;
  chip.deviceIndex = static_cast<size_t>(device_);
  if (const CUptiResult r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS) return refused(r, "chip name");
  CUpti_Profiler_GetCounterAvailability_Params avail{};
  avail.structSize = CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE;
  avail.ctx = static_cast<CUcontext>(ctx_);
  if (const CUptiResult r = when_free([&] { return cuptiProfilerGetCounterAvailability(&avail); }, &quitting_);
      r != CUPTI_SUCCESS)
    return refused(r, "counter availability");
  availability_.assign(avail.counterAvailabilityImageSize, 0);
  avail.pCounterAvailabilityImage = availability_.data();
  if (const CUptiResult r = when_free([&] { return cuptiProfilerGetCounterAvailability(&avail); }, &quitting_);
      r != CUPTI_SUCCESS)
    return refused(r, "counter availability");

  CUpti_Profiler_Host_Initialize_Params host{};
  host.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE;
  host.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host.pChipName = chip.pChipName;
  host.pCounterAvailabilityImage = availability_.data();  // read by the later steps too: a member
  if (const CUptiResult r = cuptiProfilerHostInitialize(&host); r != CUPTI_SUCCESS) return refused(r, "host");
  host_ = host.pHostObject;
  return {};
}

// The metrics counted, by the quantities' candidates this chip has: "" or why not (no per-thread
// count of global and shared loads).
std::string GpuCounters::choose_metrics() {
  auto* const host = static_cast<CUpti_Profiler_Host_Object*>(host_);
  // The metrics this chip has, by base name.
  CUpti_Profiler_Host_GetBaseMetrics_Params base{};
  base.structSize = CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE;
  base.pHostObject = host;
  base.metricType = CUPTI_METRIC_TYPE_COUNTER;
  if (const CUptiResult r = cuptiProfilerHostGetBaseMetrics(&base); r != CUPTI_SUCCESS)
    return refused(r, "metric list");
  std::vector<std::string> have(base.ppMetricNames, base.ppMetricNames + base.numMetrics);
  metrics_.clear();
  counts_tensor_ = false;
  const auto has = [&have](const char* name) { return std::find(have.begin(), have.end(), name) != have.end(); };
  bool global_loads = false, shared_loads = false;
  for (const Quantity& q : quantities()) {
    for (const auto& [name, factor] : q.candidates)
      if (has(name)) {
        metrics_.push_back({std::string(name) + ".sum", q.field, factor});
        global_loads |= q.field == &KernelCounts::global_load_words;
        shared_loads |= q.field == &KernelCounts::shared_load_words;
        counts_tensor_ |= q.field == &KernelCounts::tensor_macs;
        for (const auto& [extra, extra_factor] : q.also)
          if (has(extra)) metrics_.push_back({std::string(extra) + ".sum", q.field, extra_factor});
        break;
      }
  }
  if (!global_loads || !shared_loads) return "this GPU's profiler has no per-thread count of global and shared loads";
  return {};
}

// The configuration image of the metrics, and whether they fit one pass: "" or why not.
std::string GpuCounters::configure() {
  auto* const host = static_cast<CUpti_Profiler_Host_Object*>(host_);
  std::vector<const char*> names;
  for (const auto& m : metrics_) names.push_back(m.name.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{};
  add.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE;
  add.pHostObject = host;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (const CUptiResult r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS) return refused(r, "metrics");
  CUpti_Profiler_Host_GetConfigImageSize_Params size{};
  size.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE;
  size.pHostObject = host;
  if (const CUptiResult r = cuptiProfilerHostGetConfigImageSize(&size); r != CUPTI_SUCCESS)
    return refused(r, "configuration size");
  config_.resize(size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params image{};
  image.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE;
  image.pHostObject = host;
  image.configImageSize = config_.size();
  image.pConfigImage = config_.data();
  if (const CUptiResult r = cuptiProfilerHostGetConfigImage(&image); r != CUPTI_SUCCESS)
    return refused(r, "configuration");
  CUpti_Profiler_Host_GetNumOfPasses_Params passes{};
  passes.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE;
  passes.configImageSize = config_.size();
  passes.pConfigImage = config_.data();
  if (const CUptiResult r = cuptiProfilerHostGetNumOfPasses(&passes); r != CUPTI_SUCCESS)
    return refused(r, "number of passes");
  one_pass_ = passes.numOfPasses == 1;
  return {};
}

std::string GpuCounters::set_up_host() {
  if (std::string why = open_host(); !why.empty()) return why;
  if (std::string why = choose_metrics(); !why.empty()) return why;
  return configure();
}

std::string GpuCounters::enable() {
  CUpti_RangeProfiler_Enable_Params enable{};
  enable.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE;
  enable.ctx = static_cast<CUcontext>(ctx_);
  if (const CUptiResult r = when_free([&] { return cuptiRangeProfilerEnable(&enable); }); r != CUPTI_SUCCESS)
    return refused(r, "enable");
  profiler_ = enable.pRangeProfilerObject;

  std::vector<const char*> names;
  for (const auto& m : metrics_) names.push_back(m.name.c_str());
  CUpti_RangeProfiler_GetCounterDataSize_Params data{};
  data.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE;
  data.pRangeProfilerObject = enable.pRangeProfilerObject;
  data.pMetricNames = names.data();
  data.numMetrics = names.size();
  data.maxNumOfRanges = kMaxRanges;
  data.maxNumRangeTreeNodes = kMaxRanges;
  if (const CUptiResult r = cuptiRangeProfilerGetCounterDataSize(&data); r != CUPTI_SUCCESS)
    return refused(r, "counter data size");
  counter_data_.resize(data.counterDataSize);
  // The profiler stays enabled on the context from here on (a runner that enabled and disabled it
  // around each counted call died of SIGSEGV in CUPTI 13.0 on an H100; kept enabled, it counts):
  // the judge never times a kernel on a runner that counted (remote::set_counting).
  return {};
}

void GpuCounters::begin() {
  if (!ok_) throw std::runtime_error("the GPU counters are not ready: " + why_);
  auto* obj = static_cast<CUpti_RangeProfiler_Object*>(profiler_);
  std::fill(counter_data_.begin(), counter_data_.end(), std::uint8_t(0));
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init{};
  init.structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE;
  init.pRangeProfilerObject = obj;
  init.counterDataSize = counter_data_.size();
  init.pCounterData = counter_data_.data();
  check(cuptiRangeProfilerCounterDataImageInitialize(&init), "counter data initialisation");
  CUpti_RangeProfiler_SetConfig_Params set{};
  set.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE;
  set.pRangeProfilerObject = obj;
  set.configSize = config_.size();
  set.pConfig = config_.data();
  set.counterDataImageSize = counter_data_.size();
  set.pCounterDataImage = counter_data_.data();
  set.range = CUPTI_AutoRange;        // one range per kernel launch
  // One pass: the call runs once and is counted as it runs (see the top of this file); more: each
  // kernel replayed by CUPTI until every counter is read.
  set.replayMode = one_pass_ ? CUPTI_UserReplay : CUPTI_KernelReplay;
  set.maxRangesPerPass = kMaxRanges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  check(when_free([&] { return cuptiRangeProfilerSetConfig(&set); }), "configuration");
  CUpti_RangeProfiler_Start_Params start{};
  start.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE;
  start.pRangeProfilerObject = obj;
  check(when_free([&] { return cuptiRangeProfilerStart(&start); }), "start");
  active_ = true;
}

std::vector<KernelCounts> GpuCounters::end() {
  if (!active_) throw std::runtime_error("the GPU counters were not started");
  active_ = false;
  auto* obj = static_cast<CUpti_RangeProfiler_Object*>(profiler_);
  CUpti_RangeProfiler_Stop_Params stop{};
  stop.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE;
  stop.pRangeProfilerObject = obj;
  check(cuptiRangeProfilerStop(&stop), "stop");
  if (one_pass_ && !stop.isAllPassSubmitted)  // the configuration's one pass should have been all
    throw std::runtime_error("CUPTI's profiler wanted another pass of the counted call (pass " +
                             std::to_string(stop.passIndex) + "), which a call run once cannot give");
  CUpti_RangeProfiler_DecodeData_Params decode{};
  decode.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE;
  decode.pRangeProfilerObject = obj;
  check(cuptiRangeProfilerDecodeData(&decode), "decode");
  if (decode.numOfRangeDropped > 0)
    throw std::runtime_error(wire::too_many_launches(kMaxRanges + decode.numOfRangeDropped));
  CUpti_RangeProfiler_GetCounterDataInfo_Params info{};
  info.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE;
  info.pCounterDataImage = counter_data_.data();
  info.counterDataImageSize = counter_data_.size();
  check(cuptiRangeProfilerGetCounterDataInfo(&info), "counter data info");

  std::vector<const char*> names;
  for (const auto& m : metrics_) names.push_back(m.name.c_str());
  std::vector<KernelCounts> out;
  for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
    KernelCounts k;
    CUpti_RangeProfiler_CounterData_GetRangeInfo_Params range{};
    range.structSize = CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE;
    range.pCounterDataImage = counter_data_.data();
    range.counterDataImageSize = counter_data_.size();
    range.rangeIndex = i;
    range.rangeDelimiter = "/";
    check(cuptiRangeProfilerCounterDataGetRangeInfo(&range), "range name");
    k.name = range.rangeName ? range.rangeName : "";
    std::vector<double> values(names.size(), 0.0);
    CUpti_Profiler_Host_EvaluateToGpuValues_Params eval{};
    eval.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE;
    eval.pHostObject = static_cast<CUpti_Profiler_Host_Object*>(host_);
    eval.pCounterDataImage = counter_data_.data();
    eval.counterDataImageSize = counter_data_.size();
    eval.rangeIndex = i;
    eval.ppMetricNames = names.data();
    eval.numMetrics = names.size();
    eval.pMetricValues = values.data();
    check(cuptiProfilerHostEvaluateToGpuValues(&eval), "evaluation");
    for (std::size_t m = 0; m < metrics_.size(); ++m) k.*(metrics_[m].field) += values[m] * metrics_[m].factor;
    out.push_back(std::move(k));
  }
  return out;
}


#else  // no CUPTI in this toolkit: nothing can be counted

GpuCounters::~GpuCounters() = default;

void GpuCounters::prepare() {}

bool GpuCounters::ready(std::string* why) {
  why_ = "this GPU build has no CUPTI (the CUDA toolkit's profiling library was not found when it was configured)";
  if (why) *why = why_;
  return false;
}

void GpuCounters::begin() { throw std::runtime_error("the GPU counters are not ready: " + why_); }

std::vector<KernelCounts> GpuCounters::end() { throw std::runtime_error("the GPU counters were not started"); }

#endif
}  // namespace convlab::runner
