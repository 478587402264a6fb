// roofplan/engine/roofline.hpp — the one place that times a kernel and gives a device's roofs.
//
// A kernel (one pass of one layer today; the runtimes' kernels tomorrow) asks the device for matrix multiply-adds,
// vector FLOPs and bytes.  Its time is
//     compute = 2·MACs · slowdown / (peak[math class] · GEMM efficiency [· conv factor])
//               + vector FLOPs / (FP32 peak · vector efficiency)
//     memory  = bytes / (bandwidth · memory efficiency)
//     time    = max(compute, memory) + launch
// (fused attention kernels instead: executed MACs at peak / attention efficiency + memory + launch, see
// `Roofline::attention`), where slowdown (>= 1) is wave quantization: the GEMM (M×N×K, count) is cut into output tiles, one thread block
// per SM per wave, the library picking the faster of a large and a small tile and splitting K when there are too
// few tiles.  The efficiencies and the per-kernel fixed cost come from an EfficiencyProfile (defaults per
// generation, or fitted by `roofplan calibrate`); `Roofline::datasheet` is the bare roofline (efficiency 1, no
// launch cost, no quantization) that teaching and the charts start from.
//
// Prediction (engine/predict.hpp), calibration, validation, `explain` and the roofline chart all time through
// this header; none of them writes the formula again.
#pragma once

#include <roofplan/calibration/profile.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/layers/layer.hpp>
#include <roofplan/runtime/kernel.hpp>
#include <roofplan/work.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

namespace roofplan {

/// What limits a kernel: its arithmetic, its memory traffic, or the per-kernel floor.
enum class Bound { compute, memory, latency };
template <>
struct EnumNames<Bound> {
    static constexpr std::string_view field = "bound";
    static constexpr std::array<std::string_view, 3> names{"compute", "memory", "latency"};
};

/// What one kernel asks of the device, in plain doubles (the hot loop of a sweep evaluates millions of these).
struct KernelWork {
    double macs = 0;          ///< multiply-adds on the matrix units (2 FLOP each)
    double vector_flops = 0;  ///< the remaining arithmetic, on the FP32 vector units
    double bytes = 0;         ///< read plus written in device memory
    /// The GEMM the matrix work maps to (count products of M×K by K×N), for wave quantization; all 0 when the
    /// kernel is not GEMM-shaped (its matrix work is then timed without quantization).
    double m = 0, n = 0, k = 0, count = 0;
    bool conv = false;  ///< a convolution (cuDNN): the profile's conv factor applies
};

/// A kernel's predicted time and what sets it.
struct KernelTime {
    double compute_s = 0;  ///< matrix and vector arithmetic at the achieved rates
    double memory_s = 0;   ///< bytes at the achieved bandwidth
    double launch_s = 0;   ///< the fixed cost per kernel
    double total_s = 0;    ///< max(compute, memory) + launch
    double flops = 0;      ///< 2·MACs + vector FLOPs
    double bytes = 0;
    Bound bound = Bound::memory;
    double launches = 1;   ///< kernels it stands for (a measured convolution pass: the kernels cuDNN launched;
                           ///< 0: a kernel such a pass already counts, which is not launched again)
};

/// The work of one layer pass (its cost at a precision), as the engine times it: activations and weights at the
/// mode's element width, weight gradients at the gradient width (FP32 under AMP).
constexpr KernelWork kernel_work(const PassCost& cost, Precision precision, bool conv) {
    KernelWork w;
    w.macs = static_cast<double>(cost.macs.value());
    w.vector_flops = static_cast<double>(cost.vector_flops.value());
    w.bytes = static_cast<double>(element_bytes(precision)) *
                  static_cast<double>(cost.weight_elements_read + cost.activation_elements_read +
                                      cost.activation_elements_written) +
              static_cast<double>(gradient_bytes(precision)) * static_cast<double>(cost.gradient_elements_written);
    if (cost.gemm.count > 0 && cost.macs.value() > 0) {
        w.m = static_cast<double>(cost.gemm.m);
        w.n = static_cast<double>(cost.gemm.n);
        w.k = static_cast<double>(cost.gemm.k);
        w.count = static_cast<double>(cost.gemm.count);
    }
    w.conv = conv;
    return w;
}

/// One compute ceiling of a device, for charts and teaching.
struct ComputeRoof {
    MathClass math = MathClass::fp32;
    std::string_view label;   ///< "FP32", "TF32 tensor", "FP16 tensor", ...
    double peak_flops_s = 0;  ///< datasheet, dense
    bool covers_bf16 = false; ///< the FP16 tensor roof standing for BF16 too (equal peaks)

