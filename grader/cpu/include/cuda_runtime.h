// The CPU backend's stand-in for CUDA's header: see convlab_cpu/runtime.hpp.
#pragma once
#include "convlab_cpu/launch.hpp"
#include "convlab_cpu/runtime.hpp"
