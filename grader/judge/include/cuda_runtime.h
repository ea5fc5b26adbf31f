// The judge's CUDA runtime header: see cuda_runtime_api.h next to it.
#pragma once
#include "cuda_runtime_api.h"
