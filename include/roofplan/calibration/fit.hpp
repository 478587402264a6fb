// roofplan/calibration/fit.hpp — fit an efficiency profile and link parameters to micro-benchmark samples (never
// to end-to-end runs).  Typed records in (measurement/samples.hpp; io/reports.hpp reads them from the JSON
// reports), a Calibration out (calibration/calibration.hpp).  Needs Eigen (target roofplan::calibration).
//
// GEMMs, per math class: the engine predicts t_i = x_i / e with x_i = 2·M·N·K·count · slowdown_i / peak, where
// slowdown_i is the engine's own wave-quantization factor for that shape on that device, plus a fixed cost b per
// kernel: t_i = a·x_i + b, a = 1/e, fitted by least squares on relative errors, min Σ ((t_i − a·x_i − b)/t_i)²
// (Eigen, QR).  The median of the classes' b becomes the profile's per-kernel cost launch_s, which stands for it.
// Memory efficiency is the mean of the streaming kernels' GB/s over the datasheet bandwidth.
//
// Convolutions (cuDNN forward, backward-data and backward-filter per shape, precision and layout), after the GEMM
// fit: one factor c per math class, each sample predicted through the engine itself (measurement/predict.hpp),
// minimising Σ ((t̂_i(c) − t_i)/t_i)² by a 1-D search over log c (t̂ is max(compute/c, memory) + launch, not
// linear in 1/c).  Only the samples of one layout (default nhwc, what frameworks use with tensor cores) count.
//
// Collectives (fit_links): base cost, per-step latency and protocol efficiency of the limiting link kind,
// t_i = base + steps_i·α + moved_i / (B·η_g), linear in (base, α, 1/η_g) with one η_g per group g = (collective,
// rank count), least squares on relative errors.  The fit's residuals (median and worst relative error) come
// back with every fitted value.
#pragma once

#include <roofplan/calibration/block_host.hpp>
#include <roofplan/calibration/calibration.hpp>
#include <roofplan/calibration/operators.hpp>
#include <roofplan/calibration/profile.hpp>
#include <roofplan/engine/roofline.hpp>
#include <roofplan/measurement/predict.hpp>
#include <roofplan/measurement/samples.hpp>
#include <roofplan/runtime/eager.hpp>
#include <roofplan/system/collective.hpp>
#include <roofplan/system/topology.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <set>
#include <span>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

