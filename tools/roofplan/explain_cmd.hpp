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
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace roofplan::cli {

/// One line of the derivation: `symbol = formula = substituted = value unit`.
struct ExplainStep {
    std::string section;
    std::string id;
    std::string symbol;
    std::string formula;      ///< symbolic, may be empty
    std::string substituted;  ///< the formula with numbers, may be empty
    nlohmann::json value;     ///< integer, number or text
    std::string value_text;
    std::string unit;
    std::string note;
};

/// The whole explanation (what the text and the JSON are printed from).
struct Explanation {
    std::string title;
    std::string kind;
    std::int64_t batch = 1;
    std::string precision;
    std::string pass;
    std::vector<ExplainStep> steps;
    nlohmann::json verdict;  ///< null without a device
    std::vector<std::string> verdict_lines;
};

namespace explain_detail {

inline std::string n(std::int64_t v) { return std::to_string(v); }

/// Collects the steps and checks every formula's value against the descriptor's own count.
class Builder {
public:
    explicit Builder(std::vector<ExplainStep>& steps) : steps_(steps) {}
    void section(std::string name) { section_ = std::move(name); }
    void count(std::string id, std::string symbol, std::string formula, std::string substituted, std::int64_t value,
               std::string unit = "", std::string note = "") {
        if (substituted == std::to_string(value)) substituted.clear();  // "out = 4096" needs no "= 4096 = 4,096"
        steps_.push_back({section_, std::move(id), std::move(symbol), std::move(formula), std::move(substituted), value,
                          grouped(value), std::move(unit), std::move(note)});
    }
    /// A count whose formula the explanation evaluated itself: it must agree with the library.
    void checked(std::string id, std::string symbol, std::string formula, std::string substituted, std::int64_t ours,
                 std::int64_t library, std::string unit = "", std::string note = "") {
        if (ours != library)
            throw std::logic_error("explain: " + id + " = " + std::to_string(ours) + " by the formula but " +
                                   std::to_string(library) + " by the descriptor");
        count(std::move(id), std::move(symbol), std::move(formula), std::move(substituted), ours, std::move(unit),
              std::move(note));
    }
    void text(std::string id, std::string symbol, std::string value, std::string note = "") {
        steps_.push_back({section_, std::move(id), std::move(symbol), "", "", value, value, "", std::move(note)});
    }
    void real(std::string id, std::string symbol, std::string formula, std::string substituted, double value,
              std::string value_text, std::string unit, std::string note = "") {
        steps_.push_back({section_, std::move(id), std::move(symbol), std::move(formula), std::move(substituted), value,
                          std::move(value_text), std::move(unit), std::move(note)});
    }

private:
    std::vector<ExplainStep>& steps_;
    std::string section_;
};

/// "cin·k²" and "64·3²" (square kernel), "cin·kh·kw" and "64·1·7", with "(cin/g)" for grouped convolutions.
inline std::pair<std::string, std::string> kernel_terms(const Conv2D::Config& c) {
    std::string sym = c.groups == 1 ? "cin" : "(cin/g)";
    std::string num = c.groups == 1 ? n(c.in_channels) : "(" + n(c.in_channels) + "/" + n(c.groups) + ")";
    if (c.kernel.h == c.kernel.w) return {sym + "·k²", num + "·" + n(c.kernel.h) + "²"};
    return {sym + "·kh·kw", num + "·" + n(c.kernel.h) + "·" + n(c.kernel.w)};
}

inline void conv_steps(Builder& b, const Conv2D& layer) {
    const Conv2D::Config& c = layer.config();
    const auto out_size = [&](const char* axis, std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p,
                              std::int64_t d, std::int64_t library) {
        b.checked(std::string("out_") + axis, axis[0] == 'h' ? "Ho" : "Wo",
                  std::string("⌊(") + (axis[0] == 'h' ? "H" : "W") + " + 2·p − d·(k − 1) − 1)/s⌋ + 1",
                  "⌊(" + n(in) + " + 2·" + n(p) + " − " + n(d) + "·(" + n(k) + " − 1) − 1)/" + n(s) + "⌋ + 1",
                  (in + 2 * p - d * (k - 1) - 1) / s + 1, library);
    };
    out_size("h", c.in_height, c.kernel.h, c.stride.h, c.padding.h, c.dilation.h, layer.out_height());
    if (!(c.in_height == c.in_width && c.kernel.h == c.kernel.w && c.stride.h == c.stride.w &&
          c.padding.h == c.padding.w && c.dilation.h == c.dilation.w))
        out_size("w", c.in_width, c.kernel.w, c.stride.w, c.padding.w, c.dilation.w, layer.out_width());
    else
        b.text("out_w", "Wo", "Ho", "square input and kernel");
    b.text("output_shape", "output", layer.output_shape().to_string(), "cout×Ho×Wo");
    const auto [ksym, knum] = kernel_terms(c);
    const std::int64_t kvol = c.in_channels / c.groups * c.kernel.h * c.kernel.w;
    const std::int64_t ho = layer.out_height(), wo = layer.out_width();
    b.section("parameters");
    if (c.bias)
        b.checked("params", "params", "cout·(" + ksym + " + 1)", n(c.out_channels) + "·(" + knum + " + 1)",
                  c.out_channels * (kvol + 1), layer.params(), "", "weights plus one bias per output channel");
    else
        b.checked("params", "params", "cout·" + ksym, n(c.out_channels) + "·" + knum, c.out_channels * kvol,
                  layer.params(), "", "no bias");
    b.section("operations per instance");
    b.checked("macs_per_instance", "MACs", "Ho·Wo·cout·" + ksym,
              n(ho) + "·" + n(wo) + "·" + n(c.out_channels) + "·" + knum, ho * wo * c.out_channels * kvol,
              layer.forward(1).macs.value(), "", "one multiply-add per weight per output pixel");
    if (c.bias)
        b.checked("vector_flops_per_instance", "bias adds", "cout·Ho·Wo", n(c.out_channels) + "·" + n(ho) + "·" + n(wo),
                  c.out_channels * ho * wo, layer.forward(1).vector_flops.value(), "FLOP");
    b.checked("paper_ops", "paper ops", "Ho·Wo·cout·(" + ksym + (c.bias ? " + 1)" : ")"),
              n(ho) + "·" + n(wo) + "·" + n(c.out_channels) + "·(" + knum + (c.bias ? " + 1)" : ")"),
              ho * wo * c.out_channels * (kvol + (c.bias ? 1 : 0)), layer.paper_ops(), "",
              "the paper's count: a multiply-add is 1, a bias add 1");
}

inline void linear_steps(Builder& b, const Linear& layer) {
    const Linear::Config& c = layer.config();
    const bool rows = c.rows != 1;
    b.text("output_shape", "output", layer.output_shape().to_string(), rows ? "rows×out" : "out");
    b.section("parameters");
    if (c.tied)
        b.count("params", "params", "", "", 0, "", "the weight is tied to another layer's; it owns none");
    else if (c.bias)
        b.checked("params", "params", "out·(in + 1)", n(c.out_features) + "·(" + n(c.in_features) + " + 1)",
                  c.out_features * (c.in_features + 1), layer.params(), "", "weights plus one bias per output");
    else
        b.checked("params", "params", "out·in", n(c.out_features) + "·" + n(c.in_features),
                  c.out_features * c.in_features, layer.params(), "", "no bias");
    b.section("operations per instance");
    b.checked("macs_per_instance", "MACs", rows ? "rows·in·out" : "in·out",
              (rows ? n(c.rows) + "·" : "") + n(c.in_features) + "·" + n(c.out_features),
              c.rows * c.in_features * c.out_features, layer.forward(1).macs.value(), "",
              "one multiply-add per weight per input vector");
    if (c.bias)
        b.checked("vector_flops_per_instance", "bias adds", rows ? "rows·out" : "out",
                  (rows ? n(c.rows) + "·" : "") + n(c.out_features), c.rows * c.out_features,
                  layer.forward(1).vector_flops.value(), "FLOP");
    b.checked("paper_ops", "paper ops", std::string(rows ? "rows·" : "") + (c.bias ? "(in + 1)·out" : "in·out"),
              (rows ? n(c.rows) + "·" : "") +
                  (c.bias ? "(" + n(c.in_features) + " + 1)·" + n(c.out_features) : n(c.in_features) + "·" + n(c.out_features)),
              c.rows * (c.in_features + (c.bias ? 1 : 0)) * c.out_features, layer.paper_ops(), "",
              "the paper's count: a multiply-add is 1, a bias add 1");
}

inline void attention_steps(Builder& b, const MultiHeadAttention& layer) {
    const MultiHeadAttention::Config& c = layer.config();
    const std::int64_t qw = c.heads * c.head_dim, kvw = c.kv_heads * c.head_dim;
    b.text("output_shape", "output", layer.output_shape().to_string(), "seq×d");
    b.count("head_dim", "dh", "", "", c.head_dim, "", "width per head (d/heads unless given)");
    b.section("parameters");
    std::string f = "2·d·(h·dh) + 2·d·(hkv·dh)", s = "2·" + n(c.model_dim) + "·(" + n(c.heads) + "·" + n(c.head_dim) +
                                                       ") + 2·" + n(c.model_dim) + "·(" + n(c.kv_heads) + "·" + n(c.head_dim) + ")";
    std::int64_t p = 2 * c.model_dim * qw + 2 * c.model_dim * kvw;
    if (c.bias) {
        f += " + (h·dh + 2·hkv·dh + d)";
        s += " + (" + n(qw) + " + 2·" + n(kvw) + " + " + n(c.model_dim) + ")";
        p += qw + 2 * kvw + c.model_dim;
    }
    b.checked("params", "params", f, s, p, layer.params(), "",
              "Wq, Wo: d×(h·dh); Wk, Wv: d×(hkv·dh)" + std::string(c.bias ? "; and their biases" : ""));
    b.section("operations per instance");
    if (c.causal)
        b.checked("score_pairs", "pairs", "L·(Lkv − L) + L·(L + 1)/2",
                  n(c.q_len) + "·(" + n(c.kv_len) + " − " + n(c.q_len) + ") + " + n(c.q_len) + "·(" + n(c.q_len) + " + 1)/2",
                  c.q_len * (c.kv_len - c.q_len) + c.q_len * (c.q_len + 1) / 2, layer.score_pairs(), "",
                  "(query, key) pairs the causal mask keeps");
    else
        b.checked("score_pairs", "pairs", "L·Lkv", n(c.q_len) + "·" + n(c.kv_len), c.q_len * c.kv_len,
                  layer.score_pairs(), "", "(query, key) pairs");
    b.checked("projection_macs", "projections", "L·d·2·(h·dh) + Lkv·d·2·(hkv·dh)",
              n(c.q_len) + "·" + n(c.model_dim) + "·2·" + n(qw) + " + " + n(c.kv_len) + "·" + n(c.model_dim) + "·2·" + n(kvw),
              c.q_len * c.model_dim * 2 * qw + c.kv_len * c.model_dim * 2 * kvw, layer.projection_macs(), "MACs",
              "Q and O over the queries, K and V over the keys: linear in the length");
    b.checked("core_macs", "QKᵀ + P·V", "2·h·pairs·dh",
              "2·" + n(c.heads) + "·" + n(layer.score_pairs()) + "·" + n(c.head_dim),
              2 * c.heads * layer.score_pairs() * c.head_dim, layer.core_macs(), "MACs",
              "scores and context: quadratic in the length");
    b.checked("macs_per_instance", "MACs", "projections + QKᵀ + P·V",
              n(layer.projection_macs()) + " + " + n(layer.core_macs()), layer.projection_macs() + layer.core_macs(),
              layer.forward(1).macs.value());
    b.count("vector_flops_per_instance", "vector FLOPs", "6·h·pairs + bias adds" + std::string(c.rotary ? " + rotary" : ""),
            "", layer.forward(1).vector_flops.value(), "FLOP", "softmax 5 and 1/√dh scaling 1 per score");
    b.count("paper_ops", "paper ops", "MACs + bias adds", "", layer.paper_ops(), "",
            "the paper's count: a multiply-add is 1, a bias add 1");
}

inline void lstm_steps(Builder& b, const LSTM& layer) {
    const LSTM::Config& c = layer.config();
    const std::int64_t h = c.hidden_size, dirs = layer.directions();
    b.text("output_shape", "output", layer.output_shape().to_string(), "seq×(hidden·directions)");
    b.section("parameters");
    std::int64_t weights = dirs * 4 * h * (c.input_size + h);
    std::string f = "dirs·4h·(in + h)", s = n(dirs) + "·4·" + n(h) + "·(" + n(c.input_size) + " + " + n(h) + ")";
    if (c.num_layers > 1) {
        weights += (c.num_layers - 1) * dirs * 4 * h * (h * dirs + h);
        f += " + (layers − 1)·dirs·4h·(h·dirs + h)";
        s += " + " + n(c.num_layers - 1) + "·" + n(dirs) + "·4·" + n(h) + "·(" + n(h) + "·" + n(dirs) + " + " + n(h) + ")";
    }
    const std::int64_t biases = c.num_layers * dirs * c.bias_vectors * 4 * h;
    b.checked("params", "params", f + " + layers·dirs·bv·4h",
              s + " + " + n(c.num_layers) + "·" + n(dirs) + "·" + n(c.bias_vectors) + "·4·" + n(h), weights + biases,
              layer.params(), "", "four gates, each an input and a recurrent matrix; bv bias vectors per gate");
    b.section("operations per instance");
    b.checked("macs_per_instance", "MACs", "seq·(weights)", n(c.seq_len) + "·" + n(weights), c.seq_len * weights,
              layer.forward(1).macs.value(), "", "every weight once per time step");
    b.count("vector_flops_per_instance", "vector FLOPs", "seq·h·dirs·layers·(4·bv + 24)", "",
            layer.forward(1).vector_flops.value(), "FLOP", "bias adds, 3 sigmoids, 2 tanh, the cell update");
    b.count("paper_ops", "paper ops", "MACs + seq·biases", "", layer.paper_ops(), "");
}

/// Layers without matrix work: parameters and elementwise FLOPs from the descriptor, per element.
template <class L>
void elementwise_steps(Builder& b, const L& layer) {
    const PassCost f = layer.forward(1);
    const std::int64_t elements = layer.output_shape().elements();
    b.text("output_shape", "output", layer.output_shape().to_string());
    b.section("parameters");
    if constexpr (std::same_as<L, BatchNorm2d>) {
        if (layer.config().affine)
            b.checked("params", "params", "2·C", "2·" + n(layer.config().channels), 2 * layer.config().channels,
                      layer.params(), "", "γ and β per channel (running statistics are buffers)");
        else
            b.count("params", "params", "", "", 0, "", "no affine γ, β");
    } else if constexpr (std::same_as<L, LayerNorm>) {
        b.checked("params", "params", layer.config().affine ? "2·d" : "0", layer.config().affine ? "2·" + n(layer.config().width) : "",
                  layer.config().affine ? 2 * layer.config().width : 0, layer.params(), "", "γ and β per feature");
    } else if constexpr (std::same_as<L, RMSNorm>) {
        b.checked("params", "params", "d", n(layer.config().width), layer.config().width, layer.params(), "", "γ per feature");
    } else if constexpr (std::same_as<L, Embedding>) {
        b.checked("params", "params", "vocab·d", n(layer.config().vocabulary) + "·" + n(layer.config().width),
                  layer.config().vocabulary * layer.config().width, layer.params(), "", "the table");
    } else {
        b.count("params", "params", "", "", layer.params(), "", "no parameters");
    }
    b.section("operations per instance");
    b.count("macs_per_instance", "MACs", "", "", f.macs.value(), "",
            f.macs.value() > 0 ? "matrix products; the rule is in docs/counting.md" : "no matrix products");
    if constexpr (std::same_as<L, Embedding>) {
        b.checked("gathered", "gathered", "rows·d", n(layer.config().rows) + "·" + n(layer.config().width),
                  layer.config().rows * layer.config().width, f.weight_elements_read, "elements",
                  "a lookup copies one table row per token: pure data movement");
    } else if (elements > 0 && f.vector_flops.value() % elements == 0) {
        const std::int64_t per = f.vector_flops.value() / elements;
        b.checked("vector_flops_per_instance", "vector FLOPs", "FLOP per output element · outputs",
                  n(per) + "·" + n(elements), per * elements, f.vector_flops.value(), "FLOP",
                  "the per-element convention is in docs/counting.md");
    } else {
        b.count("vector_flops_per_instance", "vector FLOPs", "", "", f.vector_flops.value(), "FLOP");
    }
    b.count("paper_ops", "paper ops", "", "", layer.paper_ops(), "", "the paper counts only multiply-adds and bias adds");
}

template <class L>
void kind_steps(Builder& b, const L& layer) {
    if constexpr (std::same_as<L, Conv2D>) conv_steps(b, layer);
    else if constexpr (std::same_as<L, Linear>) linear_steps(b, layer);
    else if constexpr (std::same_as<L, MultiHeadAttention>) attention_steps(b, layer);
    else if constexpr (std::same_as<L, LSTM>) lstm_steps(b, layer);
    else if constexpr (std::same_as<L, Pool2D>) {
        const Pool2D::Config& c = layer.config();
        b.checked("out_h", "Ho", c.ceil_mode ? "⌈(H + 2·p − k)/s⌉ + 1" : "⌊(H + 2·p − k)/s⌋ + 1",
                  std::string(c.ceil_mode ? "⌈(" : "⌊(") + n(c.in_height) + " + 2·" + n(c.padding.h) + " − " + n(c.kernel.h) +
                      ")/" + n(c.stride.h) + (c.ceil_mode ? "⌉" : "⌋") + " + 1",
                  c.ceil_mode ? layer.output_shape()[1] : (c.in_height + 2 * c.padding.h - c.kernel.h) / c.stride.h + 1,
                  layer.output_shape()[1]);
        elementwise_steps(b, layer);
    } else elementwise_steps(b, layer);
}

inline std::string pass_label(const std::string& pass) {
    return pass == "forward" ? "forward" : pass == "backward" ? "backward (data + weight gradients)"
                                                              : "forward + backward";
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
    // The descriptor's checked counts throw on overflow before the formulas below multiply the same numbers.
    (void)paper_ops(layer);
    (void)cost(layer, Pass::forward, roofplan::detail::mul(batch, repeat, "batch"));
    Explanation e;
    e.title = title;
    e.kind = std::string(type_label(layer));
    e.batch = batch;
    e.precision = std::string(to_string(precision));
    e.pass = pass;
    Builder b(e.steps);
    b.section("shapes");
    b.text("input_shape", "input", input_shape(layer).to_string(), "per instance; the batch adds a leading axis");
    std::visit([&](const auto& l) { kind_steps(b, l); }, layer);

    const std::int64_t params_count = params(layer);
    const std::int64_t ops = paper_ops(layer);
    if (params_count > 0 && ops > 0) {
        const double g = static_cast<double>(ops) * static_cast<double>(batch) / static_cast<double>(params_count);
        std::string closed_formula, closed_numbers;
        if (std::holds_alternative<Conv2D>(layer)) {
            const auto& c = std::get<Conv2D>(layer);
            closed_formula = " = B·Ho·Wo";
            closed_numbers = " = " + n(batch) + "·" + n(c.out_height()) + "·" + n(c.out_width());
        } else if (std::holds_alternative<Linear>(layer)) {
            closed_formula = " = B·rows";
            closed_numbers = " = " + n(batch) + "·" + n(std::get<Linear>(layer).config().rows);
        }
        const bool whole = g == std::floor(g) && g < 9e15;
        b.real("gamma", "Γ", "paper ops·B / params",
               grouped(ops) + "·" + n(batch) + " / " + grouped(params_count) + closed_formula + closed_numbers, g,
               whole ? grouped(static_cast<std::int64_t>(g)) : fixed(g, g < 100 ? 2 : 0), "",
               "operations per parameter: how much work each weight fetched does");
    }

    // The batch, the passes.
    const std::int64_t instances = roofplan::detail::mul(batch, repeat, "batch");
    std::vector<Pass> passes;
    if (pass != "backward") passes.push_back(Pass::forward);
    if (pass != "forward") {
        if (needs_input_gradient) passes.push_back(Pass::backward_data);
        passes.push_back(Pass::backward_weight);
    }
    b.section("for the batch: B = " + n(batch) + (repeat != 1 ? " (x" + n(repeat) + " repeats = " + n(instances) + ")" : "") +
              ", " + pass_label(pass) + ", " + e.precision);
    Work total{};
    for (Pass p : passes) {
        const Work w = work(layer, p, instances, precision);
        const std::string name(to_string(p));
        const std::int64_t fwd = forward_macs(layer).value();
        const std::string id = "macs_" + name;
        const char* symbol = p == Pass::forward ? "MACs fwd" : p == Pass::backward_data ? "MACs bwd-data" : "MACs bwd-weight";
        const bool data = p == Pass::backward_data;
        if (p == Pass::forward) {
            b.checked(id, symbol, "B·MACs", n(instances) + "·" + n(fwd), instances * fwd, w.macs.value());
        } else if (std::holds_alternative<Conv2D>(layer) || std::holds_alternative<Linear>(layer) ||
                   (data && std::holds_alternative<LSTM>(layer))) {
            const bool conv = std::holds_alternative<Conv2D>(layer);
            b.checked(id, symbol, "B·MACs", n(instances) + "·" + n(fwd), instances * fwd, w.macs.value(), "",
                      data ? (conv ? "dX is a transposed convolution: the forward MACs again"
                                   : "dX = dY·W: the forward MACs again")
                           : (conv ? "dW sums X·dY over the batch and the output pixels: the forward MACs again"
                                   : "dW = dYᵀ·X: the forward MACs again"));
        } else if (std::holds_alternative<MultiHeadAttention>(layer)) {
            const auto& a = std::get<MultiHeadAttention>(layer);
            if (data)
                b.checked(id, symbol, "B·(projections + 2·(QKᵀ + P·V))",
                          n(instances) + "·(" + n(a.projection_macs()) + " + 2·" + n(a.core_macs()) + ")",
                          instances * (a.projection_macs() + 2 * a.core_macs()), w.macs.value(), "",
                          "dX through the projections; dP, dV, dQ, dK: two products per forward one");
            else
                b.checked(id, symbol, "B·projections", n(instances) + "·" + n(a.projection_macs()),
                          instances * a.projection_macs(), w.macs.value(), "",
                          "weight gradients of the four projections; the score products have no weights");
        } else {
            b.count(id, symbol, "", "", w.macs.value(), "", data ? "the gradient of the input" : "the gradients of the weights");
        }
        total += w;
    }
    if (pass == "backward" || pass == "all") {
        if (!needs_input_gradient) b.text("skipped", "skipped", "backward-data", "the model's first layer needs no input gradient");
    }
    if (passes.size() > 1) b.count("macs", "MACs", "Σ passes", "", total.macs.value());
    b.checked("flops", "FLOPs", "2·MACs + vector FLOPs",
              "2·" + n(total.macs.value()) + " + " + n(total.vector_flops.value()),
              2 * total.macs.value() + total.vector_flops.value(), total.flops().value(), "FLOP",
              "a multiply-add is 2 FLOP; torchvision's \"GFLOPS\" are MACs");
    const std::int64_t width = element_bytes(precision);
    const bool amp = is_mixed(precision);
    std::int64_t wr = 0, ar = 0, aw = 0, gw = 0;
    for (Pass p : passes) {
        const PassCost c = cost(layer, p, instances);
        wr += c.weight_elements_read;
        ar += c.activation_elements_read;
        aw += c.activation_elements_written;
        gw += c.gradient_elements_written;
    }
    std::string bf = "(weights + inputs + outputs)·" + n(width), bs = "(" + n(wr) + " + " + n(ar) + " + " + n(aw) + ")·" + n(width);
    std::int64_t bytes = (wr + ar + aw) * width;
    if (gw > 0) {
        const std::int64_t gwidth = gradient_bytes(precision);
        bf += " + weight gradients·" + n(gwidth);
        bs += " + " + n(gw) + "·" + n(gwidth);
        bytes += gw * gwidth;
    }
    b.checked("bytes", "bytes", bf, bs, bytes, total.bytes().value(), "B",
              n(width) + " B per element at " + e.precision + "; weights are read once per pass, activations per sample" +
                  (gw > 0 && amp ? "; AMP accumulates FP32 weight gradients" : ""));
    const double intensity = total.bytes().value() > 0
                                 ? static_cast<double>(total.flops().value()) / static_cast<double>(total.bytes().value())
                                 : 0.0;
    b.real("intensity", "intensity", "FLOPs / bytes", grouped(total.flops().value()) + " / " + grouped(total.bytes().value()),
           intensity, fixed(intensity, intensity < 10 ? 2 : 1), "FLOP/B", "arithmetic intensity");

    if (device == nullptr) return e;
    // The roofline verdict.
    const Mode mode = pass == "forward" ? Mode::infer : Mode::train;
    const MathClass math = math_class(*device, precision, mode);
    const bool matrix = total.macs.value() > 0;
    // The bare roofline: datasheet peaks and bandwidth (the engine's efficiencies come after).
    const Roofline bare = Roofline::datasheet(*device, math);
    KernelWork bare_work;
    bare_work.macs = static_cast<double>(total.macs.value());
    bare_work.vector_flops = static_cast<double>(total.vector_flops.value());
    bare_work.bytes = static_cast<double>(total.bytes().value());
    const KernelTime bare_time = bare.time(bare_work);
    const double bandwidth = bare.bandwidth_bytes_s();
    const double used_peak = matrix ? bare.peak_flops_s() : bare.vector_peak_flops_s();
    const double ridge = bare.ridge_flops_per_byte(matrix);
    const double flops = bare_time.flops;
    const double moved = bare_time.bytes;
    const double compute_s = bare_time.compute_s;
    const double memory_s = bare_time.memory_s;
    const bool memory_bound = memory_s >= compute_s;
    const std::string dev(device->id.view());
    const std::string unit_name = matrix ? std::string(to_string(math)) : std::string("fp32 (vector)");
    e.verdict_lines.push_back("intensity " + fixed(intensity, intensity < 10 ? 2 : 1) + " FLOP/B " + (intensity < ridge ? "<" : ">=") +
                              " ridge " + fixed(ridge, ridge < 100 ? 1 : 0) + " FLOP/B of " + dev + " (" +
                              value_label(used_peak, "FLOP/s") + " " + unit_name + " / " +
                              value_label(bandwidth, "B/s") + ") → " +
                              (memory_bound ? "memory-bound" : "compute-bound"));
    e.verdict_lines.push_back("why: moving " + si(moved) + "B takes " + seconds_text(memory_s) + " at " +
                              value_label(bandwidth, "B/s") + "; the " + si(flops) + "FLOP take " +
                              seconds_text(compute_s) + " at the " + unit_name + " peak" +
                              (matrix && total.vector_flops.value() > 0 ? " (vector FLOPs at the FP32 peak)" : "") +
                              "; the slower one sets the time: ≥ " + seconds_text(std::max(memory_s, compute_s)));
    if (memory_bound)
        e.verdict_lines.push_back(
            "to become compute-bound it would need " +
            fixed(ridge / std::max(intensity, 1e-12), ridge / std::max(intensity, 1e-12) < 10 ? 1 : 0) +
            "x the intensity: a larger batch raises it when weights dominate the bytes (" +
            fixed(100.0 * static_cast<double>(wr * width) / std::max(moved, 1.0), 0) + "% here), not when activations do");
    else
        e.verdict_lines.push_back("the memory system idles " +
                                  fixed(100.0 * (1.0 - memory_s / compute_s), 0) +
                                  "% of the time; only a faster math unit (or lower precision) speeds it up");
    // What the engine predicts with efficiencies, launch latency and wave quantization.
    PredictRequest request;
    request.batch = batch;
    request.precision = precision;
    request.mode = mode;
    const EfficiencyProfile prof = profile ? *profile : default_profile(*device);
    double engine_s = 0;
    std::string engine_bound = "-";
    if (const auto lp = predict_layer(layer, *device, prof, request, needs_input_gradient, repeat)) {
        engine_s = pass == "forward" ? lp->pass[Pass::forward].value()
                   : pass == "backward" ? lp->pass[Pass::backward_data].value() + lp->pass[Pass::backward_weight].value()
                                        : lp->time.value();
        engine_bound = std::string(to_string(lp->bound));
    }
    e.verdict_lines.push_back("the engine predicts " + seconds_text(engine_s) + " (" + engine_bound + "-bound): " +
                              fixed(100 * prof.gemm_efficiency(math), 0) + "% GEMM and " + fixed(100 * prof.memory, 0) +
                              "% memory efficiency, " + seconds_text(prof.launch_s) +
                              " launch per kernel, wave quantization (profile: " + std::string(prof.source.view()) + ")");
    e.verdict = {{"device", dev},
                 {"math_class", to_string(math)},
                 {"peak_flops_per_s", used_peak},
                 {"bandwidth_bytes_per_s", bandwidth},
                 {"ridge_flops_per_byte", ridge},
                 {"intensity_flops_per_byte", intensity},
                 {"compute_time_s", compute_s},
                 {"memory_time_s", memory_s},
                 {"roofline_time_s", std::max(compute_s, memory_s)},
                 {"bound", memory_bound ? "memory" : "compute"},
                 {"engine_time_s", engine_s},
                 {"engine_bound", engine_bound},
                 {"profile", prof.source.view()},
                 {"lines", e.verdict_lines}};
    return e;
}

}  // namespace roofplan::cli
