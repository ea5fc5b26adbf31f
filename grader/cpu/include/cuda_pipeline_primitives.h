/// @file cuda_pipeline_primitives.h
/// @brief `#include <cuda_pipeline_primitives.h>` on the CPU backend: CUDA's asynchronous copy
/// primitives, emulated (convlab_cpu/pipeline.hpp).
#pragma once

#include "convlab_cpu/pipeline.hpp"