namespace roofplan::calibration {

namespace detail {

using roofplan::detail::fail;

/// The quality of a fit from its relative errors: median (the upper middle) and worst.
inline FitQuality quality(std::string what, double value, std::vector<double> errors) {
    std::sort(errors.begin(), errors.end());
    return {std::move(what), static_cast<int>(errors.size()), value, errors[errors.size() / 2], errors.back()};
}

/// A GEMM as the fit sees it: x = 2·M·N·K·count · slowdown / peak (seconds at efficiency 1), t measured.
struct GemmPoint {
    double x, t;
};

/// The GEMM points per math class (ordered by class), x with the device's default tiles.
inline std::map<MathClass, std::vector<GemmPoint>> gemm_points(const std::vector<GemmSample>& samples,
                                                               const Device& device) {
    const EfficiencyProfile defaults = default_profile(device);
    std::map<MathClass, std::vector<GemmPoint>> out;
    for (const GemmSample& g : samples) {
        const MathClass m = gemm_math_class(g.precision);
        if (device.peak[m] <= 0) fail(g.where, ": device '", device.id.view(), "' has no ", to_string(m), " peak");
        const Roofline roofline(device, defaults, m);
        const double slowdown = roofline.gemm_slowdown(g.m, g.n, g.k, g.count);
        out[m].push_back({2.0 * g.m * g.n * g.k * g.count * slowdown / roofline.peak_flops_s(), g.seconds});
    }
    return out;
}

/// t = a·x + b on relative errors: rows [x/t, 1/t] · [a, b] = 1.  A negative fixed cost is not physical: then the
/// slope alone.  One point: the slope through it.
inline Eigen::Vector2d fit_slope_and_fixed(const std::vector<GemmPoint>& points) {
    const auto n = static_cast<Eigen::Index>(points.size());
    Eigen::MatrixXd design(n, 2);
    const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
    for (Eigen::Index i = 0; i < n; ++i) {
        const GemmPoint& p = points[static_cast<std::size_t>(i)];
        design(i, 0) = p.x / p.t;
        design(i, 1) = 1.0 / p.t;
    }
    Eigen::Vector2d ab = n >= 2 ? Eigen::Vector2d(design.colPivHouseholderQr().solve(ones))
                                : Eigen::Vector2d(1.0 / design(0, 0), 0.0);
    if (ab(1) < 0) {
        ab(1) = 0;
        ab(0) = design.col(0).colPivHouseholderQr().solve(ones)(0);
    }
    return ab;
}

/// Fits one math class's GEMM efficiency into `profile`; the quality carries the fitted fixed cost.
inline FitQuality fit_gemm_class(MathClass m, const std::vector<GemmPoint>& points, EfficiencyProfile& profile) {
    const Eigen::Vector2d ab = fit_slope_and_fixed(points);
    const double e = std::clamp(1.0 / ab(0), 1e-3, 1.0);
    profile.gemm[static_cast<std::size_t>(m)] = e;
    if (m == MathClass::fp16_tensor_fp32_acc)  // cuBLASLt FP16 with FP32 accumulation bounds the FP16-acc class
        profile.gemm[static_cast<std::size_t>(MathClass::fp16_tensor_fp16_acc)] = e;
    std::vector<double> errors;
    for (const GemmPoint& p : points) errors.push_back(std::abs(p.x / e + ab(1) - p.t) / p.t);
    FitQuality q = quality(std::string(to_string(m)), e, errors);
    q.fixed_s = ab(1);
    return q;
}

/// The engine charges every kernel `launch_s` on top of max(compute, memory): that is what the fitted fixed cost
/// per GEMM kernel stands for, so the profile takes the median over the classes fitted.
inline void fit_launch(const std::vector<FitQuality>& gemm_classes, EfficiencyProfile& profile) {
    std::vector<double> fixed;
    for (const FitQuality& q : gemm_classes) fixed.push_back(q.fixed_s);
    if (fixed.empty()) return;
    std::sort(fixed.begin(), fixed.end());
    profile.launch_s = std::clamp(fixed[fixed.size() / 2], 0.0, 1e-4);
}

/// Memory efficiency: the mean of the streaming kernels' fractions of the datasheet bandwidth.
inline FitQuality fit_memory(const std::vector<double>& fractions, EfficiencyProfile& profile) {
    double mean = 0;
    for (double v : fractions) mean += v;
    mean /= static_cast<double>(fractions.size());
    profile.memory = std::clamp(mean, 1e-3, 1.0);
    std::vector<double> errors;
    for (double v : fractions) errors.push_back(std::abs(v - mean) / v);
    return quality("memory", profile.memory, errors);
}

/// The minimum of `cost` over [lo, hi]: a grid of 64 steps, then golden-section refinement around the best.
template <class Cost>
double minimize_on_grid(const Cost& cost, double lo, double hi) {
    constexpr int grid = 64;
    int best = 0;
    double best_cost = cost(lo);
    for (int i = 1; i <= grid; ++i) {
        const double v = cost(lo + (hi - lo) * i / grid);
        if (v < best_cost) best_cost = v, best = i;
    }
    double a = lo + (hi - lo) * std::max(best - 1, 0) / grid, b = lo + (hi - lo) * std::min(best + 1, grid) / grid;
    const double golden = (std::sqrt(5.0) - 1) / 2;
    for (int it = 0; it < 40; ++it) {
        const double x1 = b - golden * (b - a), x2 = a + golden * (b - a);
        if (cost(x1) < cost(x2)) b = x2;
        else a = x1;
    }
    return (a + b) / 2;
}

/// Fits the convolution factor of one math class into `profile`: Σ ((t̂_i(c) − t_i)/t_i)² over log c in
/// [ln 0.05, ln 8].
inline FitQuality fit_conv_class(MathClass m, const std::vector<const ConvSample*>& samples, const Device& device,
                                 const std::string& layout, EfficiencyProfile& profile) {
    const auto errors_at = [&](double c) {
        EfficiencyProfile p = profile;
        p.conv_by_class[static_cast<std::size_t>(m)] = c;
        std::vector<double> e;
        for (const ConvSample* s : samples) e.push_back((predicted_seconds(*s, device, p) - s->seconds) / s->seconds);
        return e;
    };
    const auto cost = [&](double log_c) {
        double sum = 0;
        for (double e : errors_at(std::exp(log_c))) sum += e * e;
        return sum;
    };
    const double c = std::exp(minimize_on_grid(cost, std::log(0.05), std::log(8.0)));
    profile.conv_by_class[static_cast<std::size_t>(m)] = c;
    if (m == MathClass::fp16_tensor_fp32_acc)
        profile.conv_by_class[static_cast<std::size_t>(MathClass::fp16_tensor_fp16_acc)] = c;
    std::vector<double> abs_errors;
    for (double e : errors_at(c)) abs_errors.push_back(std::abs(e));
    return quality("conv." + std::string(to_string(m)) + " (" + layout + ")", c, abs_errors);
}

/// The convolution samples of one layout per math class (ordered by class).
inline std::map<MathClass, std::vector<const ConvSample*>> conv_by_class(const std::vector<ConvSample>& samples,
                                                                        const Device& device,
                                                                        const std::string& layout) {
    std::map<MathClass, std::vector<const ConvSample*>> out;
    for (const ConvSample& s : samples)
        if (s.layout == layout) out[math_class(device, training_precision(s.precision), Mode::train)].push_back(&s);
    return out;
}

}  // namespace detail

/// The element width at which `roofplan calibrate` reports a kernel class's rate (memory and SM sides together):
/// bf16/fp16 tensors, "at 2 B/el" in the class rows.
inline constexpr double class_rate_element_bytes = 2.0;

/// The execution model's part of a calibration: kernel-class curves, misaligned-GEMM rates and host costs from
/// framework operator micro-benchmarks (calibration/operators.hpp); nothing when there are none.
inline void fit_operators(const Measurements& samples, const Device& device, Calibration& out) {
    if (samples.operators.empty()) return;
    for (const ClassFit& f : fit_kernel_classes(samples.operators, device, out.profile)) {
        std::string what = "class " + std::string(to_string(f.kind));
        // The class's rate on 2-byte elements, both sides (its memory fraction where it has no SM side).
        const double value = out.profile.kernel_class[f.kind].streamed_fraction(device, out.profile.memory, class_rate_element_bytes);
        if (f.sm_elements_per_cycle > 0) {  // "class layer_norm (memory 0.877 + SM side 5.90 el/cycle; at 2 B/el)":
                                            // cases of two dtypes or two GPUs
            char terms[96];
            std::snprintf(terms, sizeof terms, " (memory %.3f + SM side %.2f el/cycle; at 2 B/el)", f.memory,
                          f.sm_elements_per_cycle);
            what += terms;
        }
        // No case of the profile's GPU: the class is another GPU's fit, moved here by its bandwidth (and by its SMs'
        // cycles where that GPU's cases of two dtypes gave an SM side), and says so.
        if (f.own_gpu_samples == 0) what += " (another GPU's cases only)";
        out.quality.push_back({what, f.samples, value, f.median_rel_error, f.worst_rel_error, f.fixed_s});
    }
    for (const AttentionFit& f : fit_attention(samples.operators, device, out.profile))
        out.quality.push_back({f.what, f.samples, f.efficiency, f.median_rel_error, f.worst_rel_error, 0});
    fit_host(samples.host, out.profile.host);
    if (const int n = fit_unaligned_gemm(samples.operators, out.profile))
        out.quality.push_back({"unaligned GEMM rate (odd; even " + std::to_string(out.profile.unaligned_even).substr(0, 4) + ")",
                               n, out.profile.unaligned_odd, 0, 0, 0});
    std::string files, host_files;  // another GPU's reports (tools/roofplan/calibrate_cmd.hpp) give classes only
    for (const std::string& s : samples.sources)
        if (s.find("roofplan-ops") != std::string::npos) {
            files += (files.empty() ? "" : "; ") + s.substr(0, s.find(" ("));
            if (s.find(other_gpu_source_tag) == std::string::npos)
                host_files += (host_files.empty() ? "" : "; ") + s.substr(0, s.find(" ("));
        }
    out.profile.kernel_class_source = FixedString<127>(std::string_view(files).substr(0, 127));
    if (!host_files.empty()) out.profile.host.source = FixedString<63>(std::string_view(host_files).substr(0, 63));
}

namespace detail {
/// The files among `sources` ("file (tool, date)") that a tool wrote, as a profile's source field.
inline FixedString<127> report_files(const std::vector<std::string>& sources, std::string_view tool) {
    std::string files;
    for (const std::string& src : sources)
        if (src.find(tool) != std::string::npos) files += (files.empty() ? "" : "; ") + src.substr(0, src.find(" ("));
    return FixedString<127>(std::string_view(files).substr(0, 127));
}

/// The quality of a measured table per math class: how well its interpolation between measured points predicts
/// each interior point left out (leave-one-out), the figure that matters for batches or rows not measured; the
/// value is the class's median efficiency.
template <class Entry>
void measured_quality(std::span<const Entry> table, const std::string& prefix, std::vector<FitQuality>& out) {
    std::map<MathClass, std::pair<int, std::vector<double>>> by_class;
    for (std::size_t i = 0; i < table.size(); ++i) {
        auto& [count, errors] = by_class[table[i].math];
        ++count;
        const auto same = [&](std::size_t j) {
            return table[j].key == table[i].key && table[j].math == table[i].math && table[j].pass == table[i].pass &&
                   table[j].conversions == table[i].conversions;
        };
        if (i == 0 || i + 1 == table.size() || !same(i - 1) || !same(i + 1)) continue;
        const Entry &lo = table[i - 1], &hi = table[i + 1], &e = table[i];
        const double x = e.coordinate(), a = lo.coordinate(), b = hi.coordinate();
        const double predicted = lo.efficiency + (hi.efficiency - lo.efficiency) * (x - a) / (b - a);
        errors.push_back(std::abs(e.efficiency / predicted - 1));  // time predicted / measured - 1
    }
    for (auto& [math, entry] : by_class) {
        auto& [count, errors] = entry;
        std::vector<double> values;
        for (const Entry& e : table)
            if (e.math == math) values.push_back(e.efficiency);
        std::sort(values.begin(), values.end());
        FitQuality q = errors.empty() ? FitQuality{"", count, 0, 0, 0, 0} : quality("", 0, std::move(errors));
        q.what = prefix + std::string(to_string(math));
        q.samples = count;
        q.value = values[values.size() / 2];  // the median efficiency
        out.push_back(q);
    }
}
}  // namespace detail

/// The convolutions measured shape by shape (roofplan-conv-shapes) as the profile's table: each pass's kernel as
/// the eager runtime lowers it (runtime/eager.hpp, conv_pass_kernel), its efficiency against its roofline on
/// `device` (calibration/measured_conv.hpp).  A shape measured twice keeps the first sample (reports listed first
/// win, as the host costs).  The quality per math class: how well the table's interpolation between batches
/// predicts each interior batch left out (leave-one-out), the figure that matters for batches not measured.
inline void fit_conv_shapes(const Measurements& samples, const Device& device, Calibration& out) {
    if (samples.conv_shapes.empty()) return;
    std::vector<MeasuredConv> entries;
    entries.reserve(samples.conv_shapes.size());
    std::set<std::tuple<std::uint64_t, MathClass, Pass, double>> seen;  // one sample per point
    for (const ConvShapeSample& s : samples.conv_shapes) {
        const MathClass math = math_class(device, s.precision, Mode::train);
        const std::uint64_t key = s.geometry.key();
        if (!seen.insert(std::tuple(key, math, s.pass, static_cast<double>(s.batch))).second) continue;
        const auto width = static_cast<double>(element_bytes(s.precision));
        const layers::Conv2D layer(s.geometry.config());
        const Kernel k = eager::conv_pass_kernel(layer, s.batch, s.pass, width, s.geometry.layout, HostOp::none);
        const double basis = Roofline(device, out.profile, math).measured_basis_s(k);
        const double efficiency = std::min(8.0, basis / s.seconds);  // FFT/Winograd beat the direct count < 8×
        entries.push_back({s.geometry, key, math, s.pass, false, static_cast<double>(s.batch), efficiency, s.kernels});
        // TF32's layout conversions around the pass (the eager runtime's conversion kernels of a k×k convolution;
        // a 1×1 convolution runs on NCHW tensors as they are): their bytes read and written at the bandwidth.
        if (s.conversion_seconds > 0 && !(s.geometry.kernel_h == 1 && s.geometry.kernel_w == 1)) {
            const eager::ConvConversions b =
                eager::conv_conversion_bytes(layer, static_cast<double>(s.batch), s.pass, width);
            const double moved = 2 * (b.in[0] + b.in[1] + b.out) / (device.bandwidth_gb_s * 1e9);
            entries.push_back({s.geometry, key, math, s.pass, true, static_cast<double>(s.batch),
                               std::min(8.0, moved / s.conversion_seconds), 0});
        }
    }
    out.profile.measured_conv = keep(entries, "calibration (roofplan-conv-shapes)");
    out.profile.measured_conv.on = MeasuredOn::of(device);
    out.profile.measured_conv_source = detail::report_files(samples.sources, "roofplan-conv-shapes");
    detail::measured_quality(out.profile.measured_conv.entries, "conv shapes.", out.quality);
}

/// The linear layers' GEMMs measured shape by shape (roofplan-gemm-shapes) as the profile's table: each pass's
/// kernel as the eager runtime lowers it (runtime/eager.hpp, linear_pass_kernel), its efficiency against its
/// roofline on `device` (calibration/measured_gemm.hpp), and the kernels cuBLAS launched per call.  A shape
/// measured twice keeps the first sample; the quality per math class is the leave-one-out error between row counts.
inline void fit_gemm_shapes(const Measurements& samples, const Device& device, Calibration& out) {
    if (samples.gemm_shapes.empty()) return;
    std::vector<MeasuredGemm> entries;
    entries.reserve(samples.gemm_shapes.size());
    std::set<std::tuple<std::uint64_t, MathClass, Pass, double>> seen;  // one sample per point
    for (const GemmShapeSample& s : samples.gemm_shapes) {
        const MathClass math = math_class(device, s.precision, Mode::train);
        const std::uint64_t key = s.geometry.key();
        if (!seen.insert(std::tuple(key, math, s.pass, static_cast<double>(s.rows))).second) continue;
        const auto width = static_cast<double>(element_bytes(s.precision));
        layers::Linear::Config c;
        c.in_features = s.geometry.in_features, c.out_features = s.geometry.out_features, c.bias = s.geometry.bias;
        c.rows = s.rows;
        const Kernel k = eager::linear_pass_kernel(layers::Linear(c), 1, s.pass, width, HostOp::none);
        const double basis = Roofline(device, out.profile, math).measured_basis_s(k);
        entries.push_back({s.geometry, key, math, s.pass, static_cast<double>(s.rows), std::min(8.0, basis / s.seconds),
                           s.kernels});
    }
    out.profile.measured_gemm = keep(entries, "calibration (roofplan-gemm-shapes)");
    out.profile.measured_gemm.on = MeasuredOn::of(device);
    out.profile.measured_gemm_source = detail::report_files(samples.sources, "roofplan-gemm-shapes");
    detail::measured_quality(out.profile.measured_gemm.entries, "gemm shapes.", out.quality);
}

/// Fits a profile for `device` to micro-benchmark samples: GEMM efficiency per class and the per-kernel cost,
/// memory efficiency, a convolution factor per class (samples of `conv_layout`, nhwc or nchw).  Classes without
/// samples keep the device's defaults.  Example:
///   const Calibration c = calibration::fit(io::read_report_file("h200.json").samples, find_device("h200"));
inline Calibration fit(const Measurements& samples, const Device& device, const std::string& conv_layout = "nhwc") {
    if (conv_layout != "nhwc" && conv_layout != "nchw")
        detail::fail("convolution layout '", conv_layout, "': expected nhwc or nchw");
    Calibration out;
    out.device_id = std::string(device.id.view());
    out.profile = default_profile(device);
    out.sources = samples.sources;
    const auto gemm = detail::gemm_points(samples.gemm, device);
    std::vector<double> memory;
    for (const StreamSample& s : samples.streams)
        if (s.modelled()) memory.push_back(s.gb_per_s / device.bandwidth_gb_s);
    const auto conv = detail::conv_by_class(samples.conv, device, conv_layout);
    if (gemm.empty() && memory.empty() && conv.empty() && samples.operators.empty() && samples.conv_shapes.empty() &&
        samples.gemm_shapes.empty() && samples.host.empty() && samples.kernel_gaps.empty() && samples.graph_kernel_gaps.empty() &&
        samples.host_speed.empty() && samples.data_parallel_host.empty())
        detail::fail("no usable measurements in the reports");
    for (const auto& [m, points] : gemm) out.quality.push_back(detail::fit_gemm_class(m, points, out.profile));
    detail::fit_launch(out.quality, out.profile);
    if (!memory.empty()) out.quality.push_back(detail::fit_memory(memory, out.profile));
    for (const auto& [m, convs] : conv)
        out.quality.push_back(detail::fit_conv_class(m, convs, device, conv_layout, out.profile));
    fit_operators(samples, device, out);
    // The medians over the chains of op_bench.py's kernel_gap group: in a stream, and replayed as one CUDA graph.
    const auto median = [](std::vector<double> v) {
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
        return v[v.size() / 2];
    };
    if (!samples.kernel_gaps.empty()) out.profile.kernel_gap_s = std::clamp(median(samples.kernel_gaps), 0.0, 5e-5);
    if (!samples.graph_kernel_gaps.empty())
        out.profile.graph_kernel_gap_s = std::clamp(median(samples.graph_kernel_gaps), 0.0, out.profile.kernel_gap_s);
    fit_conv_shapes(samples, device, out);
    fit_gemm_shapes(samples, device, out);
    fit_block_host(samples.host, device, out.profile);  // last: its residual is over the runtime's other charges
    // Host costs fitted from operator reports alone (no kernel classes): the profile's host source names them.
    const auto host_fitted = [&] {
        if (out.profile.host.source.view().starts_with("default"))
            out.profile.host.source = FixedString<63>(std::string_view(detail::report_files(samples.sources, "roofplan-ops").view()).substr(0, 63));
    };
    if (const int n = fit_adam_split_host(samples.host, out.profile.host)) {
        const auto& sh = out.profile.host.adam_op_shares;
        char shares[128];
        std::snprintf(shares, sizeof shares, " (then %.3f %.3f %.3f; sqrt %.3f; %.3f %.3f %.3f)", sh[1], sh[2], sh[3], sh[4],
                      sh[5], sh[6], sh[7]);
        out.quality.push_back({std::string("AdamW per-tensor Python: share before its first op") + shares, n, sh[0], 0, 0, 0});
        host_fitted();
    }
    if (!samples.data_parallel_host.empty()) {
        const DataParallelHostFit dp = fit_data_parallel_host(samples.data_parallel_host, out.profile.host);
        const HostCosts& h = out.profile.host;
        const auto us = [](double seconds) {
            std::string text = std::to_string(std::round(seconds * 1e8) / 100);  // microseconds, two decimals
            return text.substr(0, text.find('.') + 3);
        };
        if (dp.replicate_samples > 0)
            out.quality.push_back({"nn.DataParallel replicate per module and replica (per tensor " + us(h.dp_replicate_tensor_s) +
                                       " us; once per call " + us(h.dp_replicate_call_s) + " us + " +
                                       us(h.dp_replicate_module_once_s) + " us a module)",
                                   dp.replicate_samples, 0, dp.replicate_median, dp.replicate_worst, h.dp_replicate_module_s});
        if (dp.forward_samples > 0)
            out.quality.push_back({"nn.DataParallel lock share (fixed: a thread)", dp.forward_samples, h.dp_lock_share,
                                   dp.forward_median, dp.forward_worst, h.dp_thread_s});
        if (dp.thread_samples > 0)
            out.quality.push_back({"nn.DataParallel thread: a bare thread started and joined (fixed)", dp.thread_samples,
                                   0, 0, 0, h.dp_thread_s});
        if (dp.replicate_samples > 0 || dp.forward_samples > 0 || dp.thread_samples > 0) host_fitted();
    }
    if (const SpeedFit speed = fit_speed_sensitivity(samples.host_speed, out.profile.host); !samples.host_speed.empty()) {
        // One line per class fitted (value: its sensitivity), or a line saying the host stayed in one state.
        const std::string states = std::to_string(speed.fast) + " fast / " + std::to_string(speed.slow) + " slow rounds, " +
                                   std::to_string(speed.reports) + " report(s) fitted";
        if (speed.classes > 0) host_fitted();
        if (speed.classes == 0)
            out.quality.push_back({"host speed: one state only (" + states + "), sensitivities kept", 0, 0, 0, 0, 0});
        else
            for (HostSpeedClass c : enum_values<HostSpeedClass>())
                out.quality.push_back({"host speed sensitivity " + std::string(to_string(c)) + " (" + states + ")",
                                       static_cast<int>(speed.fast + speed.slow),
                                       out.profile.host.speed_sensitivity[static_cast<std::size_t>(c)], 0, 0, 0});
    }
    const std::string source = "calibrated from " + std::to_string(out.sources.size()) + " report(s)";
    out.profile.source = FixedString<127>(std::string_view(source).substr(0, 127));
    validate(out.profile, "calibrated profile");
    return out;
}

namespace detail {

/// One collective as the link fit sees it: t = base + steps·α + moved_s / η_g, moved_s = moved / (B·1e9).
struct LinkRow {
    double steps, moved_s, t;
    Collective op;
    int ranks;  ///< 0: more than LinkParameters::kMaxRankFactor (one group per collective)
};

/// The rows of the multi-GPU samples of at least `min_bytes`, and the link kind that limits their rings.
inline std::pair<std::vector<LinkRow>, LinkKind> link_rows(const std::vector<CollectiveSample>& samples,
                                                           const System& system, std::int64_t min_bytes) {
    std::vector<LinkRow> rows;
    LinkKind kind = LinkKind::nvswitch;
    bool kind_set = false;
    for (const CollectiveSample& s : samples) {
        if (s.ranks < 2 || s.bytes < min_bytes) continue;
        const RingBandwidth ring = ring_bandwidth(system, first_gpus(system, s.ranks));
        if (kind_set && ring.kind != kind) fail(s.where, ": rings limited by different link kinds cannot share one fit");
        kind = ring.kind;
        kind_set = true;
        const CollectiveTerms terms = collective_terms(s.op, s.ranks, s.bytes, Algorithm::ring);
        rows.push_back({terms.steps, terms.moved / (ring.gb_s * 1e9), s.seconds, s.op,
                        s.ranks > LinkParameters::kMaxRankFactor ? 0 : s.ranks});
    }
    if (rows.size() < 3)
        fail("need at least 3 verified multi-GPU NCCL measurements to fit, got ", static_cast<std::int64_t>(rows.size()));
    return {rows, kind};
}

inline constexpr int link_slots = LinkParameters::kMaxRankFactor + 1;
/// The group of a row, (collective, rank count) as one number: the order of the fit's columns.
inline int link_group(Collective op, int ranks) { return static_cast<int>(op) * link_slots + ranks; }
inline Collective group_op(int group) { return static_cast<Collective>(group / link_slots); }
inline int group_ranks(int group) { return group % link_slots; }

/// Least squares on relative errors for (base, α, 1/η_g by group); a negative base or α is dropped and the rest
/// refitted.  Returns base, α, then 1/η_g in the order of `groups` (sorted).
inline Eigen::VectorXd solve_links(const std::vector<LinkRow>& rows, const std::vector<int>& groups) {
    const auto index_of = [&](const LinkRow& r) {
        return static_cast<int>(std::find(groups.begin(), groups.end(), link_group(r.op, r.ranks)) - groups.begin());
    };
    const int ngroups = static_cast<int>(groups.size());
    std::array<bool, 2> use{true, true};
    Eigen::VectorXd coef;
    for (int attempt = 0; attempt < 3; ++attempt) {
        const int first = static_cast<int>(use[0]) + static_cast<int>(use[1]);
        Eigen::MatrixXd a = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()), first + ngroups);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto row = static_cast<Eigen::Index>(i);
            const double w = 1.0 / rows[i].t;
            int c = 0;
            if (use[0]) a(row, c++) = w;
            if (use[1]) a(row, c++) = rows[i].steps * w;
            a(row, first + index_of(rows[i])) = rows[i].moved_s * w;
        }
        const Eigen::VectorXd x = a.colPivHouseholderQr().solve(Eigen::VectorXd::Ones(a.rows()));
        coef = Eigen::VectorXd::Zero(2 + ngroups);
        int c = 0;
        if (use[0]) coef(0) = x(c++);
        if (use[1]) coef(1) = x(c++);
        for (int g = 0; g < ngroups; ++g) coef(2 + g) = x(first + g);
        if (coef(0) >= 0 && coef(1) >= 0) break;
        if (coef(1) < 0) use[1] = false;
        else use[0] = false;
    }
    return coef;
}

