// roofplan/calibration/operators.hpp — fits the kernel-class curves and the host dispatch costs of a profile to
// framework operator micro-benchmarks (validation/ops/op_bench.py: one PyTorch operator at several sizes), never
// to end-to-end runs.
//
// Kernel classes.  Each operator case is timed as the eager runtime lowers that operator: k kernels moving B
// bytes (B = the case's nominal bytes times the lowering's factor: PyTorch's native bf16 batch norm reads its
// input twice, the loss writes its FP32 log-probabilities, foreach AdamW moves 80 bytes per parameter), so
//     t = k · fixed_s + B / (bandwidth · memory)
// per class, fitted by least squares on relative errors (rows [k/t, B/t] · [fixed_s, 1/(bandwidth·memory)] = 1).
// Attention.  The fused kernel of the sdpa cases (its profiler time, without its helper kernels) against the
// roofline's attention model: one efficiency per pass, on tensor cores and on the FP32 units.
// Host costs.  From the host cases (the wall time per call of a tiny operator, the GPU never the bottleneck):
// an nn.Module call recorded by autograd, an operator dispatched inside one, a backward autograd call per kernel,
// a foreach optimizer operation and the optimizer's Python cost per parameter tensor, a CUDA graph's per-kernel
// launch share.  The per-kernel launch (cudaLaunchKernel) is not separable in these cases and stays the prior.
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/calibration/profile.hpp>
#include <roofplan/engine/roofline.hpp>
#include <roofplan/measurement/samples.hpp>
#include <roofplan/runtime/kernel.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <numeric>
#include <optional>
#include <cstdlib>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace roofplan::calibration {

/// How well one class's curve reproduces its cases.
struct ClassFit {
    KernelClass kind = KernelClass::elementwise;
    int samples = 0;
    double memory = 0, fixed_s = 0;
    double median_rel_error = 0, worst_rel_error = 0;
    double sm_elements_per_cycle = 0;  ///< the SM-side term (cases of two dtypes or two GPUs); 0: none
    int own_gpu_samples = 0;        ///< the cases timed on the profile's GPU (0: the class is another GPU's fit)
};

/// Ends a report's source line when the report ran on another GPU than the profile's (`roofplan calibrate`): its
/// operator cases are marked with that GPU (OperatorSample::bandwidth_b_s) and inform the kernel classes only.
inline constexpr std::string_view other_gpu_source_tag = ": kernel classes only]";

/// The class an operator case measures and the factor from its nominal bytes to the bytes the eager lowering
/// counts for it (empty: the case does not inform a class, e.g. the tanh-GELU chain, amp variants that mix a
/// cast into the operator).
inline std::optional<std::pair<KernelClass, double>> class_of(const OperatorSample& s) {
    using K = KernelClass;
    const bool amp = s.dtype.starts_with("amp");
    const auto is = [&](std::initializer_list<const char*> names) {
        return std::any_of(names.begin(), names.end(), [&](const char* n) { return s.op == n; });
    };
    if (is({"relu", "relu_", "gelu", "silu", "tanh", "add", "mul", "add_", "dropout"})) return std::pair{K::elementwise, 1.0};
    if (s.op.starts_with("cast_")) return std::pair{s.op.ends_with("_to_fp32") ? K::widening_cast : K::copy_cast, 1.0};
    if (is({"heads_contiguous", "kv_cat", "flatten_nhwc"})) return std::pair{K::layout_copy, 1.0};
    if (s.op == "cat_last") return std::pair{K::concat, 1.0};
    if (is({"zero_", "zeros_like"})) return std::pair{K::memset, 1.0};
    if (s.op == "softmax" && !amp) return std::pair{K::softmax, 1.0};
    // The backward's two kernels (input gradient; weight and bias gradients, which re-read the gradient and the
    // input) as lowered: 5/3 of the nominal bytes.
    if (s.op == "layer_norm" && !amp) return s.pass == "fwd" ? std::pair{K::layer_norm, 1.0} : std::pair{K::layer_norm_backward, 5.0 / 3.0};
    if (s.op == "batch_norm_train" && s.backend == "Cudnn" && s.layout == "nhwc") return std::pair{K::normalization, 1.0};
    if (s.op == "batch_norm_train" && s.backend == "Cudnn" && s.layout == "nchw" && !amp) return std::pair{K::batch_norm_nchw, 1.0};
    if (s.op == "batch_norm_train" && s.backend == "Native" && s.layout == "nhwc")  // statistics re-read the input
        return s.pass == "fwd" ? std::pair{K::batch_norm, 1.5} : std::pair{K::batch_norm_backward, 5.0 / 3.0};
    if (s.op == "cross_entropy" && !amp) return std::pair{K::loss, 2.0};  // + the FP32 log-probabilities
    if (s.op == "embedding" && s.pass == "fwd") return std::pair{K::gather, 1.0};
    if (s.op == "batch_norm_infer" && s.backend == "Native" && s.layout == "nhwc") return std::pair{K::batch_norm_inference, 1.0};
    if (s.op == "max_pool2d" && s.pass != "fwd") return std::pair{K::pooling_backward, 1.0};  // bytes as lowered
    if (s.op == "max_pool2d") return std::pair{s.layout == "nhwc" ? K::pooling_nhwc : K::pooling, 1.0};
    // Bias gradients (a column sum over the rows) and the global average pool: the reduction class.
    if (s.op == "sum_dim0" || s.op == "adaptive_avg_pool2d") return std::pair{K::reduction, 1.0};
    // torch.compile's generated kernels (op_bench.py `generated`): pointwise chains, and chains that reduce over rows
    // or columns.  The dropout cases inform the random draw's cost (compiled.hpp), not a class: their time is the
    // draws' arithmetic, not their bytes.
    if (is({"gen_bn_add_relu", "gen_bn_relu", "gen_gelu"})) return std::pair{K::generated, 1.0};
    if (is({"gen_add_ln", "gen_gelu_bwd_sum"})) return std::pair{K::generated_reduction, 1.0};
    if ((s.op == "sgd_step" || s.op == "adamw_step") && s.layout == "foreach" && s.numel > 0)  // bytes per parameter
        return std::pair{K::optimizer, (s.op == "sgd_step" ? 32.0 : 80.0) * s.numel / s.bytes};
    return std::nullopt;
}

