// roofplan/layers/explain.hpp — a layer's arithmetic as a derivation: each step a formula, the same formula with the
// numbers substituted, and its value, which `checked` compares with the descriptor's own count (`roofplan explain`
// prints it).  Each layer says how its shapes, parameters and per-instance work are derived in an `Explain<L>`
// specialization beside it, in its own header; a layer without one is explained by `generic_steps` (its
// descriptor's counts, per element), so a new layer is explainable the day it is added.
#pragma once

#include <roofplan/shape.hpp>
#include <roofplan/work.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace roofplan::layers {

/// One line of a derivation: `symbol = formula = substituted = value unit (note)`.
struct DerivationStep {
    std::string section;
    std::string id;
    std::string symbol;
    std::string formula;      ///< symbolic, may be empty
    std::string substituted;  ///< the formula with numbers, may be empty
    std::variant<std::int64_t, double, std::string> value;
    std::string value_text;   ///< how to print a real value; empty for counts and text (the front end formats them)
    std::string unit;
    std::string note;
};

/// Collects the steps of a derivation, section by section.
class Derivation {
public:
    void section(std::string name) { section_ = std::move(name); }
    /// A count; `substituted` is dropped when it only repeats the value ("out = 4096", not "= 4096 = 4,096").
    void count(std::string id, std::string symbol, std::string formula, std::string substituted, std::int64_t value,
               std::string unit = "", std::string note = "") {
        if (substituted == std::to_string(value)) substituted.clear();
        steps_.push_back({section_, std::move(id), std::move(symbol), std::move(formula), std::move(substituted), value,
                          "", std::move(unit), std::move(note)});
    }
    /// A count whose formula the derivation evaluated itself: it must agree with the descriptor's.
    void checked(std::string id, std::string symbol, std::string formula, std::string substituted, std::int64_t ours,
                 std::int64_t library, std::string unit = "", std::string note = "") {
        if (ours != library)
            throw std::logic_error("explain: " + id + " = " + std::to_string(ours) + " by the formula but " +
                                   std::to_string(library) + " by the descriptor");
        count(std::move(id), std::move(symbol), std::move(formula), std::move(substituted), ours, std::move(unit),
              std::move(note));
    }
    void text(std::string id, std::string symbol, std::string value, std::string note = "") {
        steps_.push_back({section_, std::move(id), std::move(symbol), "", "", value, "", "", std::move(note)});
    }
    void real(std::string id, std::string symbol, std::string formula, std::string substituted, double value,
              std::string value_text, std::string unit, std::string note = "") {
        steps_.push_back({section_, std::move(id), std::move(symbol), std::move(formula), std::move(substituted), value,
                          std::move(value_text), std::move(unit), std::move(note)});
    }
    [[nodiscard]] const std::vector<DerivationStep>& steps() const { return steps_; }

private:
    std::vector<DerivationStep> steps_;
    std::string section_;
};

/// A count as formulas substitute it: plain digits.
inline std::string num(std::int64_t value) { return std::to_string(value); }

/// Γ's closed form where a layer has one: `formula` " = B·Ho·Wo", `numbers` " = 32·56·56".
struct ClosedForm {
    std::string formula;
    std::string numbers;
};

/// The MACs of a backward pass with the formula that gives them.
struct PassMacs {
    std::string formula;
    std::string substituted;
    std::int64_t value = 0;
    std::string note;
};

/// How layer L explains itself; a specialization beside L may give any of
///   static void steps(Derivation&, const L&);                            shapes after the input, parameters, work
///   static void params(Derivation&, const L&);                           only the parameters (with the generic rest)
///   static ClosedForm gamma(const L&, std::int64_t batch);               Γ's closed form
///   static std::optional<PassMacs> pass_macs(const L&, Pass, std::int64_t instances);   a backward pass's MACs
template <class L>
struct Explain {};

/// The output shape, with what it is made of (`note`, e.g. "cout×Ho×Wo").
template <class L>
void output_step(Derivation& d, const L& layer, std::string note = "") {
    d.text("output_shape", "output", layer.output_shape().to_string(), std::move(note));
}

