// Why no GPU can be used: each case names what is missing, never the CUDA runtime's
// misleading "driver version is insufficient" when there is no driver at all.
#include "convlab/gpu_reason.hpp"

#include <gtest/gtest.h>

namespace convlab {
namespace {

namespace e = cuda_error;

TEST(GpuReason, VersionsAsPeopleWriteThem) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12040), "12.4");
  EXPECT_EQ(cuda_version_text(11080), "11.8");
  EXPECT_EQ(cuda_version_text(0), "none");
}

TEST(GpuReason, NoDriverIsNotCalledAnOldDriver) {
  // What cudaGetDeviceCount says on a machine with the toolkit and no driver.
  const std::string r = describe_cuda_unavailable(e::kInsufficientDriver, 0, 0, 13000);
  EXPECT_NE(r.find("no NVIDIA driver is installed"), std::string::npos) << r;
  EXPECT_EQ(r.find("older"), std::string::npos) << r;
  EXPECT_EQ(r.find("insufficient"), std::string::npos) << r;
  const std::string stub = describe_cuda_unavailable(e::kStubLibrary, 0, 13000, 13000);
  EXPECT_NE(stub.find("no NVIDIA driver is installed"), std::string::npos) << stub;
  EXPECT_NE(stub.find("stub library"), std::string::npos) << stub;
}

TEST(GpuReason, OldDriverNamesBothVersions) {
  const std::string r = describe_cuda_unavailable(e::kInsufficientDriver, 0, 12020, 13000);
  EXPECT_NE(r.find("older than this build's CUDA runtime (CUDA 13.0)"), std::string::npos) << r;
  EXPECT_NE(r.find("supports up to CUDA 12.2"), std::string::npos) << r;
  EXPECT_NE(r.find("no newer than 12.2"), std::string::npos) << r;
  EXPECT_NE(describe_cuda_unavailable(e::kCallRequiresNewerDriver, 0, 12020, 12080).find("older"),
            std::string::npos);
  // An "insufficient driver" that is not older: no false claim about versions.
  const std::string odd = describe_cuda_unavailable(e::kInsufficientDriver, 0, 13000, 12080);
  EXPECT_EQ(odd.find("older"), std::string::npos) << odd;
  EXPECT_NE(odd.find("refuses"), std::string::npos) << odd;
}

TEST(GpuReason, DriverWithoutGpu) {
  const std::string r = describe_cuda_unavailable(e::kNoDevice, 0, 13000, 13000);
  EXPECT_NE(r.find("no NVIDIA GPU on this machine"), std::string::npos) << r;
  EXPECT_NE(r.find("driver (it supports up to CUDA 13.0) is installed"), std::string::npos) << r;
  // cudaSuccess with a count of 0 means the same.
  EXPECT_EQ(describe_cuda_unavailable(e::kSuccess, 0, 13000, 13000), r);
}

TEST(GpuReason, HiddenByCudaVisibleDevices) {
  const std::string none = describe_cuda_unavailable(e::kNoDevice, 0, 13000, 13000, "");
  EXPECT_NE(none.find("CUDA_VISIBLE_DEVICES='' hides every GPU"), std::string::npos) << none;
  const std::string wrong = describe_cuda_unavailable(e::kNoDevice, 0, 13000, 13000, "7");
  EXPECT_NE(wrong.find("CUDA_VISIBLE_DEVICES='7' hides the GPUs"), std::string::npos) << wrong;
}

TEST(GpuReason, OtherFailuresSayWhatToLookAt) {
  EXPECT_NE(describe_cuda_unavailable(e::kSystemDriverMismatch, 0, 13000, 13000).find("kernel module"),
            std::string::npos);
  EXPECT_NE(describe_cuda_unavailable(e::kDevicesUnavailable, 0, 13000, 13000).find("busy"), std::string::npos);
  EXPECT_NE(describe_cuda_unavailable(e::kSystemNotReady, 0, 13000, 13000).find("fabric manager"),
            std::string::npos);
  EXPECT_NE(describe_cuda_unavailable(e::kInitializationError, 0, 13000, 13000).find("failed to start"),
            std::string::npos);
  EXPECT_NE(describe_cuda_unavailable(e::kCompatNotSupportedOnDevice, 0, 13000, 13000).find("forward-compat"),
            std::string::npos);
  const std::string unknown = describe_cuda_unavailable(999, 0, 13000, 13000);
  EXPECT_NE(unknown.find("CUDA error 999"), std::string::npos) << unknown;
}

}  // namespace
}  // namespace convlab