    /// Whether work in `m` runs under this roof.
    [[nodiscard]] constexpr bool serves(MathClass m) const {
        return m == math || (covers_bf16 && m == MathClass::bf16_tensor);
    }
};

/// The distinct compute ceilings of a device (equal FP16 and BF16 tensor peaks share one, labelled "FP16/BF16
/// tensor"); DP4A only on devices without INT8 tensor cores.
inline std::vector<ComputeRoof> compute_roofs(const Device& device) {
    std::vector<ComputeRoof> roofs;
    const bool fp16_is_bf16 = device.peak.bf16_tensor > 0 &&
                              device.peak.bf16_tensor == device.peak.fp16_tensor_fp32_acc;
    const auto add = [&](MathClass m, std::string_view label) {
        if (device.peak[m] > 0)
            roofs.push_back({m, label, device.peak[m] * 1e12, fp16_is_bf16 && m == MathClass::fp16_tensor_fp32_acc});
    };
    add(MathClass::fp32, "FP32");
    add(MathClass::tf32_tensor, "TF32 tensor");
    add(MathClass::fp16_tensor_fp32_acc, fp16_is_bf16 ? "FP16/BF16 tensor" : "FP16 tensor");
    if (device.peak.fp16_tensor_fp16_acc > device.peak.fp16_tensor_fp32_acc)
        add(MathClass::fp16_tensor_fp16_acc, "FP16 tensor, FP16 acc");
    if (!fp16_is_bf16) add(MathClass::bf16_tensor, "BF16 tensor");
    add(MathClass::int8_tensor, "INT8 tensor");
    if (device.peak.int8_tensor <= 0) add(MathClass::int8_dp4a, "INT8 DP4A");
    return roofs;
}

/// A device's roofs for one math class, with a profile's efficiencies: the timer of every kernel.
class Roofline {
public:
    /// The roofline a profile predicts with.  The profile is copied (a Roofline never dangles).
    Roofline(const Device& device, const EfficiencyProfile& profile, MathClass math)
        : math_(math),
          peak_(device.peak[math] * 1e12),
          vector_peak_(device.peak.fp32 * 1e12),
          bandwidth_(device.bandwidth_gb_s * 1e9),
          matrix_rate_(peak_ * profile.gemm_efficiency(math)),
          vector_rate_(vector_peak_ * profile.vector),
          byte_rate_(bandwidth_ * profile.memory),
          s_per_mac_(2.0 / matrix_rate_),
          s_per_conv_mac_(s_per_mac_ / profile.conv_factor(math)),
          s_per_flop_(1.0 / vector_rate_),
          s_per_byte_(1.0 / byte_rate_),
          launch_s_(profile.launch_s),
          kernel_gap_s_(profile.kernel_gap_s),
          graph_kernel_gap_s_(std::min(profile.graph_kernel_gap_s, profile.kernel_gap_s)),
          tiles_(tilings(profile, device.sms)),
          unaligned_even_(profile.unaligned_even),
          unaligned_odd_(profile.unaligned_odd),
          tensor_math_(math != MathClass::fp32 && math != MathClass::fp64 && math != MathClass::int8_dp4a),
          measured_(profile.measured_conv),
          measured_gemm_(profile.measured_gemm),
          stream_(profile.memory) {
        const double fp32_rate = device.peak.fp32 * 1e12 * profile.gemm_efficiency(MathClass::fp32);
        s_per_simt_mac_ = fp32_rate > 0 ? 2.0 / fp32_rate : s_per_mac_;
        const AttentionEfficiency& a = profile.attention;
        const auto or_plain = [](double dropout, double plain) { return dropout > 0 ? dropout : plain; };
        attention_efficiency_ = {{{{{a.forward, a.backward}, {a.simt_forward, a.simt_backward}}},
                                  {{{or_plain(a.dropout_forward, a.forward), or_plain(a.dropout_backward, a.backward)},
                                    {or_plain(a.dropout_simt_forward, a.simt_forward),
                                     or_plain(a.dropout_simt_backward, a.simt_backward)}}}}};
        for (std::size_t c = 0; c < kernel_class_count; ++c) {
            const KernelClassCost& k = profile.kernel_class[static_cast<KernelClass>(c)];
            // The memory side (a rate a byte) and the SM side (a rate an element) of a streaming class add
            // (KernelClassCost).
            class_s_per_byte_[c] = k.memory_seconds_per_byte(bandwidth_, profile.memory);
            class_s_per_element_[c] = k.sm_seconds_per_element(device.sm_cycles_per_s());
            class_fixed_s_[c] = k.fixed_s >= 0 ? k.fixed_s : profile.launch_s;
        }
    }

