// convlab grade --gpus (issue 17): the option's entries, CUDA_VISIBLE_DEVICES as CUDA reads it,
// nvidia-smi's lists, the backend a preset grades on, the GPUs of a run checked against a machine
// described here (two H100s, or four, MIG instances), and what the graders' environment shows.
// e2e_gpus.sh runs the same checks through `convlab grade` with a stub nvidia-smi.
#include "grading/gpus.hpp"
#include "common/util.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>

#include <sys/stat.h>
#include <unistd.h>

namespace convlab::cli {
namespace {

const std::string kUuid0 = "GPU-11111111-2222-3333-4444-555555555555";
const std::string kUuid1 = "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee";
const std::string kTwoGpus = "0, " + kUuid0 + ", NVIDIA H100 80GB HBM3\n1, " + kUuid1 + ", NVIDIA H100 80GB HBM3\n";

// The message of the Error that `f` throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

GpuContext machine(const std::string& smi_csv, std::optional<std::string> visible = std::nullopt) {
  GpuContext c;
  c.on_gpu = true;
  c.visible = std::move(visible);
  c.gpus = parse_nvidia_smi_gpus(smi_csv);
  return c;
}

std::string four_gpus() {
  std::string csv;
  for (int i = 0; i < 4; ++i)
    csv += std::to_string(i) + ", GPU-" + std::string(8, static_cast<char>('0' + i)) +
           "-0000-0000-0000-000000000000, NVIDIA H200\n";
  return csv;
}

TEST(Gpus, AnEntryIsAnIndexOrAUuid) {
  EXPECT_EQ(parse_gpu_entry("0"), "0");
  EXPECT_EQ(parse_gpu_entry(" 1 "), "1");
  EXPECT_EQ(parse_gpu_entry("007"), "7");  // as CUDA reads it: the same GPU as 7
  EXPECT_EQ(parse_gpu_entry("00"), "0");
  EXPECT_EQ(parse_gpu_entry(kUuid1), kUuid1);
  EXPECT_EQ(parse_gpu_entry("GPU-aaaa"), "GPU-aaaa");  // a prefix, as CUDA_VISIBLE_DEVICES takes one
  EXPECT_EQ(parse_gpu_entry("MIG-0b0c0d0e-1111-2222-3333-444455556666"), "MIG-0b0c0d0e-1111-2222-3333-444455556666");
  for (const char* bad : {"-1", "-", "a", "gpu0", "1.5", "0x1", "1e3", "GPU-", "GPU-zz", "gpu-aaaa", "GPU-aa;rm",
                          "MIG-GPU-aaaa/1/0", "1234567", ""}) {
    const std::string e = error_of([&] { parse_gpu_entry(bad); });
    EXPECT_TRUE(has(e, "not a GPU index (0, 1, ... as nvidia-smi numbers the GPUs) or UUID")) << bad << ": " << e;
  }
  EXPECT_TRUE(has(error_of([] { parse_gpu_entry("-1"); }), "--gpus -1: "));
}

TEST(Gpus, TheListRefusesEmptyEntriesAndRepeats) {
  EXPECT_EQ(parse_gpu_list("0,1"), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(parse_gpu_list(" 1 , 0 "), (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(parse_gpu_list("0," + kUuid1), (std::vector<std::string>{"0", kUuid1}));
  EXPECT_EQ(error_of([] { parse_gpu_list(""); }), "--gpus is empty: name at least one GPU (--gpus 0, or --gpus 0,1 for two)");
  EXPECT_TRUE(has(error_of([] { parse_gpu_list("  "); }), "--gpus is empty"));
  EXPECT_EQ(error_of([] { parse_gpu_list("0,,1"); }), "--gpus 0,,1: entry 2 is empty (a stray comma?)");
  EXPECT_TRUE(has(error_of([] { parse_gpu_list("0,"); }), "entry 2 is empty"));
  EXPECT_TRUE(has(error_of([] { parse_gpu_list(",0"); }), "entry 1 is empty"));
  EXPECT_EQ(error_of([] { parse_gpu_list("0,0"); }),
            "--gpus 0,0: GPU 0 is named twice; each GPU grades one submission at a time, so name it once");
  EXPECT_TRUE(has(error_of([] { parse_gpu_list("1,01"); }), "--gpus 1,01: GPU 1 is named twice"));
  EXPECT_TRUE(has(error_of([] { parse_gpu_list("GPU-AbCd,GPU-abcd"); }), "is named twice"));
  EXPECT_TRUE(has(error_of([] { parse_gpu_list("0,x"); }), "--gpus x: not a GPU index"));
}

TEST(Gpus, CudaVisibleDevicesAsCudaReadsIt) {
  EXPECT_EQ(parse_visible_devices("2,3"), (std::vector<std::string>{"2", "3"}));
  EXPECT_EQ(parse_visible_devices(kUuid1 + ",0"), (std::vector<std::string>{kUuid1, "0"}));
  EXPECT_TRUE(parse_visible_devices("").empty());
  EXPECT_TRUE(parse_visible_devices("-1").empty());
  EXPECT_TRUE(parse_visible_devices("NoDevFiles").empty());
  EXPECT_EQ(parse_visible_devices("0,-1,1"), (std::vector<std::string>{"0"}));  // CUDA stops at -1
}

TEST(Gpus, ReadsNvidiaSmisLists) {
  const auto gpus = parse_nvidia_smi_gpus(kTwoGpus);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].index, 1);
  EXPECT_EQ(gpus[1].uuid, kUuid1);
  EXPECT_EQ(gpus[1].name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(parse_nvidia_smi_gpus("3, GPU-ab, Tesla V100-SXM2-16GB, rev 2\n")[0].name, "Tesla V100-SXM2-16GB, rev 2");
  EXPECT_TRUE(parse_nvidia_smi_gpus("\n").empty());
  EXPECT_TRUE(has(error_of([] { parse_nvidia_smi_gpus("No devices were found\n"); }),
                  "cannot read nvidia-smi's list of GPUs: 'No devices were found'"));
  EXPECT_TRUE(has(error_of([] { parse_nvidia_smi_gpus("x, GPU-ab, H100\n"); }), "is not 'index, uuid, name'"));

  const auto migs = parse_nvidia_smi_migs(
      "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-11111111-2222-3333-4444-555555555555)\n"
      "  MIG 3g.40gb     Device  0: (UUID: MIG-aaaaaaaa-0000-0000-0000-000000000001)\n"
      "  MIG 1g.10gb     Device  1: (UUID: MIG-aaaaaaaa-0000-0000-0000-000000000002)\n"
      "GPU 1: NVIDIA A100-SXM4-80GB (UUID: GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee)\n"
      "  MIG 7g.80gb     Device  0: (UUID: MIG-bbbbbbbb-0000-0000-0000-000000000001)\n");
  ASSERT_EQ(migs.size(), 3u);
  EXPECT_EQ(migs[1].uuid, "MIG-aaaaaaaa-0000-0000-0000-000000000002");
  EXPECT_EQ(migs[1].name, "MIG 1g.10gb");
  EXPECT_EQ(migs[1].index, 0);
  EXPECT_EQ(migs[2].index, 1);
}

TEST(Gpus, TheBackendAPresetGradesOn) {
  const std::string presets = read_file(std::string(CONVLAB_SOURCE_DIR) + "/CMakePresets.json");
  EXPECT_EQ(grading_backend("cpu", {}, presets), "cpu");
  EXPECT_EQ(grading_backend("cpu-instructor", {}, presets), "cpu");
  EXPECT_EQ(grading_backend("ci", {}, presets), "cuda");      // no CONVLAB_BACKEND: the project's default
  EXPECT_EQ(grading_backend("default", {}, presets), "cuda");  // "auto" in the file; grade sets cuda
  EXPECT_EQ(grading_backend("ci", {"-DCONVLAB_BACKEND=cpu"}, presets), "cpu");
  EXPECT_EQ(grading_backend("cpu", {"-DCONVLAB_BACKEND:STRING=cuda"}, presets), "cuda");
  EXPECT_EQ(grading_backend("default", {"-DCONVLAB_BACKEND=cpu"}, presets), "cpu");
  EXPECT_EQ(grading_backend("ci", {"-DCONVLAB_BACKEND=cpu", "-DCONVLAB_BACKEND=cuda"}, presets), "cuda");  // the last
  EXPECT_EQ(grading_backend("ci", {"-DCONVLAB_BACKENDS=cpu"}, presets), "cuda");  // another variable
  // A user's presets, inheriting (CMake prefers the earlier of several parents).
  const std::string user = R"({"version": 6, "configurePresets": [
      {"name": "mine", "inherits": ["cpu", "ci"]},
      {"name": "theirs", "inherits": "mine", "cacheVariables": {"CONVLAB_BACKEND": {"type": "STRING", "value": "cuda"}}},
      {"name": "loop", "inherits": "loop"}]})";
  EXPECT_EQ(grading_backend("mine", {}, presets, user), "cpu");
  EXPECT_EQ(grading_backend("theirs", {}, presets, user), "cuda");
  EXPECT_EQ(grading_backend("loop", {}, presets, user), "cuda");  // no answer, no endless loop
  EXPECT_EQ(grading_backend("nosuch", {}, presets), "cuda");
  EXPECT_EQ(grading_backend("cpu", {}, "{ not json"), "cuda");
}

TEST(Gpus, TheCpuBackendUsesNoGpu) {
  GpuContext c = machine("0, " + kUuid0 + ", NVIDIA H100 80GB HBM3\n", std::string(""));
  c.on_gpu = false;
  std::vector<std::string> notes;
  const auto gpus = assign_gpus({"0", "5"}, c, &notes);  // GPU 5 does not exist, and need not
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].entry, "5");
  EXPECT_EQ(gpus[1].index, -1);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_TRUE(has(notes[0], "CPU backend")) << notes[0];
  EXPECT_TRUE(has(notes[0], "at once (2)")) << notes[0];
  EXPECT_EQ(assign_gpus({}, c, nullptr).at(0).entry, "0");
  // Its entries are still checked: a typo is a typo.
  EXPECT_TRUE(has(error_of([&] { assign_gpus({"0", "0"}, c, nullptr); }), "named twice"));
}

