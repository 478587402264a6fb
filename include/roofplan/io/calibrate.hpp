// roofplan/io/calibrate.hpp — fit an efficiency profile to micro-benchmark results (never to end-to-end runs).
//
// Inputs: the JSON reports of roofplan-gemm (cuBLASLt GEMMs per precision and shape) and roofplan-bandwidth
// (STREAM copy/scale/triad).  For each math class with GEMM records the engine predicts
//     t_i = x_i / e,   x_i = 2·M·N·K·count · slowdown_i / peak
// where slowdown_i is the engine's own wave-quantization factor for that shape on that device, plus a fixed cost
// b per kernel: t_i = a·x_i + b, a = 1/e, fitted by least squares on relative errors, min Σ ((t_i − a·x_i − b)/t_i)²
// (Eigen, QR).  The median of the classes' b becomes the profile's per-kernel cost launch_s, which stands for it.  Memory efficiency is the mean of the streaming kernels' GB/s over the datasheet bandwidth.  The
// fit's residuals (median and worst relative error) are reported with the profile.
//
// roofplan-conv reports (cuDNN forward, backward-data and backward-filter per shape, precision and layout) fit one
// convolution factor per math class, after the GEMM fit: each record is predicted through the engine itself (a
// one-layer model holding that convolution, the pass's own time), and the factor c minimises the sum of squared
// relative errors Σ ((t̂_i(c) − t_i)/t_i)² (a 1-D search over log c; t̂ is max(compute/c, memory) + launch, not
// linear in 1/c).  Only the records of one layout (default nhwc, what frameworks use with tensor cores) count.
#pragma once

#include <roofplan/engine/predict.hpp>
#include <roofplan/system/collective.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/io/operators.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <map>
#include <string>
#include <vector>

