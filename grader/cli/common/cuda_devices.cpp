// The GPUs the NVIDIA driver shows this process. See cuda_devices.hpp.
#include "common/cuda_devices.hpp"

#include <cstdio>

#include <dlfcn.h>

namespace convlab::cli {

std::string format_uuid(const unsigned char (&b)[16], const std::string& prefix) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
                b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
  return prefix + buf;
}

std::vector<GpuListed> cuda_devices(std::string* reason) {
  std::vector<GpuListed> out;
  const auto fail = [&](const std::string& why) {
    if (reason) *reason = why;
    return std::vector<GpuListed>{};
  };
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail("no NVIDIA driver (libcuda.so.1 cannot be loaded)");
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using Get = int (*)(int*, int);
  using Name = int (*)(char*, int, int);
  using Uuid = int (*)(unsigned char*, int);  // CUuuid is 16 bytes
  const auto init = reinterpret_cast<Init>(::dlsym(lib, "cuInit"));
  const auto count = reinterpret_cast<Count>(::dlsym(lib, "cuDeviceGetCount"));
  const auto get = reinterpret_cast<Get>(::dlsym(lib, "cuDeviceGet"));
  const auto name = reinterpret_cast<Name>(::dlsym(lib, "cuDeviceGetName"));
  // _v2 gives a MIG instance's own UUID, where the first gives its GPU's (CUDA 11.4 on).
  auto uuid = reinterpret_cast<Uuid>(::dlsym(lib, "cuDeviceGetUuid_v2"));
  if (!uuid) uuid = reinterpret_cast<Uuid>(::dlsym(lib, "cuDeviceGetUuid"));
  if (!init || !count || !get || !name || !uuid) return fail("the NVIDIA driver (libcuda.so.1) lacks cuDeviceGetUuid");
  int n = 0;
  const int rc = init(0);
  if (rc == 100) return fail("no CUDA device visible");  // CUDA_ERROR_NO_DEVICE
  if (rc != 0 || count(&n) != 0) return fail("the NVIDIA driver does not start (cuInit error " + std::to_string(rc) + ")");
  if (n == 0) return fail("no CUDA device visible");
  for (int i = 0; i < n; ++i) {
    GpuListed g;
    g.index = i;
    int dev = 0;
    char text[256] = {};
    unsigned char bytes[16] = {};
    if (get(&dev, i) != 0) continue;
    if (name(text, sizeof text - 1, dev) == 0) g.name = text;
    if (uuid(bytes, dev) == 0) g.uuid = format_uuid(bytes);
    out.push_back(g);
  }
  return out;
}

}  // namespace convlab::cli