TEST(Gpus, AGpuNvidiaSmiDoesNotListIsRefused) {
  const GpuContext c = machine(kTwoGpus);
  std::vector<std::string> notes;
  const auto gpus = assign_gpus({"1", "0"}, c, &notes);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_TRUE(notes.empty());
  EXPECT_EQ(gpus[0].entry, "1");
  EXPECT_EQ(gpus[0].uuid, kUuid1);
  EXPECT_EQ(gpus[0].label(), "GPU 1 (NVIDIA H100 80GB HBM3, " + kUuid1 + ")");
  EXPECT_EQ(error_of([&] { assign_gpus({"0", "2"}, c, nullptr); }),
            "--gpus 2: this machine has 2 GPUs (0: NVIDIA H100 80GB HBM3, 1: NVIDIA H100 80GB HBM3); name a GPU by one "
            "of these indices, or by its UUID (nvidia-smi -L)");
  // By UUID, whole or a prefix; the message for an unknown one lists the UUIDs.
  const auto by_uuid = assign_gpus({"GPU-aaaa"}, c, nullptr);
  EXPECT_EQ(by_uuid.at(0).index, 1);
  EXPECT_EQ(by_uuid.at(0).label(), "GPU GPU-aaaa (nvidia-smi's 1, NVIDIA H100 80GB HBM3, " + kUuid1 + ")");
  EXPECT_EQ(assign_gpus({kUuid0}, c, nullptr).at(0).label(), "GPU " + kUuid0 + " (nvidia-smi's 0, NVIDIA H100 80GB HBM3)");
  const std::string e = error_of([&] { assign_gpus({"GPU-2222"}, c, nullptr); });
  EXPECT_TRUE(has(e, "--gpus GPU-2222: this machine has 2 GPUs (0: " + kUuid0 + ", 1: " + kUuid1 +
                         "); no GPU has that UUID"))
      << e;
  // One GPU by two names.
  EXPECT_TRUE(has(error_of([&] { assign_gpus({"0", "GPU-1111"}, c, nullptr); }),
                  "--gpus 0,GPU-1111: both are " + kUuid0 + " (NVIDIA H100 80GB HBM3)"));
  // A prefix that two GPUs share.
  const GpuContext twins = machine("0, GPU-ab01, H100\n1, GPU-ab02, H100\n");
  EXPECT_TRUE(has(error_of([&] { assign_gpus({"GPU-ab"}, twins, nullptr); }), "that UUID prefix matches 2 GPUs"));
  // A machine whose nvidia-smi lists none.
  EXPECT_TRUE(has(error_of([&] { assign_gpus({"0"}, machine(""), nullptr); }),
                  "--gpus 0: nvidia-smi lists no GPU on this machine; grade on a machine with a GPU, or on the CPU backend"));
}