namespace roofplan::io {

/// How well the fitted profile reproduces the measurements it was fitted to, per math class.
struct FitQuality {
    std::string what;     ///< "bf16_tensor", "memory", ...
    int samples = 0;
    double value = 0;     ///< the fitted efficiency
    double median_rel_error = 0;
    double worst_rel_error = 0;
    double fixed_s = 0;   ///< GEMMs: the fitted fixed cost per kernel (seconds)
};

struct Calibration {
    EfficiencyProfile profile;
    std::string device_id;
    std::vector<FitQuality> quality;
    std::vector<std::string> sources;  ///< the files and their dates
};

/// The catalog device a report's GPU name denotes ("NVIDIA H200" → h200, "NVIDIA H100 80GB HBM3" → h100-sxm).
inline std::string device_from_report_name(const std::string& name) {
    std::string low;
    for (char c : name) low += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    struct Rule { const char* contains; const char* id; };
    for (const Rule r : {Rule{"h200", "h200"}, {"h100 pcie", "h100-pcie"}, {"h100", "h100-sxm"},
                         {"a100-pcie-80", "a100-pcie-80gb"}, {"a100-sxm4-40", "a100-sxm4-40gb"}, {"a100", "a100-sxm4-80gb"},
                         {"v100-pcie", "v100-pcie-16gb"}, {"v100", "v100-sxm2-32gb"}, {"t4", "t4"}})
        if (low.find(r.contains) != std::string::npos) return r.id;
    roofplan::detail::fail("cannot tell which catalog device '", name, "' is; pass --device");
}

inline MathClass math_class_of_gemm(const std::string& precision, const std::string& where) {
    if (precision == "fp32") return MathClass::fp32;
    if (precision == "tf32") return MathClass::tf32_tensor;
    if (precision == "fp16") return MathClass::fp16_tensor_fp32_acc;
    if (precision == "bf16") return MathClass::bf16_tensor;
    if (precision == "int8") return MathClass::int8_tensor;
    roofplan::detail::fail(where, ": unknown precision '", precision, "' (expected fp32, tf32, fp16, bf16, int8)");
}

/// The engine's precision for a micro-benchmark precision name (fp16/bf16 kernels are what AMP runs).
inline Precision precision_of_kernel(const std::string& precision, const std::string& where) {
    if (precision == "fp32") return Precision::fp32;
    if (precision == "tf32") return Precision::tf32;
    if (precision == "fp16") return Precision::amp_fp16;
    if (precision == "bf16") return Precision::amp_bf16;
    roofplan::detail::fail(where, ": unknown precision '", precision, "' (expected fp32, tf32, fp16, bf16)");
}

/// The engine's predicted time (seconds) of one roofplan-conv record: a one-layer model holding that convolution
/// (no bias: cuDNN's call has none), trained at the record's batch, and the time of the record's pass.
inline double predict_conv_record(const json& r, const Device& device, const EfficiencyProfile& profile,
                                  const std::string& where) {
    const auto get = [&](std::string_view key) {
        const double v = detail::number(r, key, where);
        if (!(v >= 0 && v <= 1e7 && v == std::floor(v)))
            roofplan::detail::fail(where, ".", key, ": expected an integer in [0, 10^7]");
        return static_cast<std::int64_t>(v);
    };
    if (!r.contains("pass") || !r.at("pass").is_string() || !r.contains("precision") || !r.at("precision").is_string())
        roofplan::detail::fail(where, ": a roofplan-conv record needs string fields pass and precision");
    const std::string pass = r.at("pass").get<std::string>();
    const std::size_t index = pass == "forward" ? 0 : pass == "bwd-data" ? 1 : pass == "bwd-filter" ? 2 : 3;
    if (index == 3)
        roofplan::detail::fail(where, ".pass: unknown pass '", pass, "' (expected forward, bwd-data, bwd-filter)");
    const Precision precision = precision_of_kernel(r.at("precision").get<std::string>(), where);
    layers::Conv2D::Config c;
    c.in_channels = get("c");
    c.in_height = get("h");
    c.in_width = get("w");
    c.out_channels = get("k");
    c.kernel = Extent2{get("r"), get("s")};
    c.stride = get("stride");
    c.padding = get("pad");
    c.dilation = get("dilation");
    c.bias = false;
    PredictRequest request;
    request.batch = get("n");
    request.precision = precision;
    request.mode = Mode::train;
    const auto layer = predict_layer(layers::Conv2D{c}, device, profile, request);
    if (!layer) roofplan::detail::fail(where, ": the engine predicts no work for this convolution");
    return layer->pass[index].value();
}

/// Fits a profile for `device` to the reports (already parsed).  Each report is {"tool": "roofplan-gemm" or
/// "roofplan-bandwidth", "provenance": {...}, "results": [...]}.
inline Calibration calibrate(const std::vector<std::pair<std::string, json>>& reports, const Device& device,
                             const std::string& conv_layout = "nhwc") {
    if (conv_layout != "nhwc" && conv_layout != "nchw")
        roofplan::detail::fail("convolution layout '", conv_layout, "': expected nhwc or nchw");
    Calibration out;
    out.device_id = std::string(device.id.view());
    out.profile = default_profile(device);
    std::map<MathClass, std::vector<std::pair<double, double>>> gemm;  // class -> (x_i, t_i)
    std::vector<double> memory;
    std::map<MathClass, std::vector<std::pair<const json*, std::string>>> conv;  // class -> (record, where)
    OperatorReport operators;
    std::string operator_files;
    for (const auto& [file, report] : reports) {
        if (!report.is_object() || !report.contains("tool") ||
            (!report.contains("results") && report.value("tool", std::string()) != "roofplan-ops"))
            roofplan::detail::fail(file, ": not a roofplan-gemm, roofplan-conv or roofplan-bandwidth report (needs .tool "
                                   "and .results)");
        const std::string tool = report.at("tool").get<std::string>();
        if (tool == "roofplan-ops") {  // framework operators: kernel-class curves and host costs
            OperatorReport ops = operator_report(report, file);
            operators.operators.insert(operators.operators.end(), ops.operators.begin(), ops.operators.end());
            operators.host.insert(operators.host.end(), ops.host.begin(), ops.host.end());
            std::string date = "?";
            if (report.contains("provenance") && report.at("provenance").contains("date_utc"))
                date = report.at("provenance").at("date_utc").get<std::string>();
            out.sources.push_back(file + " (" + tool + ", " + date + ")");
            operator_files += (operator_files.empty() ? "" : ", ") + file;
            continue;
        }
        if (tool != "roofplan-gemm" && tool != "roofplan-bandwidth" && tool != "roofplan-conv")
            roofplan::detail::fail(file, ": unknown tool '", tool,
                                   "' (expected roofplan-gemm, roofplan-conv, roofplan-bandwidth or roofplan-ops)");
        std::string date = "?";
        if (report.contains("provenance") && report.at("provenance").contains("date_utc"))
            date = report.at("provenance").at("date_utc").get<std::string>();
        out.sources.push_back(file + " (" + tool + ", " + date + ")");
        const json& results = report.at("results");
        if (!results.is_array()) roofplan::detail::fail(file, ": .results must be an array");
        for (std::size_t i = 0; i < results.size(); ++i) {
            const json& r = results[i];
            const std::string where = file + ": .results[" + std::to_string(i) + "]";
            if (tool == "roofplan-gemm") {
                if (!r.value("verified", false)) continue;  // only checked results count
                const MathClass m = math_class_of_gemm(r.at("precision").get<std::string>(), where);
                const double M = detail::number(r, "m", where), N = detail::number(r, "n", where),
                             K = detail::number(r, "k", where), C = detail::number(r, "count", where);
                const double t = detail::number(r, "time_s_median", where);
                if (!(t > 0) || !(M > 0) || !(N > 0) || !(K > 0) || !(C > 0))
                    roofplan::detail::fail(where, ": sizes and time must be positive");
                if (device.peak[m] <= 0)
                    roofplan::detail::fail(where, ": device '", device.id.view(), "' has no ", to_string(m), " peak");
                const Roofline roofline(device, out.profile, m);
                const double slowdown = roofline.gemm_slowdown(M, N, K, C);
                gemm[m].emplace_back(2.0 * M * N * K * C * slowdown / roofline.peak_flops_s(), t);
            } else if (tool == "roofplan-conv") {
                if (!r.value("verified", false)) continue;
                if (r.value("layout", std::string()) != conv_layout) continue;
                const std::string prec = r.value("precision", std::string());
                const MathClass m = math_class(device, precision_of_kernel(prec, where), Mode::train);
                if (!(detail::number(r, "time_s_median", where) > 0))
                    roofplan::detail::fail(where, ": time_s_median must be positive");
                conv[m].emplace_back(&r, where);
            } else if (tool == "roofplan-bandwidth") {
                const std::string kernel = r.at("kernel").get<std::string>();
                if (kernel == "copy" || kernel == "scale" || kernel == "triad")
                    memory.push_back(detail::number(r, "gb_per_s", where) / device.bandwidth_gb_s);
            } else {
                roofplan::detail::fail(file, ": unknown tool '", tool,
                                       "' (expected roofplan-gemm, roofplan-conv or roofplan-bandwidth)");
            }
        }
    }
    if (gemm.empty() && memory.empty() && conv.empty() && operators.operators.empty())
        roofplan::detail::fail("no usable measurements in the reports");
    if (!operators.operators.empty()) {
        for (const calibration::ClassFit& f : calibration::fit_kernel_classes(operators.operators, device, out.profile))
            out.quality.push_back({"class " + std::string(to_string(f.kind)), f.samples, f.memory, f.median_rel_error,
                                   f.worst_rel_error, f.fixed_s});
        calibration::fit_host(operators.host, out.profile.host);
        if (const int n = calibration::fit_unaligned_gemm(operators.operators, out.profile))
            out.quality.push_back({"unaligned GEMM (odd)", n, out.profile.unaligned_odd, 0, 0, 0});
        out.profile.kernel_class_source = FixedString<127>(std::string_view(operator_files).substr(0, 127));
        out.profile.host.source = FixedString<63>(std::string_view(operator_files).substr(0, 63));
    }
    const auto quality = [](std::string what, double value, std::vector<double> errors) {
        std::sort(errors.begin(), errors.end());
        FitQuality q{std::move(what), static_cast<int>(errors.size()), value, errors[errors.size() / 2], errors.back()};
        return q;
    };
    for (const auto& [m, points] : gemm) {
        // t_i = a·x_i + b: a = 1/e, b = a fixed cost per kernel (prologue, epilogue, ramp-up) that the engine's
        // per-kernel launch floor stands for.  Weighted by 1/t_i (relative errors): rows [x/t, 1/t] · [a, b] = 1.
        const auto n = static_cast<Eigen::Index>(points.size());
        Eigen::MatrixXd design(n, 2);
        const Eigen::VectorXd ones = Eigen::VectorXd::Ones(n);
        for (Eigen::Index i = 0; i < n; ++i) {
            const auto& [x, t] = points[static_cast<std::size_t>(i)];
            design(i, 0) = x / t;
            design(i, 1) = 1.0 / t;
        }
        Eigen::Vector2d ab = n >= 2 ? Eigen::Vector2d(design.colPivHouseholderQr().solve(ones))
                                    : Eigen::Vector2d(1.0 / design(0, 0), 0.0);
        if (ab(1) < 0) {  // a negative fixed cost is not physical: refit the slope alone
            ab(1) = 0;
            ab(0) = design.col(0).colPivHouseholderQr().solve(ones)(0);
        }
        const double e = std::clamp(1.0 / ab(0), 1e-3, 1.0);
        out.profile.gemm[static_cast<std::size_t>(m)] = e;
        if (m == MathClass::fp16_tensor_fp32_acc)  // cuBLASLt FP16 with FP32 accumulation bounds the FP16-acc class
            out.profile.gemm[static_cast<std::size_t>(MathClass::fp16_tensor_fp16_acc)] = e;
        std::vector<double> errors;
        for (const auto& [x, t] : points) errors.push_back(std::abs(x / e + ab(1) - t) / t);
        FitQuality q = quality(std::string(to_string(m)), e, errors);
        q.fixed_s = ab(1);
        out.quality.push_back(q);
    }
    // The engine charges every kernel `launch_s` on top of max(compute, memory): that is what the fitted fixed cost
    // per GEMM kernel stands for, so the profile takes the median over the classes fitted (one value for every
    // kernel the engine times).
    std::vector<double> fixed;
    for (const FitQuality& q : out.quality) fixed.push_back(q.fixed_s);
    if (!fixed.empty()) {
        std::sort(fixed.begin(), fixed.end());
        out.profile.launch_s = std::clamp(fixed[fixed.size() / 2], 0.0, 1e-4);
    }
    if (!memory.empty()) {
        double mean = 0;
        for (double v : memory) mean += v;
        mean /= static_cast<double>(memory.size());
        out.profile.memory = std::clamp(mean, 1e-3, 1.0);
        std::vector<double> errors;
        for (double v : memory) errors.push_back(std::abs(v - mean) / v);
        out.quality.push_back(quality("memory", out.profile.memory, errors));
    }
    for (const auto& [m, records] : conv) {
        // Σ ((t̂_i(c) − t_i)/t_i)² over log c in [ln 0.05, ln 8]: a grid, then golden-section refinement.
        std::vector<double> measured;
        for (const auto& [r, where] : records) measured.push_back(detail::number(*r, "time_s_median", where));
        const auto errors_at = [&](double c) {
            EfficiencyProfile p = out.profile;
            p.conv_by_class[static_cast<std::size_t>(m)] = c;
            std::vector<double> e;
            for (std::size_t i = 0; i < records.size(); ++i)
                e.push_back((predict_conv_record(*records[i].first, device, p, records[i].second) - measured[i]) /
                            measured[i]);
            return e;
        };
        const auto cost = [&](double log_c) {
            double sum = 0;
            for (double e : errors_at(std::exp(log_c))) sum += e * e;
            return sum;
        };
        const double lo = std::log(0.05), hi = std::log(8.0);
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
        const double c = std::exp((a + b) / 2);
        out.profile.conv_by_class[static_cast<std::size_t>(m)] = c;
        if (m == MathClass::fp16_tensor_fp32_acc)
            out.profile.conv_by_class[static_cast<std::size_t>(MathClass::fp16_tensor_fp16_acc)] = c;
        std::vector<double> abs_errors;
        for (double e : errors_at(c)) abs_errors.push_back(std::abs(e));
        out.quality.push_back(quality("conv." + std::string(to_string(m)) + " (" + conv_layout + ")", c, abs_errors));
    }
    std::string source = "calibrated from " + std::to_string(out.sources.size()) + " report(s)";
    out.profile.source = FixedString<127>(std::string_view(source).substr(0, 127));
    validate(out.profile, "calibrated profile");
    return out;
}

/// The profile as JSON, with the device, the sources and the fit quality.
inline json calibration_json(const Calibration& c) {
    json j = to_json(c.profile);
    j["device"] = c.device_id;
    j["sources"] = c.sources;
    json q = json::array();
    for (const FitQuality& f : c.quality)
        q.push_back({{"what", f.what}, {"samples", f.samples}, {"value", f.value},
                     {"median_rel_error", f.median_rel_error}, {"worst_rel_error", f.worst_rel_error},
                     {"fixed_s", f.fixed_s}});
    j["fit"] = q;
    j["note"] = "fitted to micro-benchmarks (roofplan-gemm, roofplan-conv, roofplan-bandwidth) only; never to "
                "end-to-end results";
    return j;
}

}  // namespace roofplan::io

