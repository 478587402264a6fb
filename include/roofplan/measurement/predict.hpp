// roofplan/measurement/predict.hpp — the engine's time for a measured case, as calibration fits it and
// validation compares it.  Everything goes through the roofline module (engine/roofline.hpp):
//   GEMM       max(2·M·N·K·count · slowdown / (peak · e_class), bytes / (bandwidth · e_memory)) + launch
//              (slowdown: the engine's wave quantization, Roofline::gemm_slowdown)
//   streaming  bytes / (bandwidth · e_memory) + launch
//   conv       the pass's time in a one-layer model holding that convolution, trained at the sample's batch
#pragma once

#include <roofplan/calibration/profile.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/engine/roofline.hpp>
#include <roofplan/layers/conv.hpp>
#include <roofplan/measurement/samples.hpp>

#include <cstddef>

namespace roofplan {

/// The engine's time (seconds) for `count` GEMMs of m×n×k in math class `math` that move `bytes`.
inline double predict_gemm_seconds(MathClass math, double m, double n, double k, double count, double bytes,
                                   const Device& device, const EfficiencyProfile& profile) {
    if (device.peak[math] <= 0)
        detail::fail("device '", device.id.view(), "' has no ", to_string(math), " peak");
    KernelWork work;
    work.macs = m * n * k * count;
    work.bytes = bytes;
    work.m = m;
    work.n = n;
    work.k = k;
    work.count = count;
    return Roofline(device, profile, math).time(work).total_s;
}

/// The engine's time for a GEMM sample.
inline double predicted_seconds(const GemmSample& g, const Device& device, const EfficiencyProfile& profile) {
    return predict_gemm_seconds(gemm_math_class(g.precision), g.m, g.n, g.k, g.count, g.bytes, device, profile);
}

/// The engine's time for a streaming kernel that moves `bytes`.
inline double predict_stream_seconds(double bytes, const Device& device, const EfficiencyProfile& profile) {
    KernelWork work;
    work.bytes = bytes;
    return Roofline(device, profile, MathClass::fp32).time(work).total_s;
}

/// The engine's time for one pass of a convolution sample: a one-layer model holding that convolution (no bias:
/// cuDNN's call has none), trained at the sample's batch.
inline double predicted_seconds(const ConvSample& c, const Device& device, const EfficiencyProfile& profile) {
    layers::Conv2D::Config config;
    config.in_channels = c.c;
    config.in_height = c.h;
    config.in_width = c.w;
    config.out_channels = c.k;
    config.kernel = Extent2{c.r, c.s};
    config.stride = c.stride;
    config.padding = c.pad;
    config.dilation = c.dilation;
    config.bias = false;
    PredictRequest request;
    request.batch = c.n;
    request.precision = training_precision(c.precision);
    request.mode = Mode::train;
    const auto layer = predict_layer(layers::Conv2D{config}, device, profile, request);
    if (!layer) detail::fail(c.where, ": the engine predicts no work for this convolution");
    return layer->pass[c.pass].value();
}

}  // namespace roofplan