/// Bytes an element of an operator case touches on average (Kernel::element_bytes), as the lowering counts them: 4
/// for FP32 cases, 2 for bf16 and fp16 ones (an "amp-" case's tensors are half), the mean of the two for a cast
/// ("fp32->bf16"), a dropout's one-byte mask beside its two tensors; 0 when the dtype is none of these (the class
/// then gets no SM side from it).
inline double element_bytes_of(const OperatorSample& s) {
    const auto width = [](std::string_view t) {
        if (t.starts_with("amp-")) t.remove_prefix(4);
        return t == "fp32" || t == "tf32" ? 4.0 : t == "bf16" || t == "fp16" ? 2.0 : 0.0;
    };
    const std::string_view dtype = s.dtype;
    // Dropout writes (forward) or reads (backward) a one-byte mask beside two tensors of the dtype, as lowered.
    if (s.op == "dropout" && width(dtype) > 0) return dropout_element_bytes(width(dtype));
    if (const std::size_t arrow = dtype.find("->"); arrow != std::string_view::npos) {
        const double from = width(dtype.substr(0, arrow)), to = width(dtype.substr(arrow + 2));
        return from > 0 && to > 0 ? (from + to) / 2 : 0.0;
    }
    return width(dtype);
}

namespace detail {
/// Least squares of t_i = k_i·f + b_i·a on relative errors; f >= 0 (refit without it when negative).
inline std::pair<double, double> fit_fixed_and_slope(const std::vector<std::array<double, 3>>& rows) {
    const auto n = static_cast<Eigen::Index>(rows.size());
    Eigen::MatrixXd design(n, 2);
    for (Eigen::Index i = 0; i < n; ++i) {
        const auto& [k, b, t] = rows[static_cast<std::size_t>(i)];
        design(i, 0) = k / t;
        design(i, 1) = b / t;
    }
    const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
    Eigen::Vector2d x = design.colPivHouseholderQr().solve(ones);
    if (x(0) < 0) x = {0.0, design.col(1).colPivHouseholderQr().solve(ones)(0)};
    return {x(0), x(1)};
}

/// One operator case of a kernel class: kernels, bytes and elements (bytes over element_bytes_of; 0: unknown) as
/// the lowering counts them, seconds, and the GPU that ran it (datasheet bandwidth in bytes/s, SM cycles a second).
struct ClassPoint {
    double kernels = 0, bytes = 0, seconds = 0, bandwidth = 0, sm_cycles = 0;
    bool own_gpu = true;  ///< timed on the profile's GPU (false: another GPU's case, OperatorSample::bandwidth_b_s)
    double elements = 0;
};
/// A class curve (KernelClassCost's terms as coefficients): t = kernels·fixed + bytes/bandwidth·a + elements/sm·c.
struct ClassCurve {
    double fixed = 0, a = 0, c = 0;  ///< a = 1 / memory fraction; c = 1 / (elements per SM per cycle), 0: none
    [[nodiscard]] double time(const ClassPoint& p) const {
        return p.kernels * fixed + p.bytes / p.bandwidth * a + (c > 0 ? p.elements / p.sm_cycles * c : 0.0);
    }
};
/// The sorted |relative errors| of a curve over its points.
inline std::vector<double> curve_errors(const ClassCurve& curve, const std::vector<ClassPoint>& points) {
    std::vector<double> errors;
    for (const ClassPoint& p : points) errors.push_back(std::abs(curve.time(p) / p.seconds - 1.0));
    std::sort(errors.begin(), errors.end());
    return errors;
}
/// Fits a class curve on relative errors.  The memory side goes by the byte at a GPU's bandwidth, the SM side by
/// the element at its SMs' cycles: cases whose ratio of the two is the same (one dtype on one GPU, or GPUs with
/// one bandwidth-to-SM ratio) cannot separate them and fit the fixed cost and the memory fraction (relative to
/// each case's own GPU).  Cases of two dtypes, or of GPUs with different ratios, fit all three (each GPU weighing
/// the same), subject to fixed >= 0, a non-negative SM term and a memory fraction no higher than `max_memory`,
/// each active set solved and the feasible one with the least squares kept.
inline ClassCurve fit_class_curve(const std::vector<ClassPoint>& points, double max_memory) {
    const auto ratio = [](const ClassPoint& p) { return p.bytes / p.bandwidth / (p.elements / p.sm_cycles); };
    const bool known = std::all_of(points.begin(), points.end(), [](const ClassPoint& p) { return p.elements > 0; });
    const bool separable = known && std::any_of(points.begin(), points.end(), [&](const ClassPoint& p) {
        return std::abs(ratio(p) / ratio(points.front()) - 1.0) > 0.01;
    });
    if (!separable) {  // the two-term fit: {kernels, bytes in the first case's bandwidth, seconds}
        std::vector<std::array<double, 3>> rows;
        for (const ClassPoint& p : points) rows.push_back({p.kernels, p.bytes * points.front().bandwidth / p.bandwidth, p.seconds});
        const auto [fixed, slope] = fit_fixed_and_slope(rows);
        return {fixed, slope * points.front().bandwidth, 0.0};
    }
    // Each GPU weighs the same, however many cases it ran (the H100's casts are in two of its reports): a case's
    // squared relative error counts 1 / (its GPU's cases).
    std::map<std::pair<double, double>, int> per_gpu;
    for (const ClassPoint& p : points) ++per_gpu[{p.bandwidth, p.sm_cycles}];
    const auto n = static_cast<Eigen::Index>(points.size());
    Eigen::MatrixXd x(n, 3);
    Eigen::VectorXd w(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const ClassPoint& p = points[static_cast<std::size_t>(i)];
        w(i) = 1.0 / std::sqrt(static_cast<double>(per_gpu[{p.bandwidth, p.sm_cycles}]));
        x(i, 0) = w(i) * p.kernels / p.seconds;
        x(i, 1) = w(i) * p.bytes / p.bandwidth / p.seconds;
        x(i, 2) = w(i) * p.elements / p.sm_cycles / p.seconds;
    }
    // Active sets: which of (fixed, a, c) are free; a pinned at its bound (the copy fraction) where it would pass it.
    const double a_min = 1.0 / std::clamp(max_memory, 1e-3, 1.0);
    struct Candidate { ClassCurve curve; double squares; };
    std::optional<Candidate> best;
    for (int free_set = 0; free_set < 8; ++free_set)
        for (const bool a_at_bound : {false, true}) {
            if (a_at_bound == static_cast<bool>(free_set & 2)) continue;  // a is either free or pinned at its bound
            std::vector<Eigen::Index> cols;
            for (Eigen::Index c = 0; c < 3; ++c)
                if (free_set & (1 << c)) cols.push_back(c);
            std::array<double, 3> v{0, a_at_bound ? a_min : 0.0, 0};
            if (!cols.empty()) {  // the vertex (fixed 0, a at its bound, no SM term) has nothing to solve
                Eigen::MatrixXd design(n, static_cast<Eigen::Index>(cols.size()));
                for (std::size_t j = 0; j < cols.size(); ++j) design.col(static_cast<Eigen::Index>(j)) = x.col(cols[j]);
                Eigen::VectorXd target = w;
                if (a_at_bound) target -= a_min * x.col(1);
                const Eigen::VectorXd sol = design.colPivHouseholderQr().solve(target);
                for (std::size_t j = 0; j < cols.size(); ++j) v[static_cast<std::size_t>(cols[j])] = sol(static_cast<Eigen::Index>(j));
            }
            const ClassCurve curve{v[0], v[1], v[2]};
            if (!(curve.fixed >= 0 && curve.a >= a_min * (1 - 1e-12) && curve.c >= 0) || !std::isfinite(curve.a) ||
                !std::isfinite(curve.c))
                continue;
            if (curve.c > 0 && !(1.0 / curve.c >= 0.01 && 1.0 / curve.c <= 1e4)) continue;  // the profile's range
            double squares = 0;
            for (Eigen::Index i = 0; i < n; ++i) {
                const ClassPoint& p = points[static_cast<std::size_t>(i)];
                squares += w(i) * w(i) * std::pow(curve.time(p) / p.seconds - 1.0, 2);
            }
            if (!best || squares < best->squares) best = Candidate{curve, squares};
        }
    return best ? best->curve : ClassCurve{0.0, a_min, 0.0};  // the vertex is always feasible
}
}  // namespace detail