TEST(Gpus, WithoutNvidiaSmiTheGpusAreNotCheckedAndTheLogSaysSo) {
  GpuContext c;
  c.smi_note = "nvidia-smi is not on PATH";
  std::vector<std::string> notes;
  const auto gpus = assign_gpus({"0", "7"}, c, &notes);
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[1].label(), "GPU 7");
  EXPECT_EQ(gpus[1].short_label(), "GPU 7");
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "GPUs: nvidia-smi is not on PATH, so the GPUs named by --gpus (0,7) were not checked: a GPU that "
                      "does not exist shows as GPU tests not run");
  EXPECT_EQ(assign_gpus({}, c, nullptr).at(0).entry, "0");  // the default, as before
}

TEST(Gpus, OnlyTheGpusOfCudaVisibleDevices) {
  // convlab runs with CUDA_VISIBLE_DEVICES=2,3 on a machine of four: those two are the run's.
  const GpuContext c = machine(four_gpus(), std::string("2,3"));
  std::vector<std::string> notes;
  const auto first = assign_gpus({}, c, &notes);  // no --gpus: the first of them
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].entry, "2");
  EXPECT_EQ(notes.at(0), "GPUs: no --gpus: grading on GPU 2, the first of CUDA_VISIBLE_DEVICES=2,3");
  EXPECT_EQ(assign_gpus({"3", "2"}, c, nullptr).size(), 2u);
  // An index is nvidia-smi's, never a place in CUDA_VISIBLE_DEVICES: 0 is a GPU the run was not given.
  EXPECT_EQ(error_of([&] { assign_gpus({"0", "1"}, c, nullptr); }),
            "--gpus 0: convlab runs with CUDA_VISIBLE_DEVICES=2,3, so this run may use only those GPUs (--gpus 2,3); "
            "--gpus names GPUs as nvidia-smi numbers them, not by their place in CUDA_VISIBLE_DEVICES");
  // The same GPU by UUID on either side, matched through nvidia-smi's list.
  const std::string uuid3 = "GPU-33333333-0000-0000-0000-000000000000";
  EXPECT_EQ(assign_gpus({uuid3}, c, nullptr).at(0).index, 3);
  EXPECT_EQ(assign_gpus({"3"}, machine(four_gpus(), uuid3), nullptr).at(0).uuid, uuid3);
  EXPECT_TRUE(has(error_of([&] { assign_gpus({"2"}, machine(four_gpus(), uuid3), nullptr); }),
                  "may use only that GPU (--gpus " + uuid3 + ")"));
  // Without nvidia-smi an index and a UUID cannot be matched: named as CUDA_VISIBLE_DEVICES names it, it passes.
  GpuContext blind;
  blind.visible = uuid3;
  blind.smi_note = "nvidia-smi is not on PATH";
  EXPECT_TRUE(has(error_of([&] { assign_gpus({"3"}, blind, nullptr); }), "may use only that GPU"));
  EXPECT_EQ(assign_gpus({uuid3}, blind, nullptr).size(), 1u);
  // A Slurm task: CUDA_VISIBLE_DEVICES=1 and --gpus 1 (slurm_jobs.cpp passes its entry through).
  EXPECT_EQ(assign_gpus({"1"}, machine(kTwoGpus, std::string("1")), nullptr).at(0).uuid, kUuid1);
  // A CUDA_VISIBLE_DEVICES that gives the run no GPU (Slurm's, for a task without one): no --gpus
  // grades on no GPU, whose graders see none; a GPU named is refused.
  for (const char* none : {"", "-1", "NoDevFiles"}) {
    std::vector<std::string> said;
    const auto gpus = assign_gpus({}, machine(kTwoGpus, std::string(none)), &said);
    ASSERT_EQ(gpus.size(), 1u);
    EXPECT_EQ(gpus[0].entry, "-1");  // what the graders get as their CUDA_VISIBLE_DEVICES: no GPU
    EXPECT_EQ(gpus[0].label(), "no GPU");
    EXPECT_EQ(said.at(0), "GPUs: CUDA_VISIBLE_DEVICES='" + std::string(none) +
                              "' gives this run no GPU: the graders see none, and their GPU tests are not run");
    EXPECT_EQ(error_of([&] { assign_gpus({"0"}, machine(kTwoGpus, std::string(none)), nullptr); }),
              "--gpus 0: convlab runs with CUDA_VISIBLE_DEVICES='" + std::string(none) +
                  "', which gives this run no GPU; unset it to grade on this machine's GPUs, or leave out --gpus to "
                  "grade without a GPU (the GPU graders are then not run)")
        << none;
  }
}

