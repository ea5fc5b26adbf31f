/// @file baseline_codecs.hpp
/// @brief How the arguments of the grader-owned baselines cross to the runner: field by field,
/// so that each pointer is checked as a device address and each host filter travels by value
/// (see convlab/remote_codec.hpp for the rules).
#pragma once

#include "convlab/conv_testbed.hpp"
#include "convlab/remote_codec.hpp"
#include "convlab/stencil_baselines.hpp"

namespace convlab::remote {

template <>
struct Codec<Conv1dArgs> {
  static void encode(wire::Writer& w, const Conv1dArgs& a) {
    const std::size_t taps = a.radius >= 0 ? std::size_t(2 * a.radius + 1) : 0;
    encode_arg(w, a.d_in);
    encode_arg(w, a.d_filter);
    encode_arg(w, host_array(a.h_filter, taps));
    encode_arg(w, a.d_out);
    encode_arg(w, a.n);
    encode_arg(w, a.radius);
    encode_arg(w, a.stream);
  }
  static Conv1dArgs decode(wire::Reader& r, ArgContext& c) {
    Conv1dArgs a;
    a.d_in = Codec<const float*>::decode(r, c);
    a.d_filter = Codec<const float*>::decode(r, c);
    a.h_filter = Codec<const float*>::decode(r, c);
    a.d_out = Codec<float*>::decode(r, c);
    a.n = Codec<int>::decode(r, c);
    a.radius = Codec<int>::decode(r, c);
    a.stream = Codec<cudaStream_t>::decode(r, c);
    return a;
  }
};

template <>
struct Codec<Conv2dArgs> {
  static void encode(wire::Writer& w, const Conv2dArgs& a) {
    const std::size_t taps = a.radius >= 0 ? std::size_t(2 * a.radius + 1) : 0;
    encode_arg(w, a.d_in);
    encode_arg(w, a.d_filter);
    encode_arg(w, host_array(a.h_filter, taps * taps));
    encode_arg(w, a.d_out);
    encode_arg(w, a.width);
    encode_arg(w, a.height);
    encode_arg(w, a.radius);
    encode_arg(w, a.stream);
    encode_arg(w, host_array(a.h_row_filter, taps));
    encode_arg(w, host_array(a.h_col_filter, taps));
  }
  static Conv2dArgs decode(wire::Reader& r, ArgContext& c) {
    Conv2dArgs a;
    a.d_in = Codec<const float*>::decode(r, c);
    a.d_filter = Codec<const float*>::decode(r, c);
    a.h_filter = Codec<const float*>::decode(r, c);
    a.d_out = Codec<float*>::decode(r, c);
    a.width = Codec<int>::decode(r, c);
    a.height = Codec<int>::decode(r, c);
    a.radius = Codec<int>::decode(r, c);
    a.stream = Codec<cudaStream_t>::decode(r, c);
    a.h_row_filter = Codec<const float*>::decode(r, c);
    a.h_col_filter = Codec<const float*>::decode(r, c);
    return a;
  }
};

template <>
struct Codec<baseline::StencilArgs> {
  static void encode(wire::Writer& w, const baseline::StencilArgs& a) {
    encode_arg(w, a.d_in);
    encode_arg(w, a.d_out);
    for (int v : {a.nx, a.ny, a.nz, a.boundary}) encode_arg(w, v);
    for (float v : {a.wall, a.c0, a.cx, a.cy, a.cz}) encode_arg(w, v);
    encode_arg(w, a.stream);
  }
  static baseline::StencilArgs decode(wire::Reader& r, ArgContext& c) {
    baseline::StencilArgs a;
    a.d_in = Codec<const float*>::decode(r, c);
    a.d_out = Codec<float*>::decode(r, c);
    for (int* v : {&a.nx, &a.ny, &a.nz, &a.boundary}) *v = Codec<int>::decode(r, c);
    for (float* v : {&a.wall, &a.c0, &a.cx, &a.cy, &a.cz}) *v = Codec<float>::decode(r, c);
    a.stream = Codec<cudaStream_t>::decode(r, c);
    return a;
  }
};

}  // namespace convlab::remote
