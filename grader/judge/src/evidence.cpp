// The rules every correctness test applies to what the runner saw. See convlab/evidence.hpp.
#include "convlab/evidence.hpp"

#include <cstdio>

namespace convlab {

namespace {
// A launcher may read back a few values (a residual, a flag); a computation on the host needs the
// data itself. Copies to the host beyond this many bytes in one call are refused.
constexpr std::uint64_t kHostReadAllowance = 64 * 1024;
}  // namespace

std::string not_computed_on_device(const std::vector<remote::CallRecord>& calls) {
  std::string out;
  std::size_t launches = 0;
  bool recorded = !calls.empty();
  for (const auto& c : calls) {
    const wire::Evidence& e = c.evidence;
    recorded = recorded && e.recorded;
    launches += e.launches.size();
    std::uint64_t to_host = 0;
    for (const auto& t : e.transfers) {
      const bool into_output = t.dst_arg >= 0 && std::size_t(t.dst_arg) < e.writable_args.size() &&
                               e.writable_args[std::size_t(t.dst_arg)];
      if (t.kind == wire::Transfer::Kind::to_device && into_output && out.find("from the host into") == std::string::npos)
        out += c.entry + " copied data from the host into its output (cudaMemcpy host to device): the output must "
               "be computed by a kernel, not on the host.\n";
      if (t.kind == wire::Transfer::Kind::to_host) to_host += t.bytes;
    }
    if (to_host > kHostReadAllowance) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "%s copied %.3g MB from the device to the host: the computation must happen in kernels on the "
                    "device, not on the host.\n",
                    c.entry.c_str(), to_host / 1e6);
      out += buf;
    }
    if (e.host_device_stores)
      out += c.entry + " wrote to device memory from host code (" + std::to_string(e.host_device_stores) +
             " stores): on a GPU this crashes; compute the output in a kernel.\n";
    if (e.stray_launches && out.find("another thread") == std::string::npos)
      out += "work was started from another thread (" + std::to_string(e.stray_launches) +
             " launches or copies): the graders accept only what the launcher itself does before it returns.\n";
  }
  if (recorded && launches == 0)
    out = "no kernel ran: the launcher returned without launching a kernel, but the output must be computed by a "
          "kernel on the device.\n" + out;
  return out;
}

}  // namespace convlab
