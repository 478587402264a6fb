// roofplan/layers/recurrent.hpp — LSTM (stacked, optionally bidirectional).
#pragma once

#include <roofplan/layers/detail_cost.hpp>
#include <roofplan/shape.hpp>

namespace roofplan::layers {

/// An LSTM over `seq_len` steps.  Per layer and direction the four gates cost 4h·(in + h) MACs a step,
/// where `in` is input_size for the first layer and h·directions above it.  params per layer and direction
/// = 4h·(in + h) + bias_vectors·4h: PyTorch keeps two bias vectors (b_ih, b_hh: bias_vectors = 2),
/// TensorFlow's LSTMCell one (bias_vectors = 1).
/// Vector FLOPs per cell and step: the bias adds, 3 sigmoids and 2 tanh (4 FLOP each), c = f·c + i·g (3),
/// h = o·tanh(c) (1): 4h·bias_vectors + 24h.
/// Traffic: the input projection reads W_ih once per pass; the recurrent GEMM re-reads W_hh every step
/// (what a non-persistent kernel does); each step reads and writes the gates and the states.
class LSTM {
public:
    struct Config {
        std::int64_t input_size = 0;
        std::int64_t hidden_size = 0;
        std::int64_t seq_len = 0;
        std::int64_t num_layers = 1;
        bool bidirectional = false;
        std::int64_t bias_vectors = 2;
    };
    static constexpr std::string_view type_name = "lstm";

    constexpr explicit LSTM(const Config& config) : c_(config) {
        using roofplan::detail::require_positive;
        require_positive(c_.input_size, "lstm", "input_size");
        require_positive(c_.hidden_size, "lstm", "hidden_size");
        require_positive(c_.seq_len, "lstm", "seq_len");
        require_positive(c_.num_layers, "lstm", "num_layers");
        if (c_.bias_vectors < 0 || c_.bias_vectors > 2)
            roofplan::detail::fail("lstm: bias_vectors must be 0, 1 (TensorFlow) or 2 (PyTorch), got ",
                                   c_.bias_vectors);
        const std::int64_t h = c_.hidden_size;
        const std::int64_t dirs = directions();
        for (std::int64_t layer = 0; layer < c_.num_layers; ++layer) {
            const std::int64_t in = layer == 0 ? c_.input_size : h * dirs;
            input_weights_ += dirs * detail::mul(4 * h, in, "lstm weights");
            recurrent_weights_ += dirs * detail::mul(4 * h, h, "lstm weights");
        }
        biases_ = c_.num_layers * dirs * c_.bias_vectors * 4 * h;
        macs_per_instance_ = detail::mul(c_.seq_len, input_weights_ + recurrent_weights_, "lstm MACs");
    }
    [[nodiscard]] constexpr const Config& config() const { return c_; }
    [[nodiscard]] constexpr std::int64_t directions() const { return c_.bidirectional ? 2 : 1; }
    [[nodiscard]] constexpr std::int64_t params() const { return input_weights_ + recurrent_weights_ + biases_; }
    [[nodiscard]] constexpr Shape input_shape() const { return Shape{c_.seq_len, c_.input_size}; }
    [[nodiscard]] constexpr Shape output_shape() const {
        return Shape{c_.seq_len, c_.hidden_size * directions()};
    }
    [[nodiscard]] constexpr std::int64_t paper_ops() const {
        return macs_per_instance_ + detail::mul(c_.seq_len, biases_);
    }
    [[nodiscard]] constexpr PassCost forward(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "lstm MACs"));
        p.vector_flops = units::flops(detail::mul(batch, cells(), 4 * c_.bias_vectors + 24));
        p.weight_elements_read = input_weights_ + biases_ + detail::mul(c_.seq_len, recurrent_weights_);
        p.activation_elements_read = detail::mul(batch, c_.seq_len, layer_inputs() + 4 * cells_per_step());
        p.activation_elements_written = detail::mul(batch, c_.seq_len, 6 * cells_per_step());
        p.gemm = {detail::mul(batch, c_.seq_len), 4 * c_.hidden_size, c_.input_size, directions()};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_data(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "lstm MACs"));
        p.vector_flops = units::flops(detail::mul(batch, cells(), 30));
        p.weight_elements_read = input_weights_ + detail::mul(c_.seq_len, recurrent_weights_);
        p.activation_elements_read = detail::mul(batch, c_.seq_len, 8 * cells_per_step());
        p.activation_elements_written = detail::mul(batch, c_.seq_len, layer_inputs() + 4 * cells_per_step());
        p.gemm = {detail::mul(batch, c_.seq_len), c_.input_size, 4 * c_.hidden_size, directions()};
        return p;
    }
    [[nodiscard]] constexpr PassCost backward_weight(std::int64_t batch) const {
        roofplan::detail::require_batch(batch);
        PassCost p;
        p.macs = units::macs(detail::mul(batch, macs_per_instance_, "lstm MACs"));
        p.vector_flops = units::flops(detail::mul(batch, cells(), 4 * c_.bias_vectors));
        p.activation_elements_read = detail::mul(batch, c_.seq_len, layer_inputs() + 5 * cells_per_step());
        p.gradient_elements_written = params();
        p.gemm = {4 * c_.hidden_size, c_.input_size, detail::mul(batch, c_.seq_len), directions()};
        return p;
    }

private:
    /// Hidden units summed over layers and directions (cells updated per step).
    [[nodiscard]] constexpr std::int64_t cells_per_step() const {
        return c_.num_layers * directions() * c_.hidden_size;
    }
    [[nodiscard]] constexpr std::int64_t cells() const { return detail::mul(c_.seq_len, cells_per_step()); }
    /// Widths of every layer's input, summed.
    [[nodiscard]] constexpr std::int64_t layer_inputs() const {
        return c_.input_size + (c_.num_layers - 1) * c_.hidden_size * directions();
    }

    Config c_;
    std::int64_t input_weights_ = 0;
    std::int64_t recurrent_weights_ = 0;
    std::int64_t biases_ = 0;
    std::int64_t macs_per_instance_ = 0;
};

}  // namespace roofplan::layers
