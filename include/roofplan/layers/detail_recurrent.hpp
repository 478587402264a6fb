// roofplan/layers/detail_recurrent.hpp — what LSTM and GRU share: the configuration, the weights of stacked and
// bidirectional layers, the three passes, the field table and the explanation; they differ in their gate count and
// their per-cell constants (internal).
#pragma once

#include <roofplan/layers/describe.hpp>
#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/layers/explain.hpp>
#include <roofplan/shape.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace roofplan::layers {

/// LSTM's and GRU's configuration: `input_size` features in, `hidden_size` out per direction, `seq_len` steps.
struct RecurrentConfig {
    std::int64_t input_size = 0, hidden_size = 0, seq_len = 0;
    std::int64_t num_layers = 1;
    bool bidirectional = false;
    std::int64_t bias_vectors = 2;  ///< 2: PyTorch's b_ih and b_hh; 1: TensorFlow's one; 0: none
};

namespace detail {

/// A recurrent cell's constants.  Per cell (hidden unit of one layer and direction) and step: vector FLOPs
/// besides the bias adds (gates·bias_vectors), and the elements each pass reads and writes besides the layers'
/// inputs (read forward and by the weight gradient, written as the input gradient).
struct RecurrentCosts {
    std::string_view who;
    i64 gates = 0;
    std::string_view gate_count;  ///< "four", for the explanation
    std::string_view flops_note;  ///< what the vector FLOPs are, for the explanation
    i64 forward_flops = 0, forward_reads = 0, forward_writes = 0;
    i64 backward_flops = 0, backward_reads = 0, backward_writes = 0;
    i64 weight_grad_reads = 0;
};

/// A stack of `num_layers` recurrent layers (each in one or two directions) over `seq_len` steps.  Per layer and
/// direction the gates cost gates·h·(in + h) MACs a step, where `in` is input_size for the first layer and
/// h·directions above it; params = those weights + bias_vectors·gates·h.  The input projection reads W_ih once per
/// pass; the recurrent GEMM re-reads W_hh every step (what a non-persistent kernel does).
class Recurrent {
public:
    [[nodiscard]] constexpr const RecurrentConfig& config() const { return c_; }
    [[nodiscard]] constexpr i64 directions() const { return c_.bidirectional ? 2 : 1; }
    [[nodiscard]] constexpr i64 params() const { return input_weights_ + recurrent_weights_ + biases_; }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.seq_len, c_.input_size}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.seq_len, c_.hidden_size * directions()}; }
    [[nodiscard]] constexpr i64 paper_ops() const { return macs_per_instance_ + mul(c_.seq_len, biases_); }

    [[nodiscard]] constexpr PassCost forward(i64 batch) const {
        PassCost p = with_macs(batch, costs_->gates * c_.bias_vectors + costs_->forward_flops);
        p.weight_elements_read = input_weights_ + biases_ + mul(c_.seq_len, recurrent_weights_);
        p.activation_elements_read = mul(batch, inputs_ + costs_->forward_reads * cells_);
        p.activation_elements_written = mul(batch, costs_->forward_writes * cells_);
        p.gemm = {mul(batch, c_.seq_len), costs_->gates * c_.hidden_size, c_.input_size, directions()};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(i64 batch) const {
        PassCost p = with_macs(batch, costs_->backward_flops);
        p.weight_elements_read = input_weights_ + mul(c_.seq_len, recurrent_weights_);
        p.activation_elements_read = mul(batch, costs_->backward_reads * cells_);
        p.activation_elements_written = mul(batch, inputs_ + costs_->backward_writes * cells_);
        p.gemm = {mul(batch, c_.seq_len), c_.input_size, costs_->gates * c_.hidden_size, directions()};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(i64 batch) const {
        PassCost p = with_macs(batch, costs_->gates * c_.bias_vectors);
        p.activation_elements_read = mul(batch, inputs_ + costs_->weight_grad_reads * cells_);
        p.gradient_elements_written = params();
        p.gemm = {costs_->gates * c_.hidden_size, c_.input_size, mul(batch, c_.seq_len), directions()};
        return p;
    }

    [[nodiscard]] constexpr const RecurrentCosts& costs() const { return *costs_; }

protected:
    constexpr Recurrent(const RecurrentConfig& config, const RecurrentCosts& costs) : c_(config), costs_(&costs) {
        using roofplan::detail::require_positive;
        require_positive(c_.input_size, costs_->who, "input_size");
        require_positive(c_.hidden_size, costs_->who, "hidden_size");
        require_positive(c_.seq_len, costs_->who, "seq_len");
        require_positive(c_.num_layers, costs_->who, "num_layers");
        if (c_.bias_vectors < 0 || c_.bias_vectors > 2)
            roofplan::detail::fail(costs_->who, ": bias_vectors must be 0, 1 (TensorFlow) or 2 (PyTorch), got ",
                                   c_.bias_vectors);
        const i64 h = c_.hidden_size;
        const i64 dirs = directions();
        const i64 gate_rows = mul(costs_->gates, h, "recurrent weights");
        for (i64 layer = 0; layer < c_.num_layers; ++layer) {
            const i64 in = layer == 0 ? c_.input_size : h * dirs;
            input_weights_ = add(input_weights_, dirs * mul(gate_rows, in, "recurrent weights"));
            recurrent_weights_ = add(recurrent_weights_, dirs * mul(gate_rows, h, "recurrent weights"));
        }
        biases_ = mul(c_.num_layers * dirs * c_.bias_vectors, gate_rows, "recurrent biases");
        macs_per_instance_ = mul(c_.seq_len, input_weights_ + recurrent_weights_, "recurrent MACs");
        cells_ = mul(c_.seq_len, c_.num_layers * dirs * h, "recurrent cells");
        // Widths of every layer's input, summed over the layers and the steps.
        inputs_ = mul(c_.seq_len, c_.input_size + (c_.num_layers - 1) * h * dirs, "recurrent inputs");
    }

    RecurrentConfig c_;

private:
    /// A pass's MACs (each is every weight once per step) and `flops_per_cell` vector FLOPs per cell and step.
    [[nodiscard]] constexpr PassCost with_macs(i64 batch, i64 flops_per_cell) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(mul(batch, macs_per_instance_, costs_->who));
        p.vector_flops = units::flops(mul(batch, cells_, flops_per_cell));
        return p;
    }

    const RecurrentCosts* costs_;
    i64 input_weights_ = 0, recurrent_weights_ = 0, biases_ = 0;  // summed over the layers and directions
    i64 macs_per_instance_ = 0, cells_ = 0, inputs_ = 0;            // cells and layer inputs summed over the steps
};

