// roofplan/work.hpp — what one pass of one layer asks of a processor.  This is the seam between "what the
// network is" (layers, models) and "how fast a device does it" (the roofline engine).
#pragma once

#include <roofplan/precision.hpp>
#include <roofplan/units.hpp>

#include <cstdint>
#include <string_view>

namespace roofplan {

/// The passes of training.  Inference runs only `forward`.
enum class Pass { forward, backward_data, backward_weight };

constexpr std::string_view to_string(Pass p) {
    switch (p) {
        case Pass::forward: return "forward";
        case Pass::backward_data: return "backward-data";
        case Pass::backward_weight: return "backward-weight";
    }
    return "unknown";
}

/// The GEMM a matrix-like pass maps to: `count` independent (M x K)·(K x N) products (groups, heads).
/// All zero when the pass is not GEMM-like.
struct GemmShape {
    std::int64_t m = 0;
    std::int64_t n = 0;
    std::int64_t k = 0;
    std::int64_t count = 0;
    constexpr bool operator==(const GemmShape&) const = default;
    [[nodiscard]] constexpr bool empty() const { return count == 0; }
};

/// Element-level cost of one pass over a whole batch, as a layer reports it.  `macs` are matrix
/// multiply-accumulates (tensor-core eligible); `vector_flops` is the remaining arithmetic (bias adds,
/// activations, normalisation, softmax, pooling).  Element counts are converted to bytes by `to_work`.
struct PassCost {
    mac_count macs{};
    flop_count vector_flops{};
    std::int64_t weight_elements_read = 0;       ///< parameters read
    std::int64_t activation_elements_read = 0;   ///< inputs (or output gradients) read
    std::int64_t activation_elements_written = 0;///< outputs (or input gradients) written
    std::int64_t gradient_elements_written = 0;  ///< weight gradients written (backward-weight)
    GemmShape gemm{};

    [[nodiscard]] constexpr flop_count flops() const { return units::to_flops(macs) + vector_flops; }

    /// Sums costs (the GEMM shape, which does not add up, is left as it was).
    constexpr PassCost& operator+=(const PassCost& other) {
        macs += other.macs;
        vector_flops += other.vector_flops;
        weight_elements_read += other.weight_elements_read;
        activation_elements_read += other.activation_elements_read;
        activation_elements_written += other.activation_elements_written;
        gradient_elements_written += other.gradient_elements_written;
        return *this;
    }
};

/// One work item: a pass of a layer over a batch at a precision, in bytes and operations.
struct Work {
    Pass pass = Pass::forward;
    mac_count macs{};
    flop_count vector_flops{};
    byte_count weight_bytes_read{};
    byte_count activation_bytes_read{};
    byte_count activation_bytes_written{};
    byte_count gradient_bytes_written{};
    GemmShape gemm{};

    [[nodiscard]] constexpr flop_count flops() const { return units::to_flops(macs) + vector_flops; }
    [[nodiscard]] constexpr byte_count bytes_read() const { return weight_bytes_read + activation_bytes_read; }
    [[nodiscard]] constexpr byte_count bytes_written() const {
        return activation_bytes_written + gradient_bytes_written;
    }
    [[nodiscard]] constexpr byte_count bytes() const { return bytes_read() + bytes_written(); }
    /// FLOP per byte moved.
    [[nodiscard]] constexpr units::flops_per_byte arithmetic_intensity() const {
        return units::intensity(flops(), bytes());
    }

    constexpr Work& operator+=(const Work& other) {
        macs += other.macs;
        vector_flops += other.vector_flops;
        weight_bytes_read += other.weight_bytes_read;
        activation_bytes_read += other.activation_bytes_read;
        activation_bytes_written += other.activation_bytes_written;
        gradient_bytes_written += other.gradient_bytes_written;
        return *this;
    }
};

/// Converts a layer's element-level cost into bytes at a precision.  Weight gradients are written at the
/// element width of the mode except under AMP, where they are accumulated into FP32 master gradients.
constexpr Work to_work(const PassCost& cost, Pass pass, Precision precision) {
    const std::int64_t width = element_bytes(precision);
    const std::int64_t gradient_width =
        (precision == Precision::amp_fp16 || precision == Precision::amp_bf16) ? 4 : width;
    Work w;
    w.pass = pass;
    w.macs = cost.macs;
    w.vector_flops = cost.vector_flops;
    w.weight_bytes_read = units::bytes(detail::mul(cost.weight_elements_read, width, "bytes"));
    w.activation_bytes_read = units::bytes(detail::mul(cost.activation_elements_read, width, "bytes"));
    w.activation_bytes_written = units::bytes(detail::mul(cost.activation_elements_written, width, "bytes"));
    w.gradient_bytes_written = units::bytes(detail::mul(cost.gradient_elements_written, gradient_width, "bytes"));
    w.gemm = cost.gemm;
    return w;
}

}  // namespace roofplan