/// Fits the kernel-class curves into `profile` (classes without cases keep their values) and returns the fits.
/// Each case is timed on its own GPU: the profile's (`device`) unless the sample names another
/// (OperatorSample::bandwidth_b_s, sm_cycles_s), whose cases then also fit the classes' SM-side terms.
inline std::vector<ClassFit> fit_kernel_classes(const std::vector<OperatorSample>& samples, const Device& device,
                                                EfficiencyProfile& profile) {
    const double bandwidth = device.bandwidth_gb_s * 1e9, sm_cycles = device.sm_cycles_per_s();
    const auto point = [&](const OperatorSample& s, double kernels, double bytes, double seconds) {
        const double element_bytes = element_bytes_of(s);
        return detail::ClassPoint{kernels, bytes, seconds, s.bandwidth_b_s > 0 ? s.bandwidth_b_s : bandwidth,
                                  s.sm_cycles_s > 0 ? s.sm_cycles_s : sm_cycles, !(s.bandwidth_b_s > 0),
                                  element_bytes > 0 ? bytes / element_bytes : 0.0};
    };
    std::map<KernelClass, std::vector<detail::ClassPoint>> rows;
    // Fitted after the memset class: their first kernel is a fill (pooling backward: the input gradient; a long
    // column sum: the semaphores of its split over several blocks).
    std::vector<const OperatorSample*> pool_backward, reductions;
    const bool any_back_to_back = std::any_of(samples.begin(), samples.end(), [](const auto& s) { return s.back_to_back; });
    for (const OperatorSample& s : samples) {
        if (any_back_to_back && !s.back_to_back) continue;  // prefer back-to-back timings where a report has them
        if (!(s.seconds > 0) || !(s.bytes > 0) || !(s.kernels >= 1))
            roofplan::detail::fail("operator case ", s.op, " ", s.pass, ": bytes, kernels and time must be positive");
        const auto c = class_of(s);
        if (c && c->first == KernelClass::pooling_backward) pool_backward.push_back(&s);
        else if (c && c->first == KernelClass::reduction) reductions.push_back(&s);
        else if (c) rows[c->first].push_back(point(s, s.kernels, s.bytes * c->second, s.seconds));
    }
    std::vector<ClassFit> fits;
    const auto fit_class = [&](KernelClass kind, const std::vector<detail::ClassPoint>& points) {
        // A class that reads and writes streams no faster than the copy kernel (the profile's `memory`); a fill
        // writes only, and may.
        const detail::ClassCurve curve = detail::fit_class_curve(points, kind == KernelClass::memset ? 1.0 : profile.memory);
        ClassFit f{kind, static_cast<int>(points.size()), std::clamp(1.0 / curve.a, 1e-3, 1.0), std::min(curve.fixed, 9e-4)};
        f.sm_elements_per_cycle = curve.c > 0 ? 1.0 / curve.c : 0.0;
        f.own_gpu_samples = static_cast<int>(std::count_if(points.begin(), points.end(), [](const auto& p) { return p.own_gpu; }));
        const detail::ClassCurve used{f.fixed_s, 1.0 / f.memory, curve.c};
        const std::vector<double> errors = detail::curve_errors(used, points);
        f.median_rel_error = errors[errors.size() / 2];
        f.worst_rel_error = errors.back();
        profile.kernel_class[kind] = {f.memory, f.fixed_s, f.sm_elements_per_cycle};
        fits.push_back(f);
    };
    for (const auto& [kind, points] : rows)
        if (points.size() >= 2) fit_class(kind, points);
    // Pooling backward: PyTorch zeroes the input gradient (a fill, timed by the memset class as now fitted), then
    // scatters the output gradient through the indices; the class is the scatter, the case's time less the fill.
    std::vector<detail::ClassPoint> scatter;
    const KernelClassCost& fill = profile.kernel_class[KernelClass::memset];
    const auto fill_time = [&](const OperatorSample& s, double bytes) {  // on the case's own GPU
        const detail::ClassPoint on = point(s, 1, bytes, 1);
        return (fill.fixed_s >= 0 ? fill.fixed_s : profile.launch_s) +
               bytes * fill.seconds_per_byte(on.bandwidth, on.sm_cycles, profile.memory, element_bytes_of(s));
    };
    for (const OperatorSample* s : pool_backward) {
        const double fill_s = fill_time(*s, element_bytes_of(*s) * s->numel);
        if (s->kernels >= 2 && s->seconds > fill_s) scatter.push_back(point(*s, s->kernels - 1, s->bytes, s->seconds - fill_s));
    }
    if (scatter.size() >= 2) fit_class(KernelClass::pooling_backward, scatter);
    // Reductions: a column sum long enough to be split over blocks launches a memset of its semaphores first
    // (Reduce.cuh; the profiler's count says so: 2 kernels a call); the class is the reduction kernel alone.
    std::vector<detail::ClassPoint> reduce;
    for (const OperatorSample* s : reductions) {
        const double fills = s->op == "sum_dim0" && s->kernels >= 1.5 ? 1.0 : 0.0;
        const double fill_s = fills * fill_time(*s, 0);  // the semaphores: a few bytes, the fill's fixed cost
        if (s->seconds > fill_s) reduce.push_back(point(*s, s->kernels - fills, s->bytes, s->seconds - fill_s));
    }
    if (reduce.size() >= 2) fit_class(KernelClass::reduction, reduce);
    // Classes no operator case measures keep their prior (reductions: the Hopper defaults' fit of op_bench's reduce
    // cases, far below the elementwise rate); attention, GEMM and convolution keep the GEMM model.
    auto& k = profile.kernel_class;
    // A fused attention kernel's fixed cost is not separable from its rate in the sdpa cases: it takes the
    // smallest kernel's (an elementwise op's).
    if (rows.contains(KernelClass::elementwise)) k[KernelClass::attention].fixed_s = k[KernelClass::elementwise].fixed_s;
    return fits;
}