/// The link efficiency is the best group's η (at most 1); each group's factor η_g/η goes to rank_factor, and
/// collective_factor takes the factor of the largest rank count measured for that collective (what unmeasured
/// rank counts use).  `groups` ascend by (collective, ranks).
inline void assign_link_parameters(const Eigen::VectorXd& coef, const std::vector<int>& groups, LinkKind kind,
                                   LinkParameters& links) {
    double best_eta = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const double inv_eta = coef(2 + static_cast<Eigen::Index>(g));
        if (!(inv_eta > 0)) {
            const int n = group_ranks(groups[g]);
            fail("the NCCL measurements do not determine a bandwidth for ", to_string(group_op(groups[g])),
                 n ? " on " + std::to_string(n) + " ranks" : "");
        }
        best_eta = std::max(best_eta, 1.0 / inv_eta);
    }
    best_eta = std::min(best_eta, 1.0);
    links.base_s = coef(0);
    links.latency_s[kind] = coef(1);
    links.efficiency[kind] = best_eta;
    EnumArray<Collective, int> largest{};  // 0: only > kMaxRankFactor
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const Collective op = group_op(groups[g]);
        const int n = group_ranks(groups[g]);
        const double f = std::min(1.0, (1.0 / coef(2 + static_cast<Eigen::Index>(g))) / best_eta);
        int& most = largest[op];
        if (n > 0) links.rank_factor[op][static_cast<std::size_t>(n)] = f;
        if (n == 0) {  // measured beyond kMaxRankFactor ranks: the best guess for every unmeasured count
            links.collective_factor[op] = f;
            most = link_slots;
        } else if (most != link_slots && n > most) {
            links.collective_factor[op] = f;
            most = n;
        }
    }
}

}  // namespace detail

