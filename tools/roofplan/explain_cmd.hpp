// tools/roofplan/explain_cmd.hpp — the arithmetic of one layer, step by step, with the numbers substituted into
// each formula, and the roofline verdict on a device with the reason for it (`roofplan explain`: explain.cpp).
#pragma once

#include "options.hpp"

#include <roofplan/io/json.hpp>
#include <roofplan/io/layer_spec.hpp>
#include <roofplan/roofplan.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <iostream>
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace roofplan::cli {

/// The whole explanation (what the text and the JSON are printed from).
struct Explanation {
    std::string title;
    std::string kind;
    std::int64_t batch = 1;
    std::string precision;
    std::string pass;
    std::vector<layers::DerivationStep> steps;  ///< `symbol = formula = substituted = value unit (note)`
    nlohmann::json verdict;  ///< null without a device
    std::vector<std::string> verdict_lines;
};

namespace explain_detail {

using layers::num;

inline std::string pass_label(const std::string& pass) {
    return pass == "forward" ? "forward" : pass == "backward" ? "backward (data + weight gradients)"
                                                              : "forward + backward";
}

/// A step's value as printed: counts grouped by thousands, text as is, reals as the step says.
inline std::string value_text(const layers::DerivationStep& s) {
    if (const auto* count = std::get_if<std::int64_t>(&s.value)) return grouped(*count);
    if (const auto* text = std::get_if<std::string>(&s.value)) return *text;
    return s.value_text;
}

/// Γ = paper ops·B / params, with the layer's closed form where it has one.
inline void gamma_step(layers::Derivation& b, const AnyLayer& layer, std::int64_t batch) {
    const std::int64_t params_count = params(layer);
    const std::int64_t ops = paper_ops(layer);
    if (params_count == 0 || ops == 0) return;
    const double g = static_cast<double>(ops) * static_cast<double>(batch) / static_cast<double>(params_count);
    const layers::ClosedForm closed = explain_gamma(layer, batch).value_or(layers::ClosedForm{});
    const bool whole = g == std::floor(g) && g < 9e15;
    b.real("gamma", "Γ", "paper ops·B / params",
           grouped(ops) + "·" + num(batch) + " / " + grouped(params_count) + closed.formula + closed.numbers, g,
           whole ? grouped(static_cast<std::int64_t>(g)) : fixed(g, g < 100 ? 2 : 0), "",
           "operations per parameter: how much work each weight fetched does");
}

/// The passes `--pass` asks for (a first layer has no backward-data pass).
inline std::vector<Pass> passes_of(const std::string& pass, bool needs_input_gradient) {
    std::vector<Pass> passes;
    if (pass != "backward") passes.push_back(Pass::forward);
    if (pass != "forward") {
        if (needs_input_gradient) passes.push_back(Pass::backward_data);
        passes.push_back(Pass::backward_weight);
    }
    return passes;
}

/// Each pass's MACs for the batch: the layer's own formula where it derives one, else the descriptor's count.
inline Work pass_steps(layers::Derivation& b, const AnyLayer& layer, const std::vector<Pass>& passes,
                       std::int64_t instances, Precision precision) {
    Work total{};
    for (Pass p : passes) {
        const Work w = work(layer, p, instances, precision);
        const std::string id = "macs_" + std::string(to_string(p));
        const char* symbol = p == Pass::forward ? "MACs fwd" : p == Pass::backward_data ? "MACs bwd-data" : "MACs bwd-weight";
        const std::int64_t fwd = forward_macs(layer).value();
        if (p == Pass::forward)
            b.checked(id, symbol, "B·MACs", num(instances) + "·" + num(fwd), roofplan::detail::mul(instances, fwd, "MACs"),
                      w.macs.value());
        else if (const auto derived = explain_pass_macs(layer, p, instances))
            b.checked(id, symbol, derived->formula, derived->substituted, derived->value, w.macs.value(), "",
                      derived->note);
        else
            b.count(id, symbol, "", "", w.macs.value(), "",
                    p == Pass::backward_data ? "the gradient of the input" : "the gradients of the weights");
        total += w;
    }
    return total;
}

/// Bytes moved by the passes, each kind of element at its width; returns the weights' bytes too (for the verdict).
inline std::int64_t bytes_step(layers::Derivation& b, const AnyLayer& layer, const std::vector<Pass>& passes,
                               std::int64_t instances, Precision precision, const Work& total,
                               const std::string& precision_name) {
    const std::int64_t width = element_bytes(precision);
    std::int64_t wr = 0, ar = 0, aw = 0, gw = 0;
    for (Pass p : passes) {
        const PassCost c = cost(layer, p, instances);
        wr += c.weight_elements_read;
        ar += c.activation_elements_read;
        aw += c.activation_elements_written;
        gw += c.gradient_elements_written;
    }
    std::string bf = "(weights + inputs + outputs)·" + num(width);
    std::string bs = "(" + num(wr) + " + " + num(ar) + " + " + num(aw) + ")·" + num(width);
    std::int64_t bytes = (wr + ar + aw) * width;
    if (gw > 0) {
        const std::int64_t gwidth = gradient_bytes(precision);
        bf += " + weight gradients·" + num(gwidth);
        bs += " + " + num(gw) + "·" + num(gwidth);
        bytes += gw * gwidth;
    }
    b.checked("bytes", "bytes", bf, bs, bytes, total.bytes().value(), "B",
              num(width) + " B per element at " + precision_name +
                  "; weights are read once per pass, activations per sample" +
                  (gw > 0 && is_mixed(precision) ? "; AMP accumulates FP32 weight gradients" : ""));
    return wr * width;
}

/// For the batch: the passes' MACs, FLOPs, bytes and intensity.  Returns the totals and the weights' bytes.
inline std::pair<Work, std::int64_t> batch_steps(layers::Derivation& b, const AnyLayer& layer, const Explanation& e,
                                                 Precision precision, bool needs_input_gradient, std::int64_t repeat) {
    const std::int64_t instances = roofplan::detail::mul(e.batch, repeat, "batch");
    const std::vector<Pass> passes = passes_of(e.pass, needs_input_gradient);
    const std::string repeats = repeat != 1 ? " (x" + num(repeat) + " repeats = " + num(instances) + ")" : "";
    b.section("for the batch: B = " + num(e.batch) + repeats + ", " + pass_label(e.pass) + ", " + e.precision);
    const Work total = pass_steps(b, layer, passes, instances, precision);
    if ((e.pass == "backward" || e.pass == "all") && !needs_input_gradient)
        b.text("skipped", "skipped", "backward-data", "the model's first layer needs no input gradient");
    if (passes.size() > 1) b.count("macs", "MACs", "Σ passes", "", total.macs.value());
    const std::int64_t flops = total.flops().value();  // checked first: 2·MACs may not fit 64 bits
    b.checked("flops", "FLOPs", "2·MACs + vector FLOPs",
              "2·" + num(total.macs.value()) + " + " + num(total.vector_flops.value()),
              2 * total.macs.value() + total.vector_flops.value(), flops, "FLOP",
              "a multiply-add is 2 FLOP; torchvision's \"GFLOPS\" are MACs");
    const std::int64_t weight_bytes = bytes_step(b, layer, passes, instances, precision, total, e.precision);
    const double intensity = total.bytes().value() > 0 ? static_cast<double>(total.flops().value()) /
                                                             static_cast<double>(total.bytes().value())
                                                       : 0.0;
    b.real("intensity", "intensity", "FLOPs / bytes",
           grouped(total.flops().value()) + " / " + grouped(total.bytes().value()), intensity,
           fixed(intensity, intensity < 10 ? 2 : 1), "FLOP/B", "arithmetic intensity");
    return {total, weight_bytes};
}

/// FLOPs per byte of the passes' totals.
inline double intensity_of(const Work& total) {
    return total.bytes().value() > 0
               ? static_cast<double>(total.flops().value()) / static_cast<double>(total.bytes().value())
               : 0.0;
}

/// The bare roofline's verdict (datasheet peaks and bandwidth, before the engine's efficiencies) and why.
inline void roofline_verdict(Explanation& e, const Work& total, std::int64_t weight_bytes, const Device& device,
                             MathClass math) {
    const bool matrix = total.macs.value() > 0;
    const Roofline bare = Roofline::datasheet(device, math);
    KernelWork bare_work;
    bare_work.macs = static_cast<double>(total.macs.value());
    bare_work.vector_flops = static_cast<double>(total.vector_flops.value());
    bare_work.bytes = static_cast<double>(total.bytes().value());
    const KernelTime t = bare.time(bare_work);
    const double intensity = intensity_of(total);
    const double bandwidth = bare.bandwidth_bytes_s();
    const double used_peak = matrix ? bare.peak_flops_s() : bare.vector_peak_flops_s();
    const double ridge = bare.ridge_flops_per_byte(matrix);
    const bool memory_bound = t.memory_s >= t.compute_s;
    const std::string dev(device.id.view());
    const std::string unit_name = matrix ? std::string(to_string(math)) : std::string("fp32 (vector)");
    e.verdict_lines.push_back("intensity " + fixed(intensity, intensity < 10 ? 2 : 1) + " FLOP/B " + (intensity < ridge ? "<" : ">=") +
                              " ridge " + fixed(ridge, ridge < 100 ? 1 : 0) + " FLOP/B of " + dev + " (" +
                              value_label(used_peak, "FLOP/s") + " " + unit_name + " / " +
                              value_label(bandwidth, "B/s") + ") → " +
                              (memory_bound ? "memory-bound" : "compute-bound"));
    e.verdict_lines.push_back("why: moving " + si(t.bytes) + "B takes " + seconds_text(t.memory_s) + " at " +
                              value_label(bandwidth, "B/s") + "; the " + si(t.flops) + "FLOP take " +
                              seconds_text(t.compute_s) + " at the " + unit_name + " peak" +
                              (matrix && total.vector_flops.value() > 0 ? " (vector FLOPs at the FP32 peak)" : "") +
                              "; the slower one sets the time: ≥ " + seconds_text(std::max(t.memory_s, t.compute_s)));
    if (memory_bound)
        e.verdict_lines.push_back(
            "to become compute-bound it would need " +
            fixed(ridge / std::max(intensity, 1e-12), ridge / std::max(intensity, 1e-12) < 10 ? 1 : 0) +
            "x the intensity: a larger batch raises it when weights dominate the bytes (" +
            fixed(100.0 * static_cast<double>(weight_bytes) / std::max(t.bytes, 1.0), 0) +
            "% here), not when activations do");
    else
        e.verdict_lines.push_back("the memory system idles " + fixed(100.0 * (1.0 - t.memory_s / t.compute_s), 0) +
                                  "% of the time; only a faster math unit (or lower precision) speeds it up");
    e.verdict = {{"device", dev},
                 {"math_class", to_string(math)},
                 {"peak_flops_per_s", used_peak},
                 {"bandwidth_bytes_per_s", bandwidth},
                 {"ridge_flops_per_byte", ridge},
                 {"intensity_flops_per_byte", intensity},
                 {"compute_time_s", t.compute_s},
                 {"memory_time_s", t.memory_s},
                 {"roofline_time_s", std::max(t.compute_s, t.memory_s)},
                 {"bound", memory_bound ? "memory" : "compute"}};
}

/// What the engine predicts with efficiencies, launch latency and wave quantization.
inline void engine_verdict(Explanation& e, const AnyLayer& layer, const Device& device, const EfficiencyProfile& prof,
                           Precision precision, MathClass math, Mode mode, bool needs_input_gradient,
                           std::int64_t repeat) {
    PredictRequest request;
    request.batch = e.batch;
    request.precision = precision;
    request.mode = mode;
    double engine_s = 0;
    std::string engine_bound = "-";
    if (const auto lp = predict_layer(layer, device, prof, request, needs_input_gradient, repeat)) {
        engine_s = e.pass == "forward"    ? lp->pass[Pass::forward].value()
                   : e.pass == "backward" ? lp->pass[Pass::backward_data].value() + lp->pass[Pass::backward_weight].value()
                                          : lp->time.value();
        engine_bound = std::string(to_string(lp->bound));
    }
    e.verdict_lines.push_back("the engine predicts " + seconds_text(engine_s) + " (" + engine_bound + "-bound): " +
                              fixed(100 * prof.gemm_efficiency(math), 0) + "% GEMM and " + fixed(100 * prof.memory, 0) +
                              "% memory efficiency, " + seconds_text(prof.launch_s) +
                              " launch per kernel, wave quantization (profile: " + std::string(prof.source.view()) + ")");
    e.verdict["engine_time_s"] = engine_s;
    e.verdict["engine_bound"] = engine_bound;
    e.verdict["profile"] = prof.source.view();
    e.verdict["lines"] = e.verdict_lines;
}

}  // namespace explain_detail

/// Builds the explanation of `layer` (run `repeat` times per instance) for a batch, precision and passes.
inline Explanation explain_layer(const AnyLayer& layer, const std::string& title, std::int64_t batch, Precision precision,
                                 const std::string& pass, bool needs_input_gradient = true, std::int64_t repeat = 1,
                                 const Device* device = nullptr, const EfficiencyProfile* profile = nullptr) {
    using namespace explain_detail;
    require_batch(batch);
    if (pass != "forward" && pass != "backward" && pass != "all")
        fail("unknown pass '", pass, "'; accepted: forward, backward, all");
    // The descriptor's checked counts throw on overflow before the formulas multiply the same numbers.
    (void)paper_ops(layer);
    (void)cost(layer, Pass::forward, roofplan::detail::mul(batch, repeat, "batch"));
    Explanation e;
    e.title = title;
    e.kind = std::string(type_label(layer));
    e.batch = batch;
    e.precision = std::string(to_string(precision));
    e.pass = pass;
    layers::Derivation b;
    b.section("shapes");
    b.text("input_shape", "input", input_shape(layer).to_string(), "per instance; the batch adds a leading axis");
    explain_steps(b, layer);  // the layer's own derivation (layers/explain.hpp)
    gamma_step(b, layer, batch);
    const auto [total, weight_bytes] = batch_steps(b, layer, e, precision, needs_input_gradient, repeat);
    e.steps = b.steps();
    if (device == nullptr) return e;
    const Mode mode = pass == "forward" ? Mode::infer : Mode::train;
    const MathClass math = math_class(*device, precision, mode);
    roofline_verdict(e, total, weight_bytes, *device, math);
    engine_verdict(e, layer, *device, profile ? *profile : default_profile(*device), precision, math, mode,
                   needs_input_gradient, repeat);
    return e;
}

}  // namespace roofplan::cli
