/// @file cuda_pipeline.h
/// @brief `#include <cuda_pipeline.h>` on the CPU backend: the asynchronous copy primitives
/// (`__pipeline_memcpy_async`, `__pipeline_commit`, `__pipeline_wait_prior`), emulated
/// (convlab_cpu/pipeline.hpp). The C++ classes of CUDA's header (`nvcuda::experimental::pipeline`)
/// are not offered.
#pragma once

#include "convlab_cpu/pipeline.hpp"