namespace roofplan::io {

/// The collective parameters fitted to roofplan-nccl reports on one system, and how well they fit.
struct LinkCalibration {
    LinkParameters links;
    LinkKind kind = LinkKind::nvswitch;  ///< the link kind the fit is for (the rings' limiting link)
    FitQuality quality;
    std::vector<std::string> sources;
};

/// Fits base cost, per-step latency and protocol efficiency of the limiting link kind to NCCL measurements of
/// sizes >= `min_bytes`:  t_i = base + steps_i·α + moved_i / (B·η_g), linear in (base, α, 1/η_g) with one η_g per
/// group g = (collective, rank count), least squares on relative errors (Eigen QR).  A negative α or base is not
/// physical: that term is dropped and the rest refitted.  The link efficiency is the best group's η; each group's
/// factor η_g/η goes to LinkParameters::rank_factor, and collective_factor takes the factor of the largest rank
/// count measured for that collective (what unmeasured rank counts use).
inline LinkCalibration calibrate_links(const std::vector<std::pair<std::string, json>>& reports, const System& system,
                                       std::int64_t min_bytes = 0) {
    struct Row { double steps, moved_s, t; int op, ranks; };  // moved_s: moved / (B·1e9)
    std::vector<Row> rows;
    LinkCalibration out;
    bool kind_set = false;
    for (const auto& [file, report] : reports) {
        if (!report.is_object() || report.value("tool", std::string()) != "roofplan-nccl" || !report.contains("results"))
            roofplan::detail::fail(file, ": not a roofplan-nccl report (needs .tool = roofplan-nccl and .results)");
        out.sources.push_back(file);
        const json& results = report.at("results");
        for (std::size_t i = 0; i < results.size(); ++i) {
            const json& r = results[i];
            const std::string where = file + ": .results[" + std::to_string(i) + "]";
            if (!r.value("verified", false)) continue;
            const int ranks = static_cast<int>(detail::number(r, "ranks", where));
            if (ranks < 2) continue;
            const auto bytes = static_cast<std::int64_t>(detail::number(r, "bytes", where));
            if (bytes < min_bytes) continue;
            const RingBandwidth ring = ring_bandwidth(system, first_gpus(system, ranks));
            if (kind_set && ring.kind != out.kind)
                roofplan::detail::fail(where, ": rings limited by different link kinds cannot share one fit");
            out.kind = ring.kind;
            kind_set = true;
            const Collective op = parse_collective(r.at("op").get<std::string>());
            const CollectiveTerms terms = collective_terms(op, ranks, bytes, Algorithm::ring);
            rows.push_back({terms.steps, terms.moved / (ring.gb_s * 1e9), detail::number(r, "time_s_median", where),
                            static_cast<int>(op), ranks > LinkParameters::kMaxRankFactor ? 0 : ranks});
        }
    }
    if (rows.size() < 3) roofplan::detail::fail("need at least 3 verified multi-GPU NCCL measurements to fit, got ",
                                                static_cast<std::int64_t>(rows.size()));
    // Columns: base, alpha, then 1/eta_g for each group g = (collective, rank count) present (rank count 0: more
    // than kMaxRankFactor ranks, one group per collective).
    constexpr int slots = LinkParameters::kMaxRankFactor + 1;
    const auto group = [&](const Row& r) { return r.op * slots + r.ranks; };
    std::vector<int> groups;
    for (const Row& r : rows)
        if (std::find(groups.begin(), groups.end(), group(r)) == groups.end()) groups.push_back(group(r));
    std::sort(groups.begin(), groups.end());
    const auto group_index = [&](const Row& r) {
        return static_cast<int>(std::find(groups.begin(), groups.end(), group(r)) - groups.begin());
    };
    const int ngroups = static_cast<int>(groups.size());
    std::array<bool, 2> use{true, true};
    Eigen::VectorXd coef;  // base, alpha, then 1/eta_g by group index
    for (int attempt = 0; attempt < 3; ++attempt) {
        const int first = static_cast<int>(use[0]) + static_cast<int>(use[1]);
        Eigen::MatrixXd a = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(rows.size()), first + ngroups);
        for (std::size_t i = 0; i < rows.size(); ++i) {
            const auto row = static_cast<Eigen::Index>(i);
            const double w = 1.0 / rows[i].t;
            int c = 0;
            if (use[0]) a(row, c++) = w;
            if (use[1]) a(row, c++) = rows[i].steps * w;
            a(row, first + group_index(rows[i])) = rows[i].moved_s * w;
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
    // The link efficiency is the best group's; the others get factors below 1 relative to it.
    double best_eta = 0;
    for (int g = 0; g < ngroups; ++g) {
        const int op = groups[static_cast<std::size_t>(g)] / slots, n = groups[static_cast<std::size_t>(g)] % slots;
        if (!(coef(2 + g) > 0))
            roofplan::detail::fail("the NCCL measurements do not determine a bandwidth for ",
                                   to_string(static_cast<Collective>(op)), n ? " on " + std::to_string(n) + " ranks" : "");
        best_eta = std::max(best_eta, 1.0 / coef(2 + g));
    }
    best_eta = std::min(best_eta, 1.0);
    out.links.base_s = coef(0);
    out.links.latency_s[static_cast<int>(out.kind)] = coef(1);
    out.links.efficiency[static_cast<int>(out.kind)] = best_eta;
    std::array<int, 5> largest{};  // the largest rank count measured per collective (0: only > kMaxRankFactor)
    for (int g = 0; g < ngroups; ++g) {  // groups ascend by (op, ranks): the last of an op is its largest count
        const int op = groups[static_cast<std::size_t>(g)] / slots, n = groups[static_cast<std::size_t>(g)] % slots;
        const double f = std::min(1.0, (1.0 / coef(2 + g)) / best_eta);
        int& most = largest[static_cast<std::size_t>(op)];
        if (n > 0) out.links.rank_factor[op][n] = f;
        if (n == 0) {  // measured beyond kMaxRankFactor ranks: the best guess for every unmeasured count
            out.links.collective_factor[op] = f;
            most = slots;
        } else if (most != slots && n > most) {
            out.links.collective_factor[op] = f;
            most = n;
        }
    }
    std::vector<double> errors;
    for (const Row& r : rows) {
        const double f = r.ranks > 0 ? out.links.rank_factor[r.op][r.ranks] : out.links.collective_factor[r.op];
        const double p = out.links.base_s + r.steps * coef(1) +
                         r.moved_s / (out.links.efficiency[static_cast<int>(out.kind)] * f);
        errors.push_back(std::abs(p - r.t) / r.t);
    }
    std::sort(errors.begin(), errors.end());
    out.quality = {std::string("links.") + std::string(to_string(out.kind)), static_cast<int>(errors.size()),
                   out.links.efficiency[static_cast<int>(out.kind)], errors[errors.size() / 2], errors.back(), coef(0)};
    return out;
}

inline json to_json(const LinkParameters& lp) {
    json kinds;
    for (LinkKind k : {LinkKind::nvlink, LinkKind::nvswitch, LinkKind::pcie, LinkKind::socket_bus, LinkKind::network})
        kinds[std::string(to_string(k))] = {{"latency_s", lp.latency(k)}, {"efficiency", lp.eff(k)}};
    json factors;
    for (Collective c : {Collective::allreduce, Collective::broadcast, Collective::reduce, Collective::reducescatter,
                         Collective::allgather})
        factors[std::string(to_string(c))] = lp.collective_factor[static_cast<int>(c)];
    json by_ranks = json::object();
    for (Collective c : {Collective::allreduce, Collective::broadcast, Collective::reduce, Collective::reducescatter,
                         Collective::allgather})
        for (int n = 2; n <= LinkParameters::kMaxRankFactor; ++n)
            if (lp.rank_factor[static_cast<int>(c)][n] > 0)
                by_ranks[std::string(to_string(c))][std::to_string(n)] = lp.rank_factor[static_cast<int>(c)][n];
    return {{"base_s", lp.base_s}, {"kinds", kinds}, {"collective_factor", factors},
            {"collective_factor_by_ranks", by_ranks}};
}

/// Collective parameters from a profile's "links" section (defaults for whatever it omits).
inline LinkParameters links_from_json(const json& profile, const std::string& file) {
    LinkParameters lp;
    if (!profile.is_object() || !profile.contains("links")) return lp;
    const json& l = profile.at("links");
    const std::string where = file + ": .links";
    if (l.contains("base_s")) lp.base_s = detail::number(l, "base_s", where);
    if (l.contains("kinds"))
        for (const auto& [name, v] : l.at("kinds").items()) {
            const LinkKind k = parse_link_kind(name, where + ".kinds");
            const std::string p = where + ".kinds." + name;
            lp.latency_s[static_cast<int>(k)] = detail::number(v, "latency_s", p);
            lp.efficiency[static_cast<int>(k)] = detail::number(v, "efficiency", p);
            if (!(lp.efficiency[static_cast<int>(k)] > 0 && lp.efficiency[static_cast<int>(k)] <= 1))
                roofplan::detail::fail(p, ".efficiency must be in (0, 1]");
            if (!(lp.latency_s[static_cast<int>(k)] >= 0 && lp.latency_s[static_cast<int>(k)] < 1))
                roofplan::detail::fail(p, ".latency_s must be in [0, 1) seconds");
        }
    if (l.contains("collective_factor"))
        for (const auto& [name, v] : l.at("collective_factor").items()) {
            const Collective c = parse_collective(name);
            const double f = detail::number(l.at("collective_factor"), name, where + ".collective_factor");
            if (!(f > 0 && f <= 1)) roofplan::detail::fail(where, ".collective_factor.", name, " must be in (0, 1]");
            lp.collective_factor[static_cast<int>(c)] = f;
        }
    if (l.contains("collective_factor_by_ranks")) {
        const json& by = l.at("collective_factor_by_ranks");
        const std::string at = where + ".collective_factor_by_ranks";
        if (!by.is_object()) roofplan::detail::fail(at, ": expected an object of collective -> {ranks: factor}");
        for (const auto& [name, per] : by.items()) {
            const Collective c = parse_collective(name);
            if (!per.is_object()) roofplan::detail::fail(at, ".", name, ": expected an object of rank count -> factor");
            for (const auto& [key, value] : per.items()) {
                int n = 0;
                const auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), n);
                if (ec != std::errc{} || ptr != key.data() + key.size() || n < 2 || n > LinkParameters::kMaxRankFactor)
                    roofplan::detail::fail(at, ".", name, ".", key, ": a rank count must be an integer in [2, ",
                                           LinkParameters::kMaxRankFactor, "]");
                const double f = detail::number(per, key, at + "." + name);
                if (!(f > 0 && f <= 1)) roofplan::detail::fail(at, ".", name, ".", key, " must be in (0, 1]");
                lp.rank_factor[static_cast<int>(c)][n] = f;
            }
        }
    }
    if (!(lp.base_s >= 0 && lp.base_s < 1)) roofplan::detail::fail(where, ".base_s must be in [0, 1) seconds");
    return lp;
}

}  // namespace roofplan::io