    /// The bare roofline: datasheet peaks and bandwidth, no launch cost, no wave quantization.
    [[nodiscard]] static Roofline datasheet(const Device& device, MathClass math) {
        EfficiencyProfile ideal = default_profile(device);
        ideal.gemm.fill(1.0);
        ideal.conv = 1.0;
        ideal.conv_by_class.fill(0.0);
        ideal.vector = 1.0;
        ideal.memory = 1.0;
        ideal.launch_s = 0;
        ideal.attention = {1.0, 1.0, 1.0, 1.0};
        ideal.measured_conv = {};
        ideal.measured_gemm = {};
        Roofline r(device, ideal, math);
        r.quantize_ = false;
        return r;
    }

    /// The time of one kernel.
    [[nodiscard]] KernelTime time(const KernelWork& w) const {
        KernelTime t;
        t.bytes = w.bytes;
        if (w.macs > 0) {
            const double slowdown = quantize_ && w.count > 0 ? quantization(w.m, w.n, w.k, w.count) : 1.0;
            t.compute_s = w.macs * (w.conv ? s_per_conv_mac_ : s_per_mac_) * slowdown;
        }
        t.compute_s += w.vector_flops * s_per_flop_;
        t.memory_s = w.bytes * s_per_byte_;
        const double busy = std::max(t.compute_s, t.memory_s);
        t.launch_s = launch_s_;
        t.total_s = busy + launch_s_;
        t.flops = 2.0 * w.macs + w.vector_flops;
        t.bound = launch_s_ >= busy ? Bound::latency : t.compute_s >= t.memory_s ? Bound::compute : Bound::memory;
        return t;
    }

