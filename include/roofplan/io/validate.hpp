// roofplan/io/validate.hpp — predicted vs measured, case by case, through the engine's own formulas.
//
// Every measured case of a micro-benchmark report (roofplan-gemm, roofplan-bandwidth, roofplan-nccl; the runner's
// host suite writes the same schemas) or of an end-to-end report (roofplan-e2e) is predicted with a device and
// an efficiency profile, through the engine's roofline module (engine/roofline.hpp):
//   GEMM       t = max(2·M·N·K·count · slowdown / (peak · e_class), bytes / (bandwidth · e_memory)) + launch
//              (slowdown: the engine's wave-quantization factor, Roofline::gemm_slowdown)
//   streaming  t = bytes / (bandwidth · e_memory) + launch
//   conv       the engine's own pass time of a one-layer model (predict_conv_record, as calibrate fits it)
//   NCCL       collective_time (ring) with the link parameters → busbw
//   end to end Predictor on the zoo model → samples/s
// The error of a case is  predicted rate / measured rate − 1  (= measured time / predicted time − 1): positive when
// the model is optimistic.
#pragma once

#include <roofplan/engine/predict.hpp>
#include <roofplan/io/calibrate.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/models/zoo.hpp>
#include <roofplan/system/collective.hpp>
#include <roofplan/system/topology.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace roofplan::io {

/// One measured case beside its prediction (rates: TFLOPS, GB/s, busbw GB/s or samples/s — `unit` says which).
struct CaseComparison {
    std::string group;  ///< "bf16_tensor", "memory", "allreduce", "e2e"
    std::string label;  ///< "8192x8192x8192", "copy", "4 GPUs 16 MiB", "resnet50 b256 amp-bf16"
    std::string unit;
    double measured = 0;
    double predicted = 0;
    double size = 0;  ///< NCCL: message bytes (for size cut-offs); else 0
    /// predicted / measured − 1: positive when the model is optimistic.
    [[nodiscard]] double error() const { return predicted / measured - 1.0; }
};

/// Median, 90th percentile (nearest rank) and worst of |error| over cases.
struct ErrorSummary {
    int samples = 0;
    double median = 0;
    double p90 = 0;
    double worst = 0;
};

inline ErrorSummary summarize(const std::vector<CaseComparison>& cases) {
    std::vector<double> e;
    for (const CaseComparison& c : cases) e.push_back(std::abs(c.error()));
    ErrorSummary s;
    s.samples = static_cast<int>(e.size());
    if (e.empty()) return s;
    std::sort(e.begin(), e.end());
    const std::size_t n = e.size();
    s.median = n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
    const auto rank = static_cast<std::size_t>(std::ceil(0.9 * static_cast<double>(n)));  // nearest rank, 1-based
    s.p90 = e[std::max<std::size_t>(rank, 1) - 1];
    s.worst = e.back();
    return s;
}

/// The engine's time for one GEMM (count of them) of m×n×k in math class `m` that moves `bytes`.
inline double predict_gemm_seconds(MathClass math, double m, double n, double k, double count, double bytes,
                                   const Device& device, const EfficiencyProfile& profile) {
    if (device.peak[math] <= 0)
        roofplan::detail::fail("device '", device.id.view(), "' has no ", to_string(math), " peak");
    KernelWork work;
    work.macs = m * n * k * count;
    work.bytes = bytes;
    work.m = m;
    work.n = n;
    work.k = k;
    work.count = count;
    return Roofline(device, profile, math).time(work).total_s;
}

/// The engine's time for a streaming kernel that moves `bytes`.
inline double predict_stream_seconds(double bytes, const Device& device, const EfficiencyProfile& profile) {
    KernelWork work;
    work.bytes = bytes;
    return Roofline(device, profile, MathClass::fp32).time(work).total_s;
}