TEST(Gpus, MigInstances) {
  GpuContext c = machine(kTwoGpus);
  c.migs = parse_nvidia_smi_migs(
      "GPU 1: NVIDIA H100 80GB HBM3 (UUID: " + kUuid1 + ")\n"
      "  MIG 1g.10gb     Device  0: (UUID: MIG-bbbbbbbb-0000-0000-0000-000000000001)\n");
  const auto gpus = assign_gpus({"MIG-bbbbbbbb-0000-0000-0000-000000000001", "0"}, c, nullptr);
  EXPECT_EQ(gpus.at(0).index, 1);
  EXPECT_EQ(gpus.at(0).name, "MIG 1g.10gb");
  EXPECT_TRUE(has(error_of([&] { assign_gpus({"MIG-cccc"}, c, nullptr); }),
                  "--gpus MIG-cccc: no MIG instance of this machine has that UUID (nvidia-smi -L lists "
                  "MIG-bbbbbbbb-0000-0000-0000-000000000001 on GPU 1)"));
}

TEST(Gpus, FormatsAUuidAsNvidiaSmiDoes) {
  const unsigned char bytes[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 0xfe, 0xff};
  EXPECT_EQ(format_uuid(bytes), "GPU-00010203-0405-0607-0809-0a0b0c0dfeff");
  EXPECT_EQ(format_uuid(bytes, "MIG-"), "MIG-00010203-0405-0607-0809-0a0b0c0dfeff");
}

