// roofplan/model/model.hpp — a model: an ordered list of named layers, with totals per instance and per pass.
#pragma once

#include <roofplan/detail/fixed_string.hpp>
#include <roofplan/layers/layer.hpp>

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan {

/// A named layer in a model.  `needs_input_gradient` is false for layers fed by the network's input (no one
/// asks for the gradient of the images), so their backward-data pass is skipped in training.
using LayerName = FixedString<63>;
using ModelId = FixedString<31>;
using ModelDescription = FixedString<255>;

///
/// `repeat` is how many times the layer runs per instance (BERT-SWAG runs its encoder once per answer choice:
/// repeat = 4): parameters count once, work `repeat` times.
struct Node {
    LayerName name;
    AnyLayer layer;
    bool needs_input_gradient = true;
    std::int64_t repeat = 1;
};

/// Work of a training step by pass.
struct StepWork {
    Work forward{Pass::forward};
    Work backward_data{Pass::backward_data};
    Work backward_weight{Pass::backward_weight};

    [[nodiscard]] constexpr Work backward() const {
        Work w = backward_data;
        w += backward_weight;
        return w;
    }
    [[nodiscard]] constexpr Work total() const {
        Work w = forward;
        w += backward_data;
        w += backward_weight;
        return w;
    }
};

/// A model: an ordered list of named layers, executed in order for one instance (one image, one sequence).
/// Example:
///   constexpr auto m = roofplan::models::resnet50();
///   static_assert(m.params() == 25'557'032);
class Model {
public:
    constexpr Model() = default;
    constexpr Model(std::string_view id, std::string_view description, Shape input)
        : id_(id), description_(description), input_(input) {}

    /// Appends a layer; returns its output shape so that builders can chain.
    template <Layer L>
    constexpr Shape add(LayerName name, const L& layer, bool needs_input_gradient = true, std::int64_t repeat = 1) {
        if (name.empty()) detail::fail("model '", id_.view(), "': a layer needs a name");
        if (repeat < 1) detail::fail("model '", id_.view(), "': layer '", name.view(), "' repeat must be >= 1");
        nodes_.push_back(Node{name, AnyLayer{layer}, needs_input_gradient, repeat});
        return layer.output_shape();
    }
    constexpr void reserve(std::size_t n) { nodes_.reserve(n); }

    [[nodiscard]] constexpr std::string_view id() const { return id_.view(); }
    [[nodiscard]] constexpr std::string_view description() const { return description_.view(); }
    [[nodiscard]] constexpr Shape input_shape() const { return input_; }
    [[nodiscard]] constexpr const std::vector<Node>& nodes() const { return nodes_; }
    [[nodiscard]] constexpr std::size_t size() const { return nodes_.size(); }

    /// Exact trainable parameter count.
    [[nodiscard]] constexpr std::int64_t params() const {
        std::int64_t total = 0;
        for (const Node& n : nodes_) total = detail::add(total, roofplan::params(n.layer), "parameter count");
        return total;
    }
    /// Forward multiply-accumulates per instance.
    [[nodiscard]] constexpr mac_count forward_macs() const {
        mac_count total{};
        for (const Node& n : nodes_) total += roofplan::forward_macs(n.layer) * n.repeat;
        return total;
    }
    /// Forward FLOPs per instance (2 per MAC plus vector arithmetic).
    [[nodiscard]] constexpr flop_count forward_flops() const {
        flop_count total{};
        for (const Node& n : nodes_) total += roofplan::forward_flops(n.layer) * n.repeat;
        return total;
    }
    /// The paper's operations per instance (multiply-add = 1, bias add = 1; Conv2D, Linear, attention, LSTM).
    [[nodiscard]] constexpr std::int64_t paper_ops() const {
        std::int64_t total = 0;
        for (const Node& n : nodes_) total += roofplan::paper_ops(n.layer) * n.repeat;
        return total;
    }
    /// One pass over all layers for a batch.
    [[nodiscard]] constexpr Work pass_work(Pass pass, std::int64_t batch, Precision precision) const {
        Work total{pass};
        for (const Node& n : nodes_) {
            if (pass == Pass::backward_data && !n.needs_input_gradient) continue;
            total += work(n.layer, pass, detail::mul(batch, n.repeat, "batch"), precision);
        }
        return total;
    }
    /// Forward, backward-data and backward-weight work of one training step (one pass over the layers).
    [[nodiscard]] constexpr StepWork training_work(std::int64_t batch, Precision precision) const {
        detail::require_batch(batch);
        PassCost forward{}, backward_data{}, backward_weight{};
        for (const Node& n : nodes_) {
            const std::int64_t b = n.repeat == 1 ? batch : detail::mul(batch, n.repeat, "batch");
            std::visit(
                [&](const auto& layer) {
                    forward += layer.forward(b);
                    if (n.needs_input_gradient) backward_data += layer.backward_data(b);
                    backward_weight += layer.backward_weight(b);
                },
                n.layer);
        }
        return {to_work(forward, Pass::forward, precision), to_work(backward_data, Pass::backward_data, precision),
                to_work(backward_weight, Pass::backward_weight, precision)};
    }
    /// The node called `name`, or nullptr.
    [[nodiscard]] constexpr const Node* find(std::string_view name) const {
        for (const Node& n : nodes_)
            if (n.name.view() == name) return &n;
        return nullptr;
    }

private:
    ModelId id_;
    ModelDescription description_;
    Shape input_{};
    std::vector<Node> nodes_;
};

}  // namespace roofplan