/// How well one attention efficiency (a pass on tensor cores or on the FP32 units) reproduces its cases.
struct AttentionFit {
    std::string what;  ///< "attention forward (tensor cores)", ...
    int samples = 0;
    double efficiency = 0, median_rel_error = 0, worst_rel_error = 0;
};

/// The fused attention kernel of an sdpa operator case (shape batch, heads, sequence, head dimension) as the
/// eager runtime lowers it: the fused kernel alone, with the bytes and multiply-adds the lowering counts.
inline std::optional<Kernel> attention_kernel(const OperatorSample& s) {
    if (s.op != "sdpa" || s.shape.size() != 4 || !(s.class_seconds > 0)) return std::nullopt;
    // "mask=none" or "mask=causal", with ",dropout=P" when the case drops probabilities (additive masks: not modelled).
    const std::string_view layout = s.layout;
    const std::size_t comma = layout.find(",dropout=");
    const std::string_view mask = layout.substr(0, comma);
    if (mask != "mask=none" && mask != "mask=causal") return std::nullopt;
    if (s.dtype != "bf16" && s.dtype != "fp16" && s.dtype != "fp32") return std::nullopt;
    const double b = s.shape[0], h = s.shape[1], t = s.shape[2], d = s.shape[3];
    if (!(b >= 1 && h >= 1 && t >= 1 && d >= 1)) return std::nullopt;
    const bool causal = mask == "mask=causal", forward = s.pass == "fwd";
    const double width = s.dtype == "fp32" ? 4 : 2, n = b * h * t * d, lse = 4 * b * h * t;
    const double core = 2 * b * h * (causal ? t * (t + 1) / 2 : t * t) * d;
    Kernel k;
    k.kind = KernelClass::attention;
    k.part = forward ? StepPart::forward : StepPart::backward;
    k.macs = forward ? core : 2.5 * core;
    k.bytes_read = forward ? 3 * width * n : 4 * width * n + lse;
    k.bytes_written = forward ? width * n + lse : 3 * width * n;
    k.m = t, k.n = t, k.k = d, k.count = b * h;
    k.causal = causal;
    k.simt = s.dtype == "fp32";
    k.dropout = comma != std::string_view::npos;
    return k;
}

/// Fits the attention efficiencies into `profile.attention` from the sdpa cases of op_bench.py (the profiler's
/// time of the fused kernel): per pass and units, t = executed MACs at peak / efficiency + bytes at the achieved
/// bandwidth + the class's fixed cost (engine/roofline.hpp), least squares on relative errors.  Pairs without
/// cases keep their values.
inline std::vector<AttentionFit> fit_attention(const std::vector<OperatorSample>& samples, const Device& device,
                                               EfficiencyProfile& profile) {
    const KernelClassCost& cls = profile.kernel_class[KernelClass::attention];
    const double fixed = cls.fixed_s >= 0 ? cls.fixed_s : profile.launch_s;
    std::array<std::vector<std::array<double, 3>>, 8> rows;  // [dropout * 4 + simt * 2 + backward]: {peak_s, memory_s, t}
    for (const OperatorSample& s : samples) {
        const auto k = attention_kernel(s);
        if (!k || s.bandwidth_b_s > 0) continue;  // another GPU's cases inform the kernel classes only
        const MathClass math = s.dtype == "bf16" ? MathClass::bf16_tensor
                               : s.dtype == "fp16" ? MathClass::fp16_tensor_fp32_acc : MathClass::fp32;
        const Roofline::AttentionParts p = Roofline(device, profile, math).attention(*k);
        if (!(p.peak_s > 0)) continue;
        rows[(k->dropout ? 4 : 0) + (k->simt ? 2 : 0) + (k->part == StepPart::forward ? 0 : 1)].push_back(
            {p.peak_s, p.memory_s + fixed, s.class_seconds});
    }
    std::vector<AttentionFit> fits;
    static constexpr std::array<const char*, 8> names{
        "attention forward (tensor cores)", "attention backward (tensor cores)", "attention forward (FP32 units)",
        "attention backward (FP32 units)", "attention forward, dropout (tensor cores)",
        "attention backward, dropout (tensor cores)", "attention forward, dropout (FP32 units)",
        "attention backward, dropout (FP32 units)"};
    AttentionEfficiency& a = profile.attention;
    std::array<double*, 8> targets{&a.forward,         &a.backward,         &a.simt_forward,         &a.simt_backward,
                                   &a.dropout_forward, &a.dropout_backward, &a.dropout_simt_forward, &a.dropout_simt_backward};
    for (std::size_t g = 0; g < rows.size(); ++g) {
        if (rows[g].size() < 2) continue;
        double num = 0, den = 0;  // t = peak_s · x + rest: minimise Σ (peak_s·x/t + rest/t − 1)²
        for (const auto& [peak_s, rest, t] : rows[g]) {
            num += peak_s / t * (1 - rest / t);
            den += (peak_s / t) * (peak_s / t);
        }
        if (!(num > 0)) continue;
        const double efficiency = std::clamp(den / num, 0.01, 1.0);
        std::vector<double> errors;
        for (const auto& [peak_s, rest, t] : rows[g]) errors.push_back(std::abs((peak_s / efficiency + rest) / t - 1));
        std::sort(errors.begin(), errors.end());
        *targets[g] = efficiency;
        fits.push_back({names[g], static_cast<int>(rows[g].size()), efficiency, errors[errors.size() / 2], errors.back()});
    }
    return fits;
}