namespace detail {
inline double element_bytes_of_gemm(const std::string& precision, bool output) {
    if (precision == "fp32" || precision == "tf32") return 4;
    if (precision == "fp16" || precision == "bf16") return 2;
    return output ? 4 : 1;  // int8 in, int32 out
}
inline std::string size_text(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB"};
    int u = 0;
    while (bytes >= 1024 && u < 3) {
        bytes /= 1024;
        ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g %s", bytes, units[u]);
    return buf;
}
inline void check_report(const std::string& file, const json& report, const std::string& tool) {
    if (!report.is_object() || report.value("tool", std::string()) != tool || !report.contains("results") ||
        !report.at("results").is_array())
        roofplan::detail::fail(file, ": not a ", tool, " report (needs .tool = ", tool, " and a .results array)");
}
}  // namespace detail

/// Predicted vs measured for every verified GEMM of a roofplan-gemm report.
inline std::vector<CaseComparison> compare_gemm(const std::string& file, const json& report, const Device& device,
                                                const EfficiencyProfile& profile) {
    detail::check_report(file, report, "roofplan-gemm");
    std::vector<CaseComparison> out;
    const json& results = report.at("results");
    for (std::size_t i = 0; i < results.size(); ++i) {
        const json& r = results[i];
        if (!r.value("verified", false)) continue;
        const std::string where = file + ": .results[" + std::to_string(i) + "]";
        const std::string precision = r.at("precision").get<std::string>();
        const MathClass math = math_class_of_gemm(precision, where);
        const double m = detail::number(r, "m", where), n = detail::number(r, "n", where),
                     k = detail::number(r, "k", where), count = detail::number(r, "count", where),
                     t = detail::number(r, "time_s_median", where);
        if (!(t > 0) || !(m > 0) || !(n > 0) || !(k > 0) || !(count > 0))
            roofplan::detail::fail(where, ": sizes and time must be positive");
        double bytes = 0;
        if (r.contains("bytes_a") && r.contains("bytes_b") && r.contains("bytes_d"))
            bytes = detail::number(r, "bytes_a", where) + detail::number(r, "bytes_b", where) +
                    detail::number(r, "bytes_d", where);
        else
            bytes = count * ((m * k + k * n) * detail::element_bytes_of_gemm(precision, false) +
                             m * n * detail::element_bytes_of_gemm(precision, true));
        const double ops = 2.0 * m * n * k * count;
        const double predicted = predict_gemm_seconds(math, m, n, k, count, bytes, device, profile);
        std::string label = std::to_string(static_cast<std::int64_t>(m)) + "x" + std::to_string(static_cast<std::int64_t>(n)) +
                            "x" + std::to_string(static_cast<std::int64_t>(k));
        if (count != 1) label += " x" + std::to_string(static_cast<std::int64_t>(count));
        if (r.contains("label") && r.at("label").is_string() && !r.at("label").get<std::string>().empty())
            label += " (" + r.at("label").get<std::string>() + ")";
        out.push_back({std::string(to_string(math)), label, precision == "int8" ? "TOPS" : "TFLOPS", ops / t / 1e12,
                       ops / predicted / 1e12, 0});
    }
    return out;
}

/// Predicted vs measured for the streaming kernels (copy, scale, triad) of a roofplan-bandwidth report.
inline std::vector<CaseComparison> compare_bandwidth(const std::string& file, const json& report, const Device& device,
                                                     const EfficiencyProfile& profile) {
    detail::check_report(file, report, "roofplan-bandwidth");
    std::vector<CaseComparison> out;
    const json& results = report.at("results");
    for (std::size_t i = 0; i < results.size(); ++i) {
        const json& r = results[i];
        const std::string where = file + ": .results[" + std::to_string(i) + "]";
        const std::string kernel = r.at("kernel").get<std::string>();
        if (kernel != "copy" && kernel != "scale" && kernel != "triad") continue;
        const double bytes = detail::number(r, "bytes_per_iteration", where);
        const double t = detail::number(r, "median_s", where);
        if (!(bytes > 0) || !(t > 0)) roofplan::detail::fail(where, ": bytes and time must be positive");
        out.push_back({"memory", kernel + " " + detail::size_text(bytes), "GB/s", bytes / t / 1e9,
                       bytes / predict_stream_seconds(bytes, device, profile) / 1e9, bytes});
    }
    return out;
}

/// Predicted vs measured busbw for every verified multi-GPU collective of a roofplan-nccl report, the ranks
/// placed on the first GPUs of `system`.
inline std::vector<CaseComparison> compare_nccl(const std::string& file, const json& report, const System& system,
                                                const LinkParameters& links) {
    detail::check_report(file, report, "roofplan-nccl");
    std::vector<CaseComparison> out;
    const json& results = report.at("results");
    for (std::size_t i = 0; i < results.size(); ++i) {
        const json& r = results[i];
        if (!r.value("verified", false)) continue;
        const std::string where = file + ": .results[" + std::to_string(i) + "]";
        const int ranks = static_cast<int>(detail::number(r, "ranks", where));
        if (ranks < 2) continue;
        const auto bytes = static_cast<std::int64_t>(detail::number(r, "bytes", where));
        const Collective op = parse_collective(r.at("op").get<std::string>());
        const CollectiveTime c = collective_time(system, op, bytes, CollectivePlace{first_gpus(system, ranks), 1},
                                                 Algorithm::ring, links);
        out.push_back({std::string(to_string(op)),
                       std::to_string(ranks) + " GPUs " + detail::size_text(static_cast<double>(bytes)), "busbw GB/s",
                       detail::number(r, "busbw_GBps", where), c.busbw_gb_s, static_cast<double>(bytes)});
    }
    return out;
}

/// Predicted vs measured for every verified convolution (one layout, default nhwc) of a roofplan-conv report,
/// each predicted by the engine as calibrate does (predict_conv_record: a one-layer model, the record's pass).
/// The group is "conv." + the math class; rates are the report's TFLOPS and the same work over the predicted time.
inline std::vector<CaseComparison> compare_conv(const std::string& file, const json& report, const Device& device,
                                                const EfficiencyProfile& profile, const std::string& layout = "nhwc") {
    detail::check_report(file, report, "roofplan-conv");
    std::vector<CaseComparison> out;
    const json& results = report.at("results");
    for (std::size_t i = 0; i < results.size(); ++i) {
        const json& r = results[i];
        if (!r.value("verified", false) || r.value("layout", std::string()) != layout) continue;
        const std::string where = file + ": .results[" + std::to_string(i) + "]";
        const double t = detail::number(r, "time_s_median", where);
        const double rate = detail::number(r, "tflops", where);
        if (!(t > 0) || !(rate > 0)) roofplan::detail::fail(where, ": time_s_median and tflops must be positive");
        const std::string precision = r.value("precision", std::string());
        const MathClass m = math_class(device, precision_of_kernel(precision, where), Mode::train);
        const double predicted = predict_conv_record(r, device, profile, where);
        out.push_back({"conv." + std::string(to_string(m)),
                       r.value("label", std::string("conv")) + " " + r.value("pass", std::string()) + " " + precision,
                       "TFLOPS", rate, rate * t / predicted, 0});
    }
    return out;
}

/// The zoo model an end-to-end case measures ("resnet50" → resnet50, "bert-qa" → bert-squad at the case's seq).
inline std::string e2e_model_of(const std::string& name) {
    if (name == "resnet50") return "resnet50";
    if (name == "bert-qa") return "bert-squad";
    roofplan::detail::fail("unknown end-to-end case '", name, "'; known: resnet50, bert-qa");
}

/// Predicted vs measured training throughput for the single-GPU cases of a roofplan-e2e report (records with
/// gpus > 1 are data-parallel runs and are skipped).
inline std::vector<CaseComparison> compare_e2e(const std::string& file, const json& report, const Device& device,
                                               const EfficiencyProfile& profile) {
    detail::check_report(file, report, "roofplan-e2e");
    std::vector<CaseComparison> out;
    const json& results = report.at("results");
    for (std::size_t i = 0; i < results.size(); ++i) {
        const json& r = results[i];
        const std::string where = file + ": .results[" + std::to_string(i) + "]";
        if (r.contains("gpus") && detail::number(r, "gpus", where) != 1) continue;  // data-parallel runs: not one GPU
        const std::string name = r.at("case").get<std::string>();
        const auto& entry = models::find_model(e2e_model_of(name));
        const std::int64_t size = static_cast<std::int64_t>(
            entry.uses_seq() ? r.value("seq", static_cast<double>(entry.default_size))
                             : r.value("image_size", static_cast<double>(entry.default_size)));
        const Model model = entry.uses_seq() ? entry.build({.seq = size}) : entry.build({.image_size = size});
        PredictRequest request;
        request.batch = static_cast<std::int64_t>(detail::number(r, "batch", where));
        request.precision = parse_precision(r.value("precision", std::string("fp32")));
        request.optimizer = parse_optimizer(r.value("optimizer", std::string("sgd")));
        request.per_layer = false;
        const Prediction p = Predictor(model)(device, profile, request);
        out.push_back({"e2e",
                       name + " (" + std::string(entry.id) + (entry.uses_seq() ? " seq " : " ") + std::to_string(size) +
                           (entry.uses_seq() ? "" : "px") + ", batch " + std::to_string(request.batch) + ", " +
                           std::string(to_string(request.precision)) + ", " + std::string(to_string(request.optimizer)) + ")",
                       "samples/s", detail::number(r, "throughput_samples_per_s", where), p.throughput_samples_per_s, 0});
    }
    return out;
}

/// Every case of the single-GPU reports (roofplan-gemm, roofplan-bandwidth, roofplan-conv, roofplan-e2e); other
/// tools (roofplan-nccl, roofplan-dp4a) are skipped.
inline std::vector<CaseComparison> compare_reports(const std::vector<std::pair<std::string, json>>& reports,
                                                   const Device& device, const EfficiencyProfile& profile) {
    std::vector<CaseComparison> out;
    for (const auto& [file, report] : reports) {
        const std::string tool = report.is_object() ? report.value("tool", std::string()) : std::string();
        std::vector<CaseComparison> part;
        if (tool == "roofplan-gemm") part = compare_gemm(file, report, device, profile);
        else if (tool == "roofplan-bandwidth") part = compare_bandwidth(file, report, device, profile);
        else if (tool == "roofplan-conv") part = compare_conv(file, report, device, profile);
        else if (tool == "roofplan-e2e") part = compare_e2e(file, report, device, profile);
        else continue;
        out.insert(out.end(), part.begin(), part.end());
    }
    return out;
}

/// The cases of one group ("bf16_tensor", "memory", ...), optionally only those of at least `min_size` bytes.
inline std::vector<CaseComparison> select(const std::vector<CaseComparison>& cases, const std::string& group,
                                          double min_size = 0) {
    std::vector<CaseComparison> out;
    for (const CaseComparison& c : cases)
        if ((group.empty() || c.group == group) && c.size >= min_size) out.push_back(c);
    return out;
}

}  // namespace roofplan::io
