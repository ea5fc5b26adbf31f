/// @file mma.h
/// @brief `#include <mma.h>` on the CPU backend: CUDA's warp matrix API, emulated
/// (convlab_cpu/wmma.hpp: the TF32 fragments of shape m16n16k8).
#pragma once

#include "convlab_cpu/wmma.hpp"