    /// The time of one kernel of a runtime: GEMMs and convolutions as above, fused attention by `attention`,
    /// memory-bound classes at their class's bandwidth, each with its class's fixed GPU cost.  Most of a step's
    /// kernels are streaming ones (no matrix work, no measured shape): their time is inlined into the simulation's
    /// loop, the rest is `matrix_time` (the same arithmetic for a streaming kernel: a unit test compares them).
    [[nodiscard]] KernelTime time(const Kernel& k) const {
        if (!is_streaming(k)) [[unlikely]] return matrix_time(k);
        return stream_time(k.kind, k.vector_flops, k.bytes(), elements_of(k));
    }
    /// The elements a streaming kernel touches (its bytes over Kernel::element_bytes; 0 when it states no width).
    [[nodiscard]] static constexpr double elements_of(const Kernel& k) {
        return k.element_bytes > 0 ? k.bytes() / k.element_bytes : 0.0;
    }
    /// Whether a kernel is timed by `stream_time`: no matrix work, no measured shape, not attention.
    [[nodiscard]] static constexpr bool is_streaming(const Kernel& k) {
        return !(k.macs > 0 || k.conv_shape != 0 || k.gemm_shape != 0 || k.kind == KernelClass::attention);
    }
    /// A kernel without matrix work, measured shape or attention: its vector FLOPs, its bytes at its class's
    /// bandwidth and its elements (`elements_of`; 0: none) on the class's SM side, plus the class's fixed cost.
    [[nodiscard]] KernelTime stream_time(KernelClass kind, double vector_flops, double bytes, double elements) const {
        const auto c = static_cast<std::size_t>(kind);
        KernelTime t;
        t.bytes = bytes;
        t.compute_s = vector_flops * s_per_flop_;
        t.memory_s = is_matrix(kind) ? bytes * s_per_byte_ : streamed_s(c, bytes, elements);
        const double busy = std::max(t.compute_s, t.memory_s);
        t.launch_s = class_fixed_s_[c];
        t.total_s = busy + t.launch_s;
        t.flops = vector_flops;
        t.bound = t.launch_s >= busy ? Bound::latency : t.compute_s >= t.memory_s ? Bound::compute : Bound::memory;
        return t;
    }
    /// Any kernel, by the full rules (what `time` does for kernels with matrix work, a measured shape or attention).
    [[gnu::noinline]] [[nodiscard]] KernelTime matrix_time(const Kernel& k) const {
        const auto c = static_cast<std::size_t>(k.kind);
        KernelTime t;
        t.bytes = k.bytes();
        if (k.kind == KernelClass::attention) {
            const AttentionParts p = attention(k);
            t.compute_s = p.peak_s / attention_efficiency(k) + k.vector_flops * s_per_flop_;
            t.memory_s = p.memory_s;
            t.launch_s = class_fixed_s_[c];
            t.total_s = t.compute_s + t.memory_s + t.launch_s;
            t.flops = 2.0 * k.macs + k.vector_flops;
            t.bound = t.launch_s >= t.compute_s + t.memory_s ? Bound::latency
                      : t.compute_s >= t.memory_s             ? Bound::compute
                                                              : Bound::memory;
            return t;
        }
        if (k.conv_shape != 0 && !measured_.empty() && (k.kind == KernelClass::memset || k.kind == KernelClass::reduction)) {
            // The filter gradient's workspace fill and split-K reduction: part of a measured pass, which times and
            // counts every kernel cuDNN launched for it.
            if (measured_.at(k.conv_shape, math_, Pass::backward_weight, k.images).efficiency > 0) {
                KernelTime t;
                t.launches = 0;
                return t;
            }
        }
        if (k.conv_shape != 0 && !measured_.empty() && (k.kind == KernelClass::conv || k.kind == KernelClass::layout_copy)) {
            const bool conversion = k.kind == KernelClass::layout_copy;  // a layout conversion of the pass
            const MeasuredConvs::Point p = measured_.at(k.conv_shape, math_, conv_pass(k), k.images, conversion);
            if (p.efficiency > 0) {
                KernelTime t = measured(k, p.efficiency, measured_, conversion);
                t.launches = std::max(1.0, p.kernels);
                return t;
            }
        }
        if (k.gemm_shape != 0 && !measured_gemm_.empty()) {
            if (k.kind == KernelClass::gemm) {
                const MeasuredPoint p = measured_gemm_.at(k.gemm_shape, math_, conv_pass(k), k.rows);
                if (p.efficiency > 0) {
                    KernelTime t = measured(k, p.efficiency, measured_gemm_);
                    t.launches = std::max(1.0, p.kernels);
                    return t;
                }
            } else if (k.kind == KernelClass::memset &&
                       measured_gemm_.at(k.gemm_shape, math_, Pass::backward_weight, k.rows).efficiency > 0) {
                // A workspace fill of the layer's backward GEMMs: the measured passes time and count every kernel
                // cuBLAS launched for them.
                KernelTime none;
                none.launches = 0;
                return none;
            }
        }
        if (k.macs > 0) {
            const double slowdown = quantize_ && k.count > 0 ? quantization(k.m, k.n, k.k, k.count) : 1.0;
            const double per_mac = k.simt ? s_per_simt_mac_ : k.kind == KernelClass::conv ? s_per_conv_mac_ : s_per_mac_;
            t.compute_s = k.macs * per_mac * slowdown / alignment(k);
        }
        t.compute_s += k.vector_flops * s_per_flop_;
        t.memory_s = is_matrix(k.kind) ? t.bytes * s_per_byte_ : streamed_s(c, t.bytes, elements_of(k));
        const double busy = std::max(t.compute_s, t.memory_s);
        t.launch_s = class_fixed_s_[c];
        t.total_s = busy + t.launch_s;
        t.flops = 2.0 * k.macs + k.vector_flops;
        t.bound = t.launch_s >= busy ? Bound::latency : t.compute_s >= t.memory_s ? Bound::compute : Bound::memory;
        return t;
    }