/// The descriptor's parameter count, for layers whose parameters need no formula (most have none).
template <class L>
void params_step(Derivation& d, const L& layer) {
    d.count("params", "params", "", "", layer.params(), "",
            layer.params() == 0 ? "no parameters" : "the layer's documentation gives the formula");
}

/// The forward pass's MACs per instance, from the descriptor.
template <class L>
void macs_step(Derivation& d, const L& layer) {
    const std::int64_t macs = layer.forward(1).macs.value();
    d.count("macs_per_instance", "MACs", "", "", macs, "",
            macs > 0 ? "matrix products; the rule is in docs/counting.md" : "no matrix products");
}

/// Vector FLOPs per instance as FLOP per output element · outputs, where they divide evenly.
template <class L>
void vector_flops_step(Derivation& d, const L& layer) {
    const std::int64_t flops = layer.forward(1).vector_flops.value();
    const std::int64_t elements = layer.output_shape().elements();
    if (elements > 0 && flops % elements == 0)
        d.checked("vector_flops_per_instance", "vector FLOPs", "FLOP per output element · outputs",
                  num(flops / elements) + "·" + num(elements), flops / elements * elements, flops, "FLOP",
                  "the per-element convention is in docs/counting.md");
    else
        d.count("vector_flops_per_instance", "vector FLOPs", "", "", flops, "FLOP");
}

template <class L>
void paper_ops_step(Derivation& d, const L& layer) {
    d.count("paper_ops", "paper ops", "", "", layer.paper_ops(), "",
            "the paper counts only multiply-adds and bias adds");
}

/// The per-instance work of a layer without matrix formulas: MACs, vector FLOPs per element, paper operations.
template <class L>
void elementwise_work(Derivation& d, const L& layer) {
    d.section("operations per instance");
    macs_step(d, layer);
    vector_flops_step(d, layer);
    paper_ops_step(d, layer);
}

/// The steps of a layer without its own `steps`: its output, parameters (its `params` step if it has one) and work
/// from the descriptor.
template <class L>
void generic_steps(Derivation& d, const L& layer) {
    output_step(d, layer);
    d.section("parameters");
    if constexpr (requires { Explain<L>::params(d, layer); }) Explain<L>::params(d, layer);
    else params_step(d, layer);
    elementwise_work(d, layer);
}

/// A backward pass that repeats the forward MACs (dX of a linear map, dW of a convolution).
template <class L>
PassMacs forward_macs_again(const L& layer, std::int64_t instances, std::string note) {
    const std::int64_t forward = layer.forward(1).macs.value();
    return {"B·MACs", num(instances) + "·" + num(forward), instances * forward, std::move(note)};
}

/// Both backward passes repeat the forward MACs (a linear map, a convolution); the notes say why.
template <class L>
std::optional<PassMacs> backward_macs_again(const L& layer, Pass pass, std::int64_t instances,
                                            std::string_view data_note, std::string_view weight_note) {
    if (pass == Pass::forward) return std::nullopt;
    return forward_macs_again(layer, instances, std::string(pass == Pass::backward_data ? data_note : weight_note));
}

/// Shapes after the input, parameters and per-instance work: the layer's own derivation or the generic one.
template <class L>
void explain_steps(Derivation& d, const L& layer) {
    if constexpr (requires { Explain<L>::steps(d, layer); }) Explain<L>::steps(d, layer);
    else generic_steps(d, layer);
}

/// Γ's closed form at a batch, where the layer has one.
template <class L>
std::optional<ClosedForm> explain_gamma(const L& layer, std::int64_t batch) {
    if constexpr (requires { Explain<L>::gamma(layer, batch); }) return Explain<L>::gamma(layer, batch);
    else return std::nullopt;
}

/// A backward pass's MACs with their formula, where the layer derives them (otherwise the front end shows the count).
template <class L>
std::optional<PassMacs> explain_pass_macs(const L& layer, Pass pass, std::int64_t instances) {
    if constexpr (requires { Explain<L>::pass_macs(layer, pass, instances); })
        return Explain<L>::pass_macs(layer, pass, instances);
    else return std::nullopt;
}

}  // namespace roofplan::layers