nlohmann::json probe_seeing(const std::vector<std::string>& uuids) {
  nlohmann::json p = {{"gpu", "?"}, {"cuda_devices", nlohmann::json::array()}};
  for (const auto& u : uuids) p["cuda_devices"].push_back({{"uuid", u}, {"name", "NVIDIA H100 80GB HBM3"}});
  if (uuids.empty()) p["cuda_devices_reason"] = "no CUDA device visible";
  return p;
}

TEST(Gpus, TheGradersSeeExactlyTheGpuTheyWereGiven) {
  const GpuContext c = machine(kTwoGpus);
  auto gpus = assign_gpus({"0", "1"}, c, nullptr);
  // As expected: nothing to say, the UUID is the one seen.
  EXPECT_EQ(confirm_gpu(gpus[0], probe_seeing({kUuid0}), c), "");
  EXPECT_EQ(gpus[0].uuid, kUuid0);
  // More than one GPU in the graders' environment: refused.
  GpuAssigned g = gpus[1];
  EXPECT_EQ(error_of([&] { confirm_gpu(g, probe_seeing({kUuid0, kUuid1}), c); }),
            "GPU 1 (NVIDIA H100 80GB HBM3, " + kUuid1 +
                "): CUDA_VISIBLE_DEVICES=1 shows the graders 2 GPUs, not one; name the GPU by its UUID (nvidia-smi -L)");
  // None: said, not refused (the GPU graders then report "not run", as on a machine without a GPU).
  g = gpus[1];
  EXPECT_EQ(confirm_gpu(g, probe_seeing({}), c),
            "GPU 1 (NVIDIA H100 80GB HBM3, " + kUuid1 +
                "): the graders' environment shows no GPU (no CUDA device visible), so their GPU tests will not run");
  // Another GPU than nvidia-smi calls so (a cgroup or container numbering its GPUs its own way):
  // the records follow the GPU the graders saw.
  g = gpus[0];
  const std::string note = confirm_gpu(g, probe_seeing({kUuid1}), c);
  EXPECT_TRUE(has(note, "CUDA_VISIBLE_DEVICES=0 shows the graders " + kUuid1 + ", not " + kUuid0)) << note;
  EXPECT_EQ(g.uuid, kUuid1);
  EXPECT_EQ(g.index, 1);
  EXPECT_EQ(g.label(), "GPU 0 (nvidia-smi's 1, NVIDIA H100 80GB HBM3, " + kUuid1 + ")");
  // ... and two entries that show the graders one GPU are refused.
  gpus[1].uuid = kUuid1;
  EXPECT_TRUE(has(error_of([&] { refuse_shared_gpus({g, gpus[1]}); }), "--gpus 0,1: both are " + kUuid1));
  // A GPU nvidia-smi does not list; a probe that could not run (no cuda_devices) says nothing.
  g = gpus[0];
  EXPECT_TRUE(has(confirm_gpu(g, probe_seeing({"GPU-99999999-0000-0000-0000-000000000000"}), c),
                  "which nvidia-smi does not list"));
  g = gpus[0];
  EXPECT_EQ(confirm_gpu(g, {{"available", false}, {"summary", "cannot describe the GPU"}}, c), "");
  EXPECT_EQ(g.uuid, kUuid0);
}

