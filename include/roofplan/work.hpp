// roofplan/work.hpp — what one pass of one layer asks of a processor.  This is the seam between "what the
// network is" (layers, models) and "how fast a device does it" (the roofline engine).
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/enum_names.hpp>
#include <roofplan/precision.hpp>
#include <roofplan/units.hpp>

#include <cstdint>
#include <string_view>

namespace roofplan {

/// The passes of training.  Inference runs only `forward`.
enum class Pass { forward, backward_data, backward_weight };

template <>
struct EnumNames<Pass> {
    static constexpr std::string_view field = "pass";
    static constexpr std::array<std::string_view, 3> names{"forward", "backward-data", "backward-weight"};
};

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

/// 2·MACs + vector FLOPs, or an error naming the overflow (a shape whose MACs fit 64 bits may not in FLOPs).
constexpr flop_count checked_flops(mac_count macs, flop_count vector_flops) {
    return units::flops(detail::add(units::to_flops(macs).value(), vector_flops.value(), "FLOPs"));
}

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

    [[nodiscard]] constexpr flop_count flops() const { return checked_flops(macs, vector_flops); }

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

/// A pass's cost as an affine function of the batch, cost(B) = per_instance·B + fixed, which every layer's cost
/// is (weights are read once per pass; activations, MACs and GEMM extents grow with the batch).  Models keep one
/// per layer and pass so that counting and predicting at any batch is a sum, not a walk through the layers' code.
struct AffineCost {
    PassCost per_instance{};  ///< the slope (GEMM extents too: M = B·Ho·Wo has slope Ho·Wo)
    PassCost fixed{};         ///< the part that does not grow with the batch

    /// Sums two affine costs (GEMM shapes are not summed).
    constexpr AffineCost& operator+=(const AffineCost& other) {
        per_instance += other.per_instance;
        fixed += other.fixed;
        return *this;
    }

    /// The cost at `batch`, overflow-checked.
    [[nodiscard]] constexpr PassCost at(std::int64_t batch) const {
        detail::require_batch(batch);
        const auto eval = [batch](std::int64_t slope, std::int64_t intercept) {
            return detail::add(detail::mul(slope, batch, "count at this batch"), intercept, "count at this batch");
        };
        PassCost c;
        c.macs = units::macs(eval(per_instance.macs.value(), fixed.macs.value()));
        c.vector_flops = units::flops(eval(per_instance.vector_flops.value(), fixed.vector_flops.value()));
        c.weight_elements_read = eval(per_instance.weight_elements_read, fixed.weight_elements_read);
        c.activation_elements_read = eval(per_instance.activation_elements_read, fixed.activation_elements_read);
        c.activation_elements_written =
            eval(per_instance.activation_elements_written, fixed.activation_elements_written);
        c.gradient_elements_written = eval(per_instance.gradient_elements_written, fixed.gradient_elements_written);
        c.gemm = {eval(per_instance.gemm.m, fixed.gemm.m), eval(per_instance.gemm.n, fixed.gemm.n),
                  eval(per_instance.gemm.k, fixed.gemm.k), eval(per_instance.gemm.count, fixed.gemm.count)};
        return c;
    }
};

namespace detail {
/// Field-wise a - b of two costs (GEMM shapes included).
constexpr PassCost difference(const PassCost& a, const PassCost& b) {
    PassCost d;
    d.macs = a.macs - b.macs;
    d.vector_flops = a.vector_flops - b.vector_flops;
    d.weight_elements_read = a.weight_elements_read - b.weight_elements_read;
    d.activation_elements_read = a.activation_elements_read - b.activation_elements_read;
    d.activation_elements_written = a.activation_elements_written - b.activation_elements_written;
    d.gradient_elements_written = a.gradient_elements_written - b.gradient_elements_written;
    d.gemm = {a.gemm.m - b.gemm.m, a.gemm.n - b.gemm.n, a.gemm.k - b.gemm.k, a.gemm.count - b.gemm.count};
    return d;
}
constexpr bool same_cost(const PassCost& a, const PassCost& b) {
    return a.macs == b.macs && a.vector_flops == b.vector_flops && a.weight_elements_read == b.weight_elements_read &&
           a.activation_elements_read == b.activation_elements_read &&
           a.activation_elements_written == b.activation_elements_written &&
           a.gradient_elements_written == b.gradient_elements_written && a.gemm == b.gemm;
}
constexpr bool non_negative(const PassCost& c) {
    return c.macs.value() >= 0 && c.vector_flops.value() >= 0 && c.weight_elements_read >= 0 &&
           c.activation_elements_read >= 0 && c.activation_elements_written >= 0 && c.gradient_elements_written >= 0 &&
           c.gemm.m >= 0 && c.gemm.n >= 0 && c.gemm.k >= 0 && c.gemm.count >= 0;
}

/// Derives the affine form of `cost(batch)` from three evaluations and proves it affine there: cost(1), cost(2)
/// give slope and intercept, cost(3) must agree.  `cost` is any callable taking a batch.
template <class CostOf>
constexpr AffineCost affine_from(const CostOf& cost) {
    const PassCost c1 = cost(1), c2 = cost(2), c3 = cost(3);
    AffineCost a;
    a.per_instance = difference(c2, c1);
    a.fixed = difference(c1, a.per_instance);
    if (!non_negative(a.per_instance) || !non_negative(a.fixed) ||
        !same_cost(a.at(3), c3))
        fail("internal error: a layer's cost is not affine in the batch (cost(3) != 3*slope + intercept)");
    return a;
}
}  // namespace detail

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

    [[nodiscard]] constexpr flop_count flops() const { return checked_flops(macs, vector_flops); }
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
    const std::int64_t gradient_width = gradient_bytes(precision);
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