/// The fields of both: in model files the input is [sequence, features].
constexpr Description<RecurrentConfig, 6> recurrent_description(std::string_view type) {
    using C = RecurrentConfig;
    return {.types = {type},
            .input = {2, "[sequence, features]"},
            .fields = {field("in", "input_size", &C::input_size, "input features").from(Source::input_axis1).needed(),
                       field("hidden", "hidden_size", &C::hidden_size, "hidden width").needed(),
                       field("seq", "seq_len", &C::seq_len, "time steps").from(Source::input_axis0).needed(),
                       field("layers", "num_layers", &C::num_layers, "stacked layers, default 1"),
                       field("bidirectional", "", &C::bidirectional, "default 0"),
                       field("bias_vectors", "", &C::bias_vectors, "2 (PyTorch, default), 1 (TensorFlow) or 0")
                           .at_least(0)}};
}

/// Parameters (the gates' input and recurrent matrices, then the biases), MACs and vector FLOPs per instance.
inline void recurrent_steps(Derivation& d, const Recurrent& layer) {
    const RecurrentConfig& c = layer.config();
    const RecurrentCosts& k = layer.costs();
    const i64 h = c.hidden_size, dirs = layer.directions(), gates = k.gates;
    const std::string g = num(gates), gh = g + "h";
    output_step(d, layer, "seq×(hidden·directions)");
    d.section("parameters");
    i64 weights = dirs * gates * h * (c.input_size + h);
    std::string f = "dirs·" + gh + "·(in + h)";
    std::string s = num(dirs) + "·" + g + "·" + num(h) + "·(" + num(c.input_size) + " + " + num(h) + ")";
    if (c.num_layers > 1) {
        weights += (c.num_layers - 1) * dirs * gates * h * (h * dirs + h);
        f += " + (layers − 1)·dirs·" + gh + "·(h·dirs + h)";
        s += " + " + num(c.num_layers - 1) + "·" + num(dirs) + "·" + g + "·" + num(h) + "·(" + num(h) + "·" +
             num(dirs) + " + " + num(h) + ")";
    }
    const i64 biases = c.num_layers * dirs * c.bias_vectors * gates * h;
    d.checked("params", "params", f + " + layers·dirs·bv·" + gh,
              s + " + " + num(c.num_layers) + "·" + num(dirs) + "·" + num(c.bias_vectors) + "·" + g + "·" + num(h),
              weights + biases, layer.params(), "",
              std::string(k.gate_count) + " gates, each an input and a recurrent matrix; bv bias vectors per gate");
    d.section("operations per instance");
    d.checked("macs_per_instance", "MACs", "seq·(weights)", num(c.seq_len) + "·" + num(weights), c.seq_len * weights,
              layer.forward(1).macs.value(), "", "every weight once per time step");
    d.count("vector_flops_per_instance", "vector FLOPs",
            "seq·h·dirs·layers·(" + g + "·bv + " + num(k.forward_flops) + ")", "",
            layer.forward(1).vector_flops.value(), "FLOP", std::string(k.flops_note));
    d.count("paper_ops", "paper ops", "MACs + seq·biases", "", layer.paper_ops(), "");
}

/// A recurrent layer type: one per cell (`using LSTM = RecurrentLayer<lstm_cell>`).
template <const RecurrentCosts& Cell>
class RecurrentLayer : public Recurrent {
public:
    using Config = RecurrentConfig;
    static constexpr std::string_view type_name = Cell.who;

    constexpr explicit RecurrentLayer(const Config& config) : Recurrent(config, Cell) {}

    static constexpr auto describe() { return recurrent_description(type_name); }
};

}  // namespace detail

template <const detail::RecurrentCosts& Cell>
struct Explain<detail::RecurrentLayer<Cell>> {
    static void steps(Derivation& d, const detail::RecurrentLayer<Cell>& layer) { detail::recurrent_steps(d, layer); }
    /// dX = dY·W: the forward MACs again; the weight gradient's count comes from the descriptor.
    static std::optional<PassMacs> pass_macs(const detail::RecurrentLayer<Cell>& layer, Pass pass,
                                             std::int64_t instances) {
        if (pass != Pass::backward_data) return std::nullopt;
        return forward_macs_again(layer, instances, "dX = dY·W: the forward MACs again");
    }
};

}  // namespace roofplan::layers