/// Fits the slowdown of tensor-core GEMMs whose dimensions are not multiples of 8 elements (16 bytes): cuBLAS
/// falls back to older, narrower-aligned kernels.  Each misaligned case's rate over the median rate of the aligned
/// cases of its dtype (at least 512 in every dimension), median per alignment (even: multiple of 2 only; odd).
/// Returns the number of cases used.
inline int fit_unaligned_gemm(const std::vector<OperatorSample>& samples, EfficiencyProfile& profile) {
    std::map<std::string, std::vector<double>> aligned;
    std::vector<std::pair<std::string, std::pair<bool, double>>> misaligned;  // dtype -> (odd, rate)
    for (const OperatorSample& s : samples) {
        if (s.op != "gemm" || s.shape.size() != 3 || !(s.seconds > 0) || !(s.flops > 0) || s.bandwidth_b_s > 0) continue;
        if (s.dtype != "bf16" && s.dtype != "fp16" && s.dtype != "tf32") continue;
        const auto off = [&](int q) { return std::any_of(s.shape.begin(), s.shape.end(), [&](double d) { return std::fmod(d, q) != 0; }); };
        const double rate = s.flops / s.seconds;
        if (!off(8)) {
            if (std::all_of(s.shape.begin(), s.shape.end(), [](double d) { return d >= 512; })) aligned[s.dtype].push_back(rate);
        } else {
            misaligned.push_back({s.dtype, {off(2), rate}});
        }
    }
    std::array<std::vector<double>, 2> ratios;  // even, odd
    for (const auto& [dtype, odd_rate] : misaligned) {
        auto& base = aligned[dtype];
        if (base.empty()) continue;
        std::sort(base.begin(), base.end());
        ratios[odd_rate.first ? 1 : 0].push_back(odd_rate.second / base[base.size() / 2]);
    }
    int used = 0;
    for (std::size_t i = 0; i < 2; ++i) {
        if (ratios[i].empty()) continue;
        std::sort(ratios[i].begin(), ratios[i].end());
        (i == 0 ? profile.unaligned_even : profile.unaligned_odd) = std::clamp(ratios[i][ratios[i].size() / 2], 0.01, 1.0);
        used += static_cast<int>(ratios[i].size());
    }
    return used;
}

/// Autocast's host costs from op_bench.py's `autocast_host` pairs (the region entered around each call, as a
/// step does).  What autocast adds to a conv (one cast: the weight) is a + c, to a linear on an FP32 input
/// (three casts: input, weight, bias) a + 3c, where a is its wrapper and c one cast with its launch; the
/// no_grad and grad modes give two estimates each, averaged.  Returns the number of costs fitted (0 or 2).
inline int fit_autocast_host(const std::vector<HostSample>& samples, HostCosts& host) {
    std::vector<double> wrapper, cast;
    for (const char* mode : {" (no_grad)", " (grad)"}) {
        const auto find = [&](std::string_view name) -> double {
            for (const HostSample& s : samples)
                if (s.name.starts_with(name) && s.name.ends_with(mode) && s.seconds > 0) return s.seconds;
            return 0;
        };
        const double region = find("autocast region (enter, exit)"), conv = find("conv fp32"),
                     conv_ac = find("conv under autocast"), linear = find("linear fp32"), linear_ac = find("linear under autocast");
        if (!(region > 0 && conv > 0 && conv_ac > 0 && linear > 0 && linear_ac > 0)) continue;
        const double one = conv_ac - region - conv, three = linear_ac - region - linear;
        cast.push_back((three - one) / 2);
        wrapper.push_back(one - (three - one) / 2);
    }
    if (cast.empty()) return 0;
    const auto mean = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); };
    host.cast_s = std::max(0.0, mean(cast) - host.launch_s);
    host.autocast_s = std::max(0.0, mean(wrapper));
    return 2;
}

/// torch.compile's host costs from op_bench.py's `compiled_host` chains.  Without CUDA graphs: per call and per
/// kernel of the forward (host = call + kernels × (kernel + launch), fitted over the chain lengths), and per
/// kernel of the backward from what forward + backward adds over the forward alone (its fixed part, the eager
/// loss and `backward()` call around the compiled graph, is left out).  With CUDA graphs (reduce-overhead): the
/// graph's call and its share per kernel (HostCosts::compiled_graph_call_s, graph_node_s; the latter replaces the
/// raw graph replay's per-kernel figure).  Returns the number of costs fitted.
inline int fit_compiled_host(const std::vector<HostSample>& samples, HostCosts& host) {
    std::map<std::string, const HostSample*> last_infer;  // blocks -> the latest inference chain of that length
    const std::string prefix = "torch.compile default, ";
    // With CUDA graphs (mode "reduce-overhead", inference): the call (guards, the cudagraph tree's checks and the
    // replay's launch) and the host's share per kernel in the graph, a line over the chain lengths.
    std::vector<std::array<double, 3>> graphs;
    for (const HostSample& s : samples)
        if (s.name.starts_with("torch.compile reduce-overhead, ") && s.name.ends_with("inference (no_grad)") &&
            s.seconds > 0 && s.kernels > 0)
            graphs.push_back({1, s.kernels, s.seconds});
    int fitted = 0;
    if (graphs.size() >= 2) {
        const auto [call, per_kernel] = detail::fit_fixed_and_slope(graphs);
        host.compiled_graph_call_s = std::max(0.0, call);
        host.graph_node_s = std::max(0.0, per_kernel);  // replaces fit_host's raw replay figure (counted there)
        ++fitted;
    }
    // Every chain of every report is a point of the line (pooled over leases, as the scaler's pairs are); a forward +
    // backward pairs with the inference of its length measured last before it (the same report's).
    std::vector<std::array<double, 3>> forward, backward;
    for (const HostSample& s : samples) {
        if (!s.name.starts_with(prefix) || !(s.seconds > 0) || !(s.kernels > 0)) continue;
        const std::string blocks = s.name.substr(prefix.size(), s.name.find(' ', prefix.size()) - prefix.size());
        if (s.name.ends_with("inference (no_grad)")) {
            forward.push_back({1, s.kernels, s.seconds});
            last_infer[blocks] = &s;
        } else if (s.name.ends_with("forward + backward") && last_infer.contains(blocks)) {
            const HostSample* infer = last_infer[blocks];
            if (s.kernels > infer->kernels && s.seconds > infer->seconds)
                backward.push_back({1, s.kernels - infer->kernels, s.seconds - infer->seconds});
        }
    }
    if (forward.size() >= 2) {
        const auto [call, per_kernel] = detail::fit_fixed_and_slope(forward);
        host.compiled_call_s = std::max(0.0, call);
        host.compiled_kernel_s = std::max(0.0, per_kernel - host.launch_s);
        fitted += 2;
    }
    if (backward.size() >= 2) {
        const double per_kernel = detail::fit_fixed_and_slope(backward).second;
        host.compiled_backward_kernel_s = std::max(0.0, per_kernel - host.launch_s);
        ++fitted;
    }
    return fitted;
}