/// Fits base cost, per-step latency and protocol efficiency of the limiting link kind, and a bandwidth factor per
/// (collective, rank count), to NCCL samples of at least `min_bytes` with the ranks on the first GPUs of `system`.
inline LinkCalibration fit_links(const std::vector<CollectiveSample>& samples, const System& system,
                                 std::int64_t min_bytes = 0) {
    const auto [rows, kind] = detail::link_rows(samples, system, min_bytes);
    std::vector<int> groups;
    for (const detail::LinkRow& r : rows) groups.push_back(detail::link_group(r.op, r.ranks));
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    const Eigen::VectorXd coef = detail::solve_links(rows, groups);
    LinkCalibration out;
    out.kind = kind;
    detail::assign_link_parameters(coef, groups, kind, out.links);
    std::vector<double> errors;
    for (const detail::LinkRow& r : rows) {
        const double f = r.ranks > 0 ? out.links.rank_factor[r.op][static_cast<std::size_t>(r.ranks)]
                                     : out.links.collective_factor[r.op];
        const double p = out.links.base_s + r.steps * coef(1) + r.moved_s / (out.links.efficiency[kind] * f);
        errors.push_back(std::abs(p - r.t) / r.t);
    }
    out.quality = detail::quality("links." + std::string(to_string(kind)), out.links.efficiency[kind], errors);
    out.quality.fixed_s = coef(0);
    return out;
}

}  // namespace roofplan::calibration