    /// What a measured convolution's efficiency is relative to: the kernel's roofline at the datasheet peak of
    /// the math class and the datasheet bandwidth, max(2·MACs / peak, bytes / bandwidth) (seconds).
    [[nodiscard]] double measured_basis_s(const Kernel& k) const {
        return std::max(peak_ > 0 ? 2.0 * k.macs / peak_ : 0.0, k.bytes() / bandwidth_);
    }
    /// The pass of a convolution or GEMM kernel: forward, its weight gradient, or its input gradient.
    [[nodiscard]] static constexpr Pass conv_pass(const Kernel& k) {
        return k.part == StepPart::forward ? Pass::forward
               : k.weight_gradient()       ? Pass::backward_weight
                                           : Pass::backward_data;
    }

    /// A fused attention kernel's time at the datasheet peak of the units it runs on (the tensor cores of the
    /// math class, or the FP32 units for `simt`) and its bytes at the achieved bandwidth.  Flash-style kernels give
    /// each thread block 64 query rows of one (sample, head) and walk the keys in blocks of 128: a causal mask
    /// skips only the blocks wholly above the diagonal, and fewer blocks than SMs leave SMs idle (wave
    /// quantization).  The kernel computes, then streams its outputs: compute and memory add, they do not overlap
    /// (the operator benchmarks at sequence 128, where the two are comparable, fit the sum and not the maximum).
    struct AttentionParts {
        double peak_s = 0;    ///< the executed multiply-adds at the datasheet peak, after wave quantization
        double memory_s = 0;  ///< bytes at the achieved bandwidth
    };
    [[nodiscard]] AttentionParts attention(const Kernel& k) const {
        double macs = k.macs;
        if (k.causal && k.m > 0 && k.n >= k.m) {  // executed pairs over the pairs the mask keeps
            const double q = k.m, kv = k.n, block = 128;
            const double blocks = ceil(q / block), last_rows = q - block * (blocks - 1);
            const double executed = q * (kv - q) + block * block * blocks * (blocks - 1) / 2 + last_rows * q;
            macs *= executed / (q * (kv - q) + q * (q + 1) / 2);
        }
        double waves = 1;
        if (quantize_ && k.count > 0 && k.m > 0) {
            const double ctas = k.count * ceil(k.m / 64);
            waves = ceil_div(ctas, tiles_.sms, tiles_.inv_sms) * tiles_.sms / ctas;
        }
        const double peak = k.simt ? vector_peak_ : peak_;
        return {peak > 0 ? 2.0 * macs * waves / peak : 0.0, k.bytes() * s_per_byte_};
    }
    /// The profile's efficiency for an attention kernel (with or without dropout, its units and its pass).
    [[nodiscard]] double attention_efficiency(const Kernel& k) const {
        return attention_efficiency_[k.dropout ? 1 : 0][k.simt ? 1 : 0][k.part == StepPart::forward ? 0 : 1];
    }

    /// The rate of a tensor-core GEMM whose N or K (a leading dimension) is not a multiple of 8 elements, relative
    /// to the aligned rate (cuBLAS's fallback kernels); 1 for aligned GEMMs, convolutions and FMA-unit math.
    [[nodiscard]] double alignment(const Kernel& k) const {
        if (k.kind != KernelClass::gemm || k.simt || !tensor_math_ || k.count <= 0) return 1.0;
        const auto off = [](double d, double q) { return d - q * std::floor(d / q) != 0; };
        if (off(k.n, 2) || off(k.k, 2)) return unaligned_odd_;
        if (off(k.n, 8) || off(k.k, 8)) return unaligned_even_;
        return 1.0;
    }

    /// The wave-quantization slowdown (>= 1) of `count` GEMMs of m×n×k: the time of the better tiling over the
    /// ideal time (all SMs busy, no tile padded).  1 for a GEMM that fills whole waves of whole tiles.
    [[nodiscard]] double gemm_slowdown(double m, double n, double k, double count) const {
        return quantization(m, n, k, count);
    }