// read_gpu_context() runs nvidia-smi from PATH: here a stub that prints two GPUs.
TEST(Gpus, ReadsTheContextFromNvidiaSmiOnPath) {
  const std::string dir =
      std::filesystem::temp_directory_path().string() + "/convlab-test-gpus-" + std::to_string(::getpid());
  std::filesystem::remove_all(dir);
  make_dirs(dir);
  write_file_atomic(dir + "/nvidia-smi", "#!/bin/sh\nprintf '" + kTwoGpus.substr(0, kTwoGpus.size() - 1) + "\\n'\n");
  ::chmod((dir + "/nvidia-smi").c_str(), 0755);
  const char* old_path = std::getenv("PATH");
  const std::string saved = old_path ? old_path : "/usr/bin:/bin";
  const char* old_visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::optional<std::string> saved_visible = old_visible ? std::optional<std::string>(old_visible) : std::nullopt;
  ::setenv("PATH", (dir + ":" + saved).c_str(), 1);
  ::setenv("CUDA_VISIBLE_DEVICES", "1", 1);
  const GpuContext c = read_gpu_context(true, {});
  const GpuContext cpu = read_gpu_context(false, {});
  ::setenv("PATH", "/nonexistent", 1);
  const GpuContext none = read_gpu_context(true, {});
  ::setenv("PATH", saved.c_str(), 1);
  if (saved_visible) ::setenv("CUDA_VISIBLE_DEVICES", saved_visible->c_str(), 1);
  else ::unsetenv("CUDA_VISIBLE_DEVICES");
  std::filesystem::remove_all(dir);

  ASSERT_TRUE(c.gpus.has_value()) << c.smi_note;
  EXPECT_EQ(c.gpus->size(), 2u);
  EXPECT_EQ(c.visible.value_or("?"), "1");
  EXPECT_FALSE(cpu.gpus.has_value());  // the CPU backend asks nvidia-smi nothing
  EXPECT_FALSE(none.gpus.has_value());
  EXPECT_EQ(none.smi_note, "nvidia-smi is not on PATH");
}

}  // namespace
}  // namespace convlab::cli
