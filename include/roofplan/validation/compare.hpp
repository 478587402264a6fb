// roofplan/validation/compare.hpp — predicted vs measured, case by case, through the engine (never a fit).
//
// Every sample (measurement/samples.hpp) is predicted with a device and an efficiency profile:
//   GEMM, streaming, convolution   the engine's time for the case (measurement/predict.hpp)
//   NCCL                           collective_time (ring) with the link parameters → busbw
//   end to end                     Predictor on the zoo model → samples/s
// and set beside the measured rate.  The error of a case is  predicted rate / measured rate − 1  (= measured time
// / predicted time − 1): positive when the model is optimistic.
#pragma once

#include <roofplan/calibration/profile.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/measurement/predict.hpp>
#include <roofplan/measurement/samples.hpp>
#include <roofplan/models/zoo.hpp>
#include <roofplan/system/collective.hpp>
#include <roofplan/system/topology.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace roofplan::validation {

/// One measured case beside its prediction (rates: TFLOPS, GB/s, busbw GB/s or samples/s — `unit` says which).
struct CaseComparison {
    std::string group;  ///< "bf16_tensor", "memory", "conv.bf16_tensor", "allreduce", "e2e"
    std::string label;  ///< "8192x8192x8192", "copy 512 MiB", "4 GPUs 16 MiB", "resnet50 (resnet50 224px, ...)"
    std::string unit;
    double measured = 0;
    double predicted = 0;
    double size = 0;  ///< streaming and NCCL: bytes (for size cut-offs); else 0
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

/// The cases of one group ("bf16_tensor", "memory", ...; empty: all), only those of at least `min_size` bytes.
inline std::vector<CaseComparison> select(const std::vector<CaseComparison>& cases, const std::string& group,
                                          double min_size = 0) {
    std::vector<CaseComparison> out;
    for (const CaseComparison& c : cases)
        if ((group.empty() || c.group == group) && c.size >= min_size) out.push_back(c);
    return out;
}

namespace detail {
/// "512 MiB": a byte count in binary units, for case labels.
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
inline std::string integer_text(double v) { return std::to_string(static_cast<std::int64_t>(v)); }
}  // namespace detail

/// Predicted vs measured rate for GEMMs ("8192x8192x8192", "12288x768x3072 (bert.ffn.down)").
inline std::vector<CaseComparison> compare_gemm(const std::vector<GemmSample>& samples, const Device& device,
                                                const EfficiencyProfile& profile) {
    std::vector<CaseComparison> out;
    for (const GemmSample& g : samples) {
        const double ops = 2.0 * g.m * g.n * g.k * g.count;
        const double predicted = predicted_seconds(g, device, profile);
        std::string label = detail::integer_text(g.m) + "x" + detail::integer_text(g.n) + "x" + detail::integer_text(g.k);
        if (g.count != 1) label += " x" + detail::integer_text(g.count);
        if (!g.label.empty()) label += " (" + g.label + ")";
        out.push_back({std::string(to_string(gemm_math_class(g.precision))), label,
                       g.precision == KernelPrecision::int8 ? "TOPS" : "TFLOPS", ops / g.seconds / 1e12,
                       ops / predicted / 1e12, 0});
    }
    return out;
}

/// Predicted vs measured bandwidth of the streaming kernels (copy, scale, triad; memcpy is only a reference).
inline std::vector<CaseComparison> compare_bandwidth(const std::vector<StreamSample>& samples, const Device& device,
                                                     const EfficiencyProfile& profile) {
    std::vector<CaseComparison> out;
    for (const StreamSample& s : samples) {
        if (!s.modelled()) continue;
        out.push_back({"memory", s.kernel + " " + detail::size_text(s.bytes), "GB/s", s.bytes / s.seconds / 1e9,
                       s.bytes / predict_stream_seconds(s.bytes, device, profile) / 1e9, s.bytes});
    }
    return out;
}

/// Predicted vs measured for the convolutions of one layout (default nhwc), each predicted as calibration fits
/// it.  The group is "conv." + the math class; rates are the report's TFLOPS and the same work over the
/// predicted time.
inline std::vector<CaseComparison> compare_conv(const std::vector<ConvSample>& samples, const Device& device,
                                                const EfficiencyProfile& profile, const std::string& layout = "nhwc") {
    std::vector<CaseComparison> out;
    for (const ConvSample& c : samples) {
        if (c.layout != layout) continue;
        const MathClass m = math_class(device, training_precision(c.precision), Mode::train);
        const double predicted = predicted_seconds(c, device, profile);
        out.push_back({"conv." + std::string(to_string(m)),
                       (c.label.empty() ? std::string("conv") : c.label) + " " + std::string(conv_pass_name(c.pass)) +
                           " " + std::string(to_string(c.precision)),
                       "TFLOPS", c.tflops, c.tflops * c.seconds / predicted, 0});
    }
    return out;
}

/// Predicted vs measured busbw for the multi-GPU collectives, the ranks placed on the first GPUs of `system`.
inline std::vector<CaseComparison> compare_nccl(const std::vector<CollectiveSample>& samples, const System& system,
                                                const LinkParameters& links) {
    std::vector<CaseComparison> out;
    for (const CollectiveSample& s : samples) {
        if (s.ranks < 2) continue;
        const CollectiveTime c = collective_time(system, s.op, s.bytes, CollectivePlace{first_gpus(system, s.ranks), 1},
                                                 Algorithm::ring, links);
        out.push_back({std::string(to_string(s.op)),
                       std::to_string(s.ranks) + " GPUs " + detail::size_text(static_cast<double>(s.bytes)),
                       "busbw GB/s", s.busbw_gb_s, c.busbw_gb_s, static_cast<double>(s.bytes)});
    }
    return out;
}

/// The zoo model an end-to-end case measures ("resnet50" → resnet50, "bert-qa" → bert-squad at the case's seq).
inline std::string e2e_model_of(const std::string& name) {
    if (name == "resnet50") return "resnet50";
    if (name == "bert-qa") return "bert-squad";
    roofplan::detail::fail("unknown end-to-end case '", name, "'; known: resnet50, bert-qa");
}

/// Predicted vs measured training throughput of the single-GPU runs (data-parallel runs are skipped), under
/// the eager runtime: the records are eager PyTorch steps (validation/e2e/train_throughput.py: channels-last
/// ResNet-50 and BERT under bf16 autocast, SGD with momentum and AdamW, no torch.compile), so the runtime that
/// models what they launched is the one compared (the ideal runtime's one kernel per pass is the teaching bound,
/// 1.6-1.8x optimistic on them).
inline std::vector<CaseComparison> compare_e2e(const std::vector<E2eSample>& samples, const Device& device,
                                               const EfficiencyProfile& profile) {
    std::vector<CaseComparison> out;
    for (const E2eSample& r : samples) {
        if (r.gpus != 1) continue;
        const auto& entry = models::find_model(e2e_model_of(r.case_name));
        const std::int64_t given = entry.uses_seq() ? r.seq : r.image_size;
        const std::int64_t size = given > 0 ? given : entry.default_size;
        const Model model = entry.uses_seq() ? entry.build({.seq = size}) : entry.build({.image_size = size});
        PredictRequest request;
        request.batch = r.batch;
        request.precision = r.precision;
        request.optimizer = r.optimizer;
        request.per_layer = false;
        request.runtime = Runtime::eager;
        const Prediction p = Predictor(model)(device, profile, request);
        out.push_back({"e2e",
                       r.case_name + " (" + std::string(entry.id) + (entry.uses_seq() ? " seq " : " ") +
                           std::to_string(size) + (entry.uses_seq() ? "" : "px") + ", batch " +
                           std::to_string(request.batch) + ", " + std::string(to_string(request.precision)) + ", " +
                           std::string(to_string(request.optimizer)) + ")",
                       "samples/s", r.samples_per_s, p.throughput_samples_per_s, 0});
    }
    return out;
}

/// Every single-GPU case of `samples` (GEMM, streaming, convolution of `conv_layout`, end to end, in that
/// order); collectives and DP4A samples are not single-GPU cases the engine predicts here.
inline std::vector<CaseComparison> compare_single_gpu(const Measurements& samples, const Device& device,
                                                      const EfficiencyProfile& profile,
                                                      const std::string& conv_layout = "nhwc") {
    std::vector<CaseComparison> out;
    for (auto part : {compare_gemm(samples.gemm, device, profile), compare_bandwidth(samples.streams, device, profile),
                      compare_conv(samples.conv, device, profile, conv_layout),
                      compare_e2e(samples.e2e, device, profile)})
        out.insert(out.end(), part.begin(), part.end());
    return out;
}

}  // namespace roofplan::validation
