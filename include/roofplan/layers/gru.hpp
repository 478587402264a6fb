// roofplan/layers/gru.hpp — GRU (stacked, optionally bidirectional), the LSTM's three-gate sibling.
#pragma once

#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// A GRU over `seq_len` steps.  Per layer and direction the three gates (reset, update, new) cost 3h·(in + h)
/// MACs a step, where `in` is input_size for the first layer and h·directions above it.  params per layer and
/// direction = 3h·(in + h) + bias_vectors·3h (PyTorch and ONNX keep two bias vectors, b_ih and b_hh).
/// Vector FLOPs per cell and step: the bias adds (3·bias_vectors), two sigmoids and a tanh (4 FLOP each),
/// r·(W_hn·h + b_hn) and its add (2), h' = n + z·(h − n) (3): 3·bias_vectors + 17.
/// Example: `GRU{{.input_size = 32, .hidden_size = 8, .seq_len = 10}}.params() == 1'008`.
class GRU {
public:
    struct Config {
        std::int64_t input_size = 0;
        std::int64_t hidden_size = 0;
        std::int64_t seq_len = 0;
        std::int64_t num_layers = 1;
        bool bidirectional = false;
        std::int64_t bias_vectors = 2;
    };
    static constexpr std::string_view type_name = "gru";

    constexpr explicit GRU(const Config& config) : c_(config) {
        using roofplan::detail::require_positive;
        require_positive(c_.input_size, "gru", "input_size");
        require_positive(c_.hidden_size, "gru", "hidden_size");
        require_positive(c_.seq_len, "gru", "seq_len");
        require_positive(c_.num_layers, "gru", "num_layers");
        if (c_.bias_vectors < 0 || c_.bias_vectors > 2)
            roofplan::detail::fail("gru: bias_vectors must be 0, 1 or 2, got ", c_.bias_vectors);
        const std::int64_t h = c_.hidden_size;
        const std::int64_t dirs = directions();
        for (std::int64_t layer = 0; layer < c_.num_layers; ++layer) {
            const std::int64_t in = layer == 0 ? c_.input_size : h * dirs;
            input_weights_ = detail::add(input_weights_, dirs * detail::mul(3 * h, in, "gru weights"));
            recurrent_weights_ = detail::add(recurrent_weights_, dirs * detail::mul(3 * h, h, "gru weights"));
        }
        biases_ = detail::mul(c_.num_layers * dirs * c_.bias_vectors, 3 * h, "gru biases");
        macs_per_instance_ = detail::mul(c_.seq_len, input_weights_ + recurrent_weights_, "gru MACs");
        cells_ = detail::mul(c_.seq_len, c_.num_layers * dirs * h, "gru cells");
    }

    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t directions() const { return c_.bidirectional ? 2 : 1; }
    [[nodiscard]] constexpr std::int64_t params() const { return input_weights_ + recurrent_weights_ + biases_; }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.seq_len, c_.input_size}; }
    [[nodiscard]] constexpr Shape output_shape() const { return Shape{c_.seq_len, c_.hidden_size * directions()}; }
    [[nodiscard]] constexpr std::int64_t paper_ops() const {
        return macs_per_instance_ + detail::mul(c_.seq_len, biases_);
    }

    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "gru MACs"));
        p.vector_flops = units::flops(detail::mul(batch, cells_, 3 * c_.bias_vectors + 17));
        p.weight_elements_read = input_weights_ + biases_ + detail::mul(c_.seq_len, recurrent_weights_);
        p.activation_elements_read = detail::mul(batch, detail::mul(c_.seq_len, layer_inputs()) + 3 * cells_);
        p.activation_elements_written = detail::mul(batch, 4 * cells_);
        p.gemm = {detail::mul(batch, c_.seq_len), 3 * c_.hidden_size, c_.input_size, directions()};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "gru MACs"));
        p.vector_flops = units::flops(detail::mul(batch, cells_, 24));
        p.weight_elements_read = input_weights_ + detail::mul(c_.seq_len, recurrent_weights_);
        p.activation_elements_read = detail::mul(batch, 6 * cells_);
        p.activation_elements_written = detail::mul(batch, detail::mul(c_.seq_len, layer_inputs()) + 3 * cells_);
        p.gemm = {detail::mul(batch, c_.seq_len), c_.input_size, 3 * c_.hidden_size, directions()};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "gru MACs"));
        p.vector_flops = units::flops(detail::mul(batch, cells_, 3 * c_.bias_vectors));
        p.activation_elements_read = detail::mul(batch, detail::mul(c_.seq_len, layer_inputs()) + 4 * cells_);
        p.gradient_elements_written = params();
        p.gemm = {3 * c_.hidden_size, c_.input_size, detail::mul(batch, c_.seq_len), directions()};
        return p;
    }

private:
    /// Widths of every layer's input, summed.
    [[nodiscard]] constexpr std::int64_t layer_inputs() const {
        return c_.input_size + (c_.num_layers - 1) * c_.hidden_size * directions();
    }
    Config c_;
    std::int64_t input_weights_ = 0;
    std::int64_t recurrent_weights_ = 0;
    std::int64_t biases_ = 0;
    std::int64_t macs_per_instance_ = 0;
    std::int64_t cells_ = 0;
};

}  // namespace roofplan::layers