    [[nodiscard]] MathClass math() const { return math_; }
    /// Datasheet rates: FLOP/s of the math class, FLOP/s of the FP32 vector units, bytes/s of device memory.
    [[nodiscard]] double peak_flops_s() const { return peak_; }
    [[nodiscard]] double vector_peak_flops_s() const { return vector_peak_; }
    [[nodiscard]] double bandwidth_bytes_s() const { return bandwidth_; }
    /// What well-shaped kernels reach with the profile.
    [[nodiscard]] double achieved_flops_s() const { return matrix_rate_; }
    [[nodiscard]] double achieved_vector_flops_s() const { return vector_rate_; }
    [[nodiscard]] double achieved_bytes_s() const { return byte_rate_; }
    [[nodiscard]] double launch_s() const { return launch_s_; }
    /// The GPU's gap between back-to-back kernels inside each kernel time (EfficiencyProfile::kernel_gap_s).
    [[nodiscard]] double kernel_gap_s() const { return kernel_gap_s_; }
    /// The gap between the kernels of a replayed CUDA graph (at most `kernel_gap_s`).
    [[nodiscard]] double graph_kernel_gap_s() const { return graph_kernel_gap_s_; }
    /// The ridge point (FLOP/B) of the datasheet roofs: matrix work when `matrix`, else the FP32 vector units.
    [[nodiscard]] double ridge_flops_per_byte(bool matrix = true) const {
        return (matrix ? peak_ : vector_peak_) / bandwidth_;
    }

private:
    /// A pass a table measured (a convolution, a GEMM, or a layout conversion: its bytes only): on the GPU that
    /// measured it, its roofline max(2·MACs / peak, bytes / bandwidth) over the efficiency is the measured time.  On
    /// another GPU the pass moves by what bound it where it was measured: its time follows the compute roof (the
    /// ratio of the math class's peaks: SMs × clock, which also set the time of small, latency-bound passes), and it
    /// takes at least its bytes at the bandwidth fraction it reached there, or at the streaming fraction of the
    /// profile when it reached less (a pass that ran near the bandwidth roof scales with the bandwidth; one far below
    /// it does not).  On an H100 the H200 tables predict the H100's own measurements of the same passes with a
    /// median error of −3% (convolutions) and −2% (GEMMs), 90% of them above −17% and −9% and below +3% and +1%, where
    /// a plain fraction of the roofline put the small passes up to 43% slow (validation/results/2026-11-24-h100-shapes;
    /// a unit test checks it).  No fixed cost is
    /// added: the measured time is the pass's kernels' own device time, their fixed part included.
    template <class Table>
    [[nodiscard]] KernelTime measured(const Kernel& k, double efficiency, const Table& table, bool conversion = false) const {
        const MeasuredOn& on = table.on;
        const double peak_there = on.bandwidth_gb_s > 0 ? on.peak[math_] * 1e12 : peak_;
        const double bandwidth_there = on.bandwidth_gb_s > 0 ? on.bandwidth_gb_s * 1e9 : bandwidth_;
        const double compute_there = peak_there > 0 && !conversion ? 2.0 * k.macs / peak_there : 0.0;
        const double memory_there = k.bytes() / bandwidth_there;
        const double there_s = std::max(compute_there, memory_there) / efficiency;  // as measured
        const double share = memory_there / there_s;  // the bandwidth fraction it reached there
        KernelTime t;
        t.bytes = k.bytes();
        t.compute_s = peak_ > 0 && peak_there > 0 ? there_s * peak_there / peak_ : there_s;
        t.memory_s = t.bytes / bandwidth_ / std::max(share, stream_);
        t.total_s = std::max(t.compute_s, t.memory_s);
        t.flops = 2.0 * k.macs + k.vector_flops;
        // The roof that bounds the pass: its bytes where they take longer here, else the roof it was nearer there.
        t.bound = t.memory_s > t.compute_s || memory_there > compute_there ? Bound::memory : Bound::compute;
        return t;
    }

    /// A tiling's constants, with reciprocals so that the hot loop multiplies instead of dividing.
    struct Tiling {
        double tm, tn, inv_tm, inv_tn, inv_efficiency;
    };
    struct Tilings {
        Tiling large, small;
        double sms, inv_sms, split_k_min, inv_split_k_min;
    };
    static Tilings tilings(const EfficiencyProfile& p, double sms) {
        const auto t = [](double tm, double tn, double e) { return Tiling{tm, tn, 1.0 / tm, 1.0 / tn, 1.0 / e}; };
        return {t(p.large_tile_m, p.large_tile_n, 1.0), t(p.small_tile_m, p.small_tile_n, p.small_tile_efficiency), sms,
                1.0 / sms, static_cast<double>(p.split_k_min), 1.0 / p.split_k_min};
    }

