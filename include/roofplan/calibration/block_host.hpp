// roofplan/calibration/block_host.hpp — a transformer block's own Python, fitted from op_bench.py's `block_host`
// group: whole tiny Hugging Face blocks timed on the host, less what the eager runtime already charges for their
// operators.
//
// The per-operator host costs (module call, internal op, cast, view, container) come from chains of one operator;
// a model's block runs its own Python between them (attribute lookups, shape arithmetic, argument checks, calls
// that launch nothing), which Hugging Face's BertLayer and GPT2Block have more of than torchvision's modules
// (validation/results/2026-11-24-h200-host-items).  op_bench.py times tiny BertModel / GPT2Model of 1 and 4 layers
// (host only); the per-layer slope less the eager runtime's own slope for the same tiny models is the block's
// Python that the operator costs do not hold.  A micro-benchmark of one module kind, never an end-to-end step.
#pragma once

#include <roofplan/calibration/profile.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/measurement/samples.hpp>
#include <roofplan/models/transformer.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace roofplan::calibration {

/// The tiny models of op_bench.py's block_host group: hidden 64, 2 heads, MLP 256, vocabulary 128, 8 tokens.
inline Model block_host_model(bool gpt2, std::int64_t layers) {
    if (gpt2)
        return models::gpt2_model("block-host-gpt2", "tiny GPT2Model (op_bench block_host)",
                                  models::Gpt2Config{.vocabulary = 128, .width = 64, .layers = layers, .heads = 2,
                                                     .positions = 64, .lm_head = false},
                                  8);
    return models::detail::bert("block-host-bert", "tiny BertModel (op_bench block_host)",
                                models::BertConfig{.vocabulary = 128, .hidden = 64, .layers = layers, .heads = 2,
                                                   .intermediate = 256},
                                8, models::BertHead::pooler);
}

/// The eager runtime's host time of a model's forward at batch 1 (the issue of its last forward kernel).
inline double predicted_forward_host(const Model& model, const Device& device, const EfficiencyProfile& profile,
                                     Precision precision, Mode mode) {
    PredictRequest r;
    r.batch = 1;
    r.precision = precision;
    r.mode = mode;
    r.runtime = Runtime::eager;
    r.kernels = true;
    r.estimate_memory = false;
    r.per_layer = false;
    const Prediction p = predict(model, device, profile, r);
    double forward = 0;
    for (const TimedKernel& k : p.kernels)
        if (k.kernel.part == StepPart::forward) forward = k.issue_s;
    return forward;
}

/// What the fit found: per family (BERT, GPT-2) and mode (inference FP32, inference autocast, training forward
/// under autocast), the measured per-layer host time and the runtime's own charge for it.
struct BlockHostFit {
    std::array<std::array<double, 3>, 2> measured{}, charged{};
    int fitted = 0;  ///< 0: the reports hold no block_host cases
};

/// Fits HostCosts::block_python_s, block_autocast_s and block_autograd_s from the "block: ..." host samples (the
/// fast-state medians io/operators.hpp reads), the other host costs of `profile` as they stand (fit them first).
inline BlockHostFit fit_block_host(const std::vector<HostSample>& samples, const Device& device,
                                   EfficiencyProfile& profile) {
    BlockHostFit out;
    const auto find = [&](const std::string& name) -> const HostSample* {
        for (const HostSample& s : samples)
            if (s.name == name) return &s;
        return nullptr;
    };
    bool any = false;
    for (const HostSample& s : samples) any = any || s.name.starts_with("block: ");
    if (!any) return out;
    struct ModeCase {
        const char* name;
        Precision precision;
        Mode mode;
    };
    constexpr std::array<ModeCase, 3> modes{{{"infer fp32", Precision::fp32, Mode::infer},
                                             {"infer amp-bf16", Precision::amp_bf16, Mode::infer},
                                             {"train forward amp-bf16", Precision::amp_bf16, Mode::train}}};
    EfficiencyProfile bare = profile;  // the runtime's charges without the block costs being fitted
    bare.host.block_python_s = bare.host.block_autocast_s = bare.host.block_autograd_s = 0;
    std::array<std::array<double, 3>, 2> residual{};
    for (int family = 0; family < 2; ++family) {
        const Model one = block_host_model(family == 1, 1), four = block_host_model(family == 1, 4);
        for (std::size_t m = 0; m < modes.size(); ++m) {
            const std::string stem = std::string("block: ") + (family == 1 ? "gpt2" : "bert");
            const HostSample* a = find(stem + " L1 " + modes[m].name);
            const HostSample* b = find(stem + " L4 " + modes[m].name);
            if (a == nullptr || b == nullptr)
                roofplan::detail::fail("block_host report: no '", stem.substr(7), " L1/L4 ", modes[m].name,
                             "' case (op_bench.py block_host times BERT and GPT-2 at 1 and 4 layers in three modes)");
            out.measured[family][m] = (b->seconds - a->seconds) / 3;
            out.charged[family][m] =
                (predicted_forward_host(four, device, bare, modes[m].precision, modes[m].mode) -
                 predicted_forward_host(one, device, bare, modes[m].precision, modes[m].mode)) / 3;
            residual[family][m] = out.measured[family][m] - out.charged[family][m];
        }
    }
    const auto mean = [&](auto f) { return std::max(0.0, (f(residual[0]) + f(residual[1])) / 2); };
    profile.host.block_python_s = mean([](const auto& r) { return r[0]; });
    profile.host.block_autocast_s = mean([](const auto& r) { return r[1] - r[0]; });
    profile.host.block_autograd_s = mean([](const auto& r) { return r[2] - r[1]; });
    out.fitted = 3;
    return out;
}

}  // namespace roofplan::calibration
