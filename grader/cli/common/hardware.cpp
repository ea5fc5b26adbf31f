// The GPU a run used. See hardware.hpp.
#include "common/hardware.hpp"

#include "common/cuda_devices.hpp"
#include "common/sandbox.hpp"
#include "common/util.hpp"

#include <convlab/gpu.hpp>
#include <convlab/testbed.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <thread>

namespace convlab::cli {

namespace {

// The CPU this runs on, as /proc/cpuinfo names it ("" when it cannot be read).
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (starts_with(line, "model name")) return trim(line.substr(line.find(':') + 1));
  return "";
}

}  // namespace

int hardware_main(bool as_json) {
  nlohmann::json j;
  // The GPUs this process can see, by UUID, asked of the driver: convlab grade runs this in the
  // graders' environment to check that they see exactly the GPU they were given (gpus.hpp).
  std::string why_none;
  j["cuda_devices"] = nlohmann::json::array();
  for (const auto& d : cuda_devices(&why_none)) j["cuda_devices"].push_back({{"uuid", d.uuid}, {"name", d.name}});
  if (j["cuda_devices"].empty()) j["cuda_devices_reason"] = why_none;
  if (kCpuBackend) {
    // The CPU backend has no GPU to describe: no device figures (they would all read 0).
    const std::string model = cpu_model();
    j["available"] = false;
    j["backend"] = "cpu";
    j["reason"] = "this convlab was built with the CPU backend: kernels run on the CPU, nothing is timed";
    j["summary"] = "CPU backend (no GPU timing): " + (model.empty() ? std::string("this CPU") : model) + ", " +
                   std::to_string(std::thread::hardware_concurrency()) + " hardware threads";
    if (as_json) std::cout << j.dump(2) << "\n";
    else std::cout << j["summary"].get<std::string>() << "\n";
    return 1;
  }
  std::string reason;
  j["available"] = gpu_available(&reason);
  if (!j["available"].get<bool>()) {
    j["reason"] = reason;
    j["summary"] = "no GPU: " + reason;
  } else {
    const DeviceInfo d = device_info();
    j["name"] = d.name;
    j["compute_capability"] = std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor);
    j["sms"] = d.sm_count;
    j["sm_clock_mhz"] = d.sm_clock_mhz;
    j["memory_clock_mhz"] = d.mem_clock_mhz;
    j["driver_version"] = d.driver_version;
    j["runtime_version"] = d.runtime_version;
    j["memory_bytes"] = d.global_bytes;
    const double copy = measure_copy_bandwidth_gbs(std::size_t(1) << 29);
    j["copy_bandwidth_gbs"] = copy;
    char buf[64];
    std::snprintf(buf, sizeof buf, "; copy bandwidth %.0f GB/s (measured now)", copy);
    j["summary"] = d.summary() + buf;
  }
  if (as_json) std::cout << j.dump(2) << "\n";
  else std::cout << j["summary"].get<std::string>() << "\n";
  return j["available"].get<bool>() ? 0 : 1;
}

nlohmann::json probe_hardware(const std::string& gpu) {
  RunSpec s;
  s.argv = {self_exe(), "hardware", "--json"};
  s.limits.timeout_s = 120;
  s.env = {"PATH=/usr/local/cuda/bin:/usr/bin:/bin", "CUDA_DEVICE_ORDER=PCI_BUS_ID", "CUDA_VISIBLE_DEVICES=" + gpu};
  if (const char* ld = std::getenv("LD_LIBRARY_PATH")) s.env.push_back(std::string("LD_LIBRARY_PATH=") + ld);
  const RunResult r = run_sandboxed(s);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(r.output.substr(r.output.find('{')));
  } catch (const std::exception&) {
    j = {{"available", false}, {"summary", "cannot describe the GPU: " + r.describe()}};
  }
  j["gpu"] = gpu;
  if (!which("nvidia-smi").empty()) {
    const RunResult smi = run_tool({"nvidia-smi", "-i", gpu,
                                    "--query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,"
                                    "temperature.gpu",
                                    "--format=csv"},
                                   "", 30);
    if (smi.ok()) j["nvidia_smi"] = trim(smi.output);
  }
  return j;
}

}  // namespace convlab::cli