    double quantization(double m, double n, double k, double count) const {
        if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return 1.0;
        const double best = std::min(tiled(m, n, k, count, tiles_.large), tiled(m, n, k, count, tiles_.small));
        const double ideal = m * n * k * count * tiles_.inv_sms;
        return std::max(1.0, best / ideal);
    }
    /// Time (in MAC units per SM) of a GEMM cut into tm x tn tiles: waves x tile work / efficiency, with split-K
    /// when there are fewer tiles than SMs.
    double tiled(double m, double n, double k, double count, const Tiling& tile) const {
        const Tilings& t = tiles_;
        const double tiles = ceil_div(m, tile.tm, tile.inv_tm) * ceil_div(n, tile.tn, tile.inv_tn) * count;
        if (tiles >= t.sms)  // enough tiles for every SM: no split-K
            return ceil_div(tiles, t.sms, t.inv_sms) * tile.tm * tile.tn * k * tile.inv_efficiency;
        const double split = std::max(1.0, std::min(floor(t.sms / tiles), floor(k * t.inv_split_k_min)));
        const double k_per_split = split == 1 ? k : ceil(k / split);
        return ceil_div(tiles * split, t.sms, t.inv_sms) * tile.tm * tile.tn * k_per_split * tile.inv_efficiency;
    }
    /// ⌈x / d⌉ for integral x, d > 0, from a multiplication by 1/d corrected for rounding.
    static double ceil_div(double x, double d, double inv_d) {
        double q = ceil(x * inv_d);
        if ((q - 1) * d >= x) q -= 1;
        else if (q * d < x) q += 1;
        return q;
    }
    // Rounding for the non-negative values below 2^52 that GEMM extents are (a truncating conversion is one
    // instruction; std::ceil is a library call without SSE4.1).
    static double floor(double x) { return static_cast<double>(static_cast<std::int64_t>(x)); }
    static double ceil(double x) {
        const double t = floor(x);
        return t < x ? t + 1.0 : t;
    }

    MathClass math_;
    double peak_, vector_peak_, bandwidth_;
    double matrix_rate_, vector_rate_, byte_rate_;
    double s_per_mac_, s_per_conv_mac_, s_per_flop_, s_per_byte_;
    double launch_s_;
    double kernel_gap_s_, graph_kernel_gap_s_;
    Tilings tiles_;
    double unaligned_even_ = 1, unaligned_odd_ = 1;
    bool tensor_math_ = false;
    MeasuredConvs measured_;  // a view of static or process-lifetime storage (calibration/measured_conv.hpp)
    MeasuredGemms measured_gemm_;  // likewise (calibration/measured_gemm.hpp)
    double stream_ = 0.85;         // the profile's streaming fraction of the bandwidth (measured passes on another GPU)
    double s_per_simt_mac_ = 0;
    std::array<std::array<std::array<double, 2>, 2>, 2> attention_efficiency_{};  ///< [dropout][simt][backward]
    /// A streaming class's memory side and SM side (KernelClassCost) for `bytes` holding `elements` elements.
    [[nodiscard]] double streamed_s(std::size_t c, double bytes, double elements) const {
        return bytes * class_s_per_byte_[c] + elements * class_s_per_element_[c];
    }
    std::array<double, kernel_class_count> class_s_per_byte_{};
    std::array<double, kernel_class_count> class_s_per_element_{};
    std::array<double, kernel_class_count> class_fixed_s_{};
    bool quantize_ = true;
};

/// The engine's time for one pass of one layer over `instances` samples (the batch times the layer's repeat),
/// as the whole-model prediction times it.  Convolutions take the profile's conv factor.
inline KernelTime time_layer_pass(const AnyLayer& layer, Pass pass, std::int64_t instances, Precision precision,
                                  const Roofline& roofline) {
    const bool conv = std::holds_alternative<layers::Conv2D>(layer);
    return roofline.time(kernel_work(cost(layer, pass, instances), precision, conv));
}

}  // namespace roofplan
