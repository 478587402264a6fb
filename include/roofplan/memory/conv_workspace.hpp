// roofplan/memory/conv_workspace.hpp — the workspace cuDNN takes for a convolution, as measured.
//
// With cudnn.benchmark off, PyTorch asks cuDNN's heuristics for an engine per convolution and allocates the
// engine's workspace from its caching allocator for the call (aten/src/ATen/native/cudnn/Conv_v8.cpp,
// try_plans).  The choice is cuDNN's and not a function of the shape that roofplan can write down: an FP32 3x3
// convolution of 256 channels at 56x56 runs an implicit GEMM without workspace at batch 8 and 128 and an FFT that
// takes 2.3 GiB at batch 32; TF32 on NCHW tensors converts both tensors to NHWC; BF16 channels-last backward
// passes take up to ~130 MiB.  So the memory model reads the workspaces of the convolutions it has measured
// (validation/memory/conv_workspace.py, one operator at a time) from a table per architecture, linear between the
// measured batches and proportional to the batch outside them; a convolution it has not measured keeps the rules
// of memory/rules.hpp (TF32's layout copies; none otherwise).
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/layers/detail_conv.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string_view>

namespace roofplan::memory {

/// How a convolution runs, as far as cuDNN's choice goes.
enum class ConvMode : std::uint8_t {
    fp32,  ///< FP32 NCHW tensors, TF32 off
    tf32,  ///< FP32 NCHW tensors, TF32 on
    half,  ///< FP16/BF16 channels-last tensors (autocast's convolutions on a channels-last model)
};

/// Bytes measured at one batch.
struct BatchBytes {
    std::int64_t batch = 0;
    std::int64_t bytes = 0;
};

/// A size measured at a few batches: linear between them, proportional to the batch below the first and above the
/// last (a workspace scales with the tensors it transforms).
struct MeasuredCurve {
    const BatchBytes* points = nullptr;
    std::uint8_t count = 0;
    [[nodiscard]] constexpr std::int64_t at(std::int64_t batch) const {
        const BatchBytes& first = points[0];
        const BatchBytes& last = points[count - 1];
        if (batch <= first.batch) return detail::mul(first.bytes, batch, "workspace bytes") / first.batch;
        if (batch >= last.batch) return detail::mul(last.bytes, batch, "workspace bytes") / last.batch;
        std::size_t i = 1;
        while (points[i].batch < batch) ++i;
        const BatchBytes& a = points[i - 1];
        const BatchBytes& b = points[i];
        return a.bytes + (b.bytes - a.bytes) * (batch - a.batch) / (b.batch - a.batch);
    }
    /// The largest bytes per sample outside the points (a bound for overflow checks).
    [[nodiscard]] constexpr std::int64_t slope() const {
        const std::int64_t a = (points[0].bytes + points[0].batch - 1) / points[0].batch;
        const std::int64_t b = (points[count - 1].bytes + points[count - 1].batch - 1) / points[count - 1].batch;
        return a > b ? a : b;
    }
};

/// A convolution's geometry as the table keys it.
struct ConvKey {
    std::int64_t in_channels = 0, out_channels = 0, kernel_h = 0, kernel_w = 0, stride_h = 0, stride_w = 0,
                 pad_h = 0, pad_w = 0, dilation_h = 0, dilation_w = 0, groups = 0, in_h = 0, in_w = 0;
    bool bias = false;
    ConvMode mode = ConvMode::fp32;
    constexpr bool operator==(const ConvKey&) const = default;
    static constexpr ConvKey of(const layers::Conv2DConfig& c, ConvMode mode) {
        return {c.in_channels, c.out_channels, c.kernel.h, c.kernel.w, c.stride.h, c.stride.w, c.padding.h,
                c.padding.w, c.dilation.h, c.dilation.w, c.groups, c.in_height, c.in_width, c.bias, mode};
    }
};

/// One measured convolution: its workspace forward and backward at up to 8 batches (ascending).
struct ConvWorkspace {
    ConvKey key;
    std::uint8_t count = 0;
    std::array<BatchBytes, 8> forward{}, backward{};
    [[nodiscard]] constexpr MeasuredCurve forward_curve() const { return {forward.data(), count}; }
    [[nodiscard]] constexpr MeasuredCurve backward_curve() const { return {backward.data(), count}; }
};

/// The measured convolutions of one architecture, with where they come from.
struct ConvWorkspaceTable {
    std::string_view source;
    std::span<const ConvWorkspace> entries;
    /// The entry for a geometry and mode, or nullptr.
    [[nodiscard]] constexpr const ConvWorkspace* find(const ConvKey& key) const {
        for (const ConvWorkspace& e : entries)
            if (e.key == key) return &e;
        return nullptr;
    }
};

}  // namespace roofplan::memory