/// GradScaler's host costs from op_bench.py's `scaler_host` pairs ("scaler: sgd, 16 tensors of 256": what the
/// scaler adds to the optimizer's step, median of interleaved rounds): a line through every pair's tensor count,
/// pooled over optimizers and reports; the slope is the per-tensor cost, the intercept less what the timeline
/// charges the scaler already (its two foreach operations with their launches, and the found_inf read's
/// synchronisation) its fixed cost.  Returns the number of costs fitted (0 or 2).
inline int fit_scaler_host(const std::vector<HostSample>& samples, HostCosts& host) {
    std::vector<std::array<double, 3>> rows;  // {1, tensors, seconds}
    const std::string_view prefix = "scaler: ";
    for (const HostSample& s : samples) {
        if (!s.name.starts_with(prefix)) continue;
        const std::size_t comma = s.name.find(", ");
        if (comma == std::string::npos) continue;
        char* end = nullptr;
        const double tensors = std::strtod(s.name.c_str() + comma + 2, &end);
        if (!(tensors >= 1) || end == nullptr || std::string_view(end).substr(0, 8) != " tensors") continue;
        rows.push_back({1, tensors, s.seconds});
    }
    bool spread = false;
    for (const auto& r : rows) spread = spread || r[1] != rows.front()[1];
    if (rows.size() < 2 || !spread) return 0;
    const auto [fixed, per_tensor] = detail::fit_fixed_and_slope(rows);
    host.scaler_per_tensor_s = std::max(0.0, per_tensor);
    host.scaler_s = std::max(0.0, fixed - 2 * (host.optimizer_s + host.launch_s) - host.sync_s);
    return 2;
}

/// Where AdamW's per-tensor Python falls (HostCosts::adam_op_shares) from op_bench.py's `adam_split_host` samples
/// (io::adam_split_samples): each operation's per-tensor slope (a line through the tensor counts, at least two)
/// over their sum; a negative slope counts 0.  Returns the number of tensor counts fitted (0: none, the prior stays).
inline int fit_adam_split_host(const std::vector<HostSample>& samples, HostCosts& host) {
    constexpr std::size_t ops = std::tuple_size_v<decltype(HostCosts::adam_op_shares)>;
    std::array<std::vector<std::array<double, 3>>, ops> rows;  // per operation: {1, tensors, seconds}
    int counts = 0;
    const std::string_view prefix = "adamw split: ";
    for (const HostSample& s : samples) {
        if (!s.name.starts_with(prefix)) continue;
        const double tensors = std::strtod(s.name.c_str() + prefix.size(), nullptr);
        if (!(tensors >= 1)) continue;
        if (s.name.ends_with(" (step)")) ++counts;
        const std::size_t at = s.name.rfind(" (op ");
        if (at == std::string::npos || !s.name.ends_with(")")) continue;
        const long k = std::strtol(s.name.c_str() + at + 5, nullptr, 10);
        if (k >= 1 && k <= static_cast<long>(ops)) rows[static_cast<std::size_t>(k - 1)].push_back({1, tensors, s.seconds});
    }
    std::array<double, ops> slopes{};
    double total = 0;
    for (std::size_t k = 0; k < ops; ++k) {
        bool spread = false;
        for (const auto& r : rows[k]) spread = spread || r[1] != rows[k].front()[1];
        if (rows[k].size() < 2 || !spread) return 0;
        slopes[k] = std::max(0.0, detail::fit_fixed_and_slope(rows[k]).second);
        total += slopes[k];
    }
    if (!(total > 0)) return 0;
    for (std::size_t k = 0; k < ops; ++k) host.adam_op_shares[k] = slopes[k] / total;
    return counts;
}

/// The host cases of op_bench.py's `host_speed` group that stand for each speed class (which cost belongs to which
/// class is host_cost_fields' column): Python-called operators, the C++ side (the autograd engine's nodes),
/// the optimizers' Python loops, the view op itself (the probe's op).
inline constexpr std::array<std::pair<HostSpeedClass, std::string_view>, 9> speed_cases{{
    {HostSpeedClass::python, "add (no_grad)"},
    {HostSpeedClass::python, "nn.Linear(64,64) call (no_grad)"},
    {HostSpeedClass::python, "nn.Linear(64,64) call, requires_grad (forward only)"},
    {HostSpeedClass::python, "nn.Linear(64,64) under autocast bf16 (no_grad)"},
    {HostSpeedClass::cpp, "add forward+backward (chain of 100, per op)"},
    {HostSpeedClass::cpp, "nn.Linear(64,64) forward+backward (Sequential of 100, per layer)"},
    {HostSpeedClass::optimizer, "sgd step (foreach), 64 tensors of 256"},
    {HostSpeedClass::optimizer, "adamw step (foreach), 64 tensors of 256"},
    {HostSpeedClass::view, "view (no kernel)"},
}};
/// A round is in the host's slow state when both its probes read at least this many times the fastest probes
/// (probe_floor); in the fast state when both are within fast_probe_factor of them (measurement/samples.hpp).
inline constexpr double slow_probe_factor = 1.7;
inline constexpr std::size_t min_state_rounds = 20;

/// How the host-speed fit went: rounds in each state (all reports), the view op's slow/fast ratio (the mean over
/// the reports fitted), the reports fitted, the classes fitted.
struct SpeedFit {
    std::size_t fast = 0, slow = 0;
    double view_ratio = 0;
    int reports = 0;
    int classes = 0;
};

namespace detail {
inline double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
}  // namespace detail

