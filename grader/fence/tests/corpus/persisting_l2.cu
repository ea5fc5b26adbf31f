// A persisting L2 access-policy window: the data stays cached across the graders' flush
// (measured in issue 12: a 25 MB read ran 1.46x faster after the flush).
// fence-backends: cuda
// fence-expect: persisting_l2\.cu: calls cudaStreamSetAttribute, which your kernels' file may not use \(it changes a device-wide setting or the L2 cache's policy
// fence-expect: persisting_l2\.cu: calls cudaDeviceSetLimit, which
#include <cuda_runtime.h>

namespace convlab::lab01 {
void keep_in_l2(const float* d_in, size_t bytes, cudaStream_t stream) {
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes);
  cudaStreamAttrValue attr = {};
  attr.accessPolicyWindow.base_ptr = const_cast<float*>(d_in);
  attr.accessPolicyWindow.num_bytes = bytes;
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr);
}
}  // namespace convlab::lab01