/// Each class's sensitivity to the host's speed (HostCosts::speed_sensitivity, used by at_host_speed) from
/// op_bench.py's host_speed rounds, one report (one host, one lease) at a time: per case the ratio of its median
/// time per operation in the slow state to the fast state's, less one, over the view op's ratio less one; a
/// class's sensitivity is the median over its cases, then the mean over the reports, clamped to [0, 1].  A report
/// whose host never left one state (fewer than min_state_rounds in either) is skipped; with none fitted the
/// sensitivities keep their values and `SpeedFit::classes` is 0.
inline SpeedFit fit_speed_sensitivity(const std::vector<HostSpeedRound>& rounds, HostCosts& host) {
    SpeedFit fit;
    std::vector<std::string> sources;
    for (const HostSpeedRound& r : rounds)
        if (std::find(sources.begin(), sources.end(), r.source) == sources.end()) sources.push_back(r.source);
    std::array<std::vector<double>, 4> per_report;  // per class: one sensitivity per report fitted
    double view_sum = 0;
    for (const std::string& source : sources) {
        std::vector<const HostSpeedRound*> mine;
        std::vector<double> slowest;
        for (const HostSpeedRound& r : rounds)
            if (r.source == source) mine.push_back(&r), slowest.push_back(std::max(r.probe_s[0], r.probe_s[1]));
        const double base = probe_floor(std::move(slowest));
        std::vector<const HostSpeedRound*> fast, slow;
        for (const HostSpeedRound* r : mine) {
            if (std::max(r->probe_s[0], r->probe_s[1]) <= fast_probe_factor * base) fast.push_back(r);
            else if (std::min(r->probe_s[0], r->probe_s[1]) >= slow_probe_factor * base) slow.push_back(r);
        }
        fit.fast += fast.size();
        fit.slow += slow.size();
        if (fast.size() < min_state_rounds || slow.size() < min_state_rounds) continue;
        const auto median = [&](const std::vector<const HostSpeedRound*>& state, std::string_view name) {
            std::vector<double> t;
            for (const HostSpeedRound* r : state) {
                const auto it = std::find_if(r->per_op_s.begin(), r->per_op_s.end(), [&](const auto& p) { return p.first == name; });
                if (it == r->per_op_s.end())
                    roofplan::detail::fail(source, ": .host_speed: case '", name, "' is missing from a round (every round times every case)");
                t.push_back(it->second);
            }
            return detail::median_of(std::move(t));
        };
        const auto ratio = [&](std::string_view name) { return median(slow, name) / median(fast, name); };
        const double view = ratio("view (no kernel)");
        if (!(view > 1.05))
            roofplan::detail::fail(source, ": .host_speed: the view op runs ", std::to_string(view).substr(0, 5),
                                   "x as long in the slow state as in the fast one; its probes cannot tell the states apart");
        view_sum += view;
        ++fit.reports;
        for (HostSpeedClass c : enum_values<HostSpeedClass>()) {
            std::vector<double> k;
            for (const auto& [cls, name] : speed_cases)
                if (cls == c) k.push_back((ratio(name) - 1) / (view - 1));
            if (!k.empty()) per_report[static_cast<std::size_t>(c)].push_back(detail::median_of(std::move(k)));
        }
    }
    if (fit.reports == 0) return fit;
    fit.view_ratio = view_sum / fit.reports;
    for (std::size_t c = 0; c < per_report.size(); ++c) {
        if (per_report[c].empty()) continue;
        const double mean = std::accumulate(per_report[c].begin(), per_report[c].end(), 0.0) / static_cast<double>(per_report[c].size());
        host.speed_sensitivity[c] = std::clamp(mean, 0.0, 1.0);
        ++fit.classes;
    }
    return fit;
}

/// How the nn.DataParallel host fit went (fit_data_parallel_host): samples used and the fits' median and worst
/// relative errors over them (replicate's Python; the threaded forwards).
struct DataParallelHostFit {
    int replicate_samples = 0, forward_samples = 0, thread_samples = 0;
    double replicate_median = 0, replicate_worst = 0, forward_median = 0, forward_worst = 0;
};

/// nn.DataParallel's host costs from op_bench.py's `dp_host` group (system/parallel.hpp says how a step uses them;
/// HostCosts::dp_replicate_s and dp_forward_scale are the formulas).  replicate's Python at 1-8 replicas of each
/// model: per model a line in the replica count, t = a + N r; its slopes r, least squares over the models' modules
/// and tensors (relative errors), give the per-replica costs `dp_replicate_module_s` and `dp_replicate_tensor_s`;
/// its intercepts a, over a constant and the modules, `dp_replicate_call_s` and `dp_replicate_module_once_s`.  The
/// threaded forwards (at least two models, so that a thread's cost and the share separate): N replicas take
/// N (share × T1 + thread) where one forward alone takes T1 (no thread), a line through every (T1, time / N) of
/// N >= 2: the slope is `dp_lock_share`, the intercept `dp_thread_s`; without them, `dp_thread_s` is a bare
/// thread's start and join (`thread_start_join_us`).
inline DataParallelHostFit fit_data_parallel_host(const std::vector<DataParallelHostSample>& samples, HostCosts& host) {
    using Part = DataParallelHostSample::Part;
    DataParallelHostFit out;
    std::map<std::string, std::vector<const DataParallelHostSample*>> by_model[2];
    std::vector<double> threads;
    for (const DataParallelHostSample& s : samples)
        if (s.part == Part::thread) threads.push_back(s.seconds);
        else by_model[s.part == Part::forward][s.model].push_back(&s);
    // replicate: per model, t = a + N r
    std::vector<std::array<double, 3>> intercepts, slopes;  // {modules, tensors, a or r}
    for (const auto& [model, points] : by_model[0]) {
        if (points.size() < 2) continue;
        double sn = 0, st = 0, snn = 0, snt = 0;
        for (const auto* p : points) sn += p->replicas, st += p->seconds, snn += double(p->replicas) * p->replicas,
                                     snt += p->replicas * p->seconds;
        const double k = static_cast<double>(points.size()), det = k * snn - sn * sn;
        if (!(det > 0)) continue;
        const double r = (k * snt - sn * st) / det, a = (st - r * sn) / k;
        if (a > 0) intercepts.push_back({points.front()->modules, points.front()->tensors, a});
        if (r > 0) slopes.push_back({points.front()->modules, points.front()->tensors, r});
    }
    // y = x1 · c1 + x2 · c2 on relative errors, both >= 0 (a negative c2 is refitted without it)
    const auto non_negative = [](const std::vector<std::array<double, 3>>& rows) {
        auto [c1, c2] = detail::fit_fixed_and_slope(rows);
        if (c2 < 0) {
            double sx = 0, sxx = 0;
            for (const auto& [x1, x2, y] : rows) sx += x1 / y, sxx += (x1 / y) * (x1 / y);
            c1 = sxx > 0 ? sx / sxx : 0;
            c2 = 0;
        }
        return std::pair{std::max(0.0, c1), c2};
    };
    if (slopes.size() >= 2) {
        std::tie(host.dp_replicate_module_s, host.dp_replicate_tensor_s) = non_negative(slopes);
        std::vector<std::array<double, 3>> once;  // {1, modules, a}
        for (const auto& [mods, tens, a] : intercepts) once.push_back({1.0, mods, a});
        if (once.size() >= 2) std::tie(host.dp_replicate_call_s, host.dp_replicate_module_once_s) = non_negative(once);
        std::vector<double> errors;
        for (const auto& [model, points] : by_model[0])
            for (const auto* p : points)
                errors.push_back(std::abs(host.dp_replicate_s(p->modules, p->tensors, p->replicas) / p->seconds - 1));
        out.replicate_samples = static_cast<int>(errors.size());
        out.replicate_median = detail::median_of(errors);
        out.replicate_worst = *std::max_element(errors.begin(), errors.end());
    }
    // the threaded forwards: time / N = share · T1 + thread over N >= 2
    std::vector<std::array<double, 3>> rows;  // {T1, N, time}
    for (const auto& [model, points] : by_model[1]) {
        const auto alone = std::find_if(points.begin(), points.end(), [](const auto* p) { return p->replicas == 1; });
        if (alone == points.end()) continue;
        for (const auto* p : points)
            if (p->replicas >= 2) rows.push_back({(*alone)->seconds, static_cast<double>(p->replicas), p->seconds});
    }
    const bool two_models = std::any_of(rows.begin(), rows.end(), [&](const auto& r) { return r[0] != rows.front()[0]; });
    if (rows.size() >= 2 && two_models) {
        std::vector<std::array<double, 3>> fit_rows;  // {1, T1, time / N} as fit_fixed_and_slope's {k, b, t}
        for (const auto& [t1, n, t] : rows) fit_rows.push_back({1.0, t1, t / n});
        const auto [thread, share] = detail::fit_fixed_and_slope(fit_rows);
        host.dp_lock_share = std::clamp(share, 0.0, 8.0);
        host.dp_thread_s = std::max(0.0, thread);
        std::vector<double> errors;
        for (const auto& [t1, n, t] : rows)
            errors.push_back(std::abs((host.dp_forward_scale(static_cast<int>(n)) * t1 + n * host.dp_thread_s) / t - 1));
        out.forward_samples = static_cast<int>(errors.size());
        out.forward_median = detail::median_of(errors);
        out.forward_worst = *std::max_element(errors.begin(), errors.end());
    } else if (!threads.empty()) {  // no threaded forwards to fit: a bare thread's start and join
        host.dp_thread_s = detail::median_of(threads);
        out.thread_samples = static_cast<int>(threads.size());
    }
    return out;
}

/// Fits the host costs into `profile.host` from the named host cases of op_bench.py (cases it lacks keep the
/// prior).  Returns the number of costs fitted.
inline int fit_host(const std::vector<HostSample>& samples, HostCosts& host) {
    const auto find = [&](std::string_view prefix) -> const HostSample* {
        for (const HostSample& s : samples)
            if (s.name.starts_with(prefix) && s.seconds > 0) return &s;
        return nullptr;
    };
    int fitted = 0;
    const double launch = host.launch_s;
    const HostSample* linear = find("nn.Linear(64,64) call, requires_grad (forward only)");
    if (linear) host.module_s = std::max(0.0, linear->seconds - launch), ++fitted;
    if (const HostSample* add = find("add, requires_grad (forward only")) host.internal_s = std::max(0.0, add->seconds - launch), ++fitted;
    const HostSample* linear_fb = find("nn.Linear(64,64) forward+backward (Sequential");
    if (linear && linear_fb && linear_fb->kernels > linear->kernels) {  // the backward's autograd calls, per kernel
        host.backward_s = std::max(0.0, (linear_fb->seconds - linear->seconds) / (linear_fb->kernels - linear->kernels) - launch);
        ++fitted;
    }
    // Foreach SGD over 16, 64, 256 tensors: host = 3 ops + launches + tensors · per-tensor cost.
    for (const bool adam : {false, true}) {
        std::vector<std::array<double, 3>> rows;  // {tensors, launches, seconds}
        for (const HostSample& s : samples) {
            const std::string prefix = adam ? "adamw step (foreach), " : "sgd step (foreach), ";
            if (!s.name.starts_with(prefix)) continue;
            rows.push_back({std::stod(s.name.substr(prefix.size())), s.kernels, s.seconds});
        }
        if (rows.size() < 2) continue;
        const double ops = adam ? 8.0 : 3.0;
        std::vector<std::array<double, 3>> fit_rows;
        for (const auto& [tensors, launches, t] : rows) fit_rows.push_back({ops, tensors, t - launches * launch});
        const auto [per_op, per_tensor] = detail::fit_fixed_and_slope(fit_rows);
        (adam ? host.adam_per_tensor_s : host.per_tensor_s) = std::max(0.0, per_tensor);
        if (!adam) host.optimizer_s = per_op;
        ++fitted;
    }
    // A raw graph's replay per kernel; fit_compiled_host's reduce-overhead chains replace it when a report has them.
    if (const HostSample* graph = find("CUDA graph replay of 100 tiny adds")) host.graph_node_s = graph->seconds / 100, ++fitted;
    if (const HostSample* view = find("view (no kernel)")) host.view_s = view->seconds, ++fitted;
    const HostSample* call = find("nn.Linear(64,64) call (no_grad)");
    const HostSample* mm = find("mm 64x64 (no_grad)");
    if (call && mm) host.container_s = std::max(0.0, call->seconds - mm->seconds), ++fitted;
    const HostSample* add_fb = find("add forward+backward (chain");
    const HostSample* add_f = find("add, requires_grad (forward only");
    if (add_fb && add_f) host.silent_node_s = std::max(0.0, add_fb->seconds - add_f->seconds), ++fitted;
    fitted += fit_autocast_host(samples, host);
    fitted += fit_compiled_host(samples, host);
    fitted += fit_scaler_host(samples, host);
    return fitted;
}

}  // namespace roofplan::calibration
