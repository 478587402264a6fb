// roofplan/model/model.hpp — a model: an ordered list of named layers, with totals per instance and per pass.
#pragma once

#include <roofplan/detail/fixed_string.hpp>
#include <roofplan/layers/layer.hpp>

#include <array>
#include <type_traits>
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
    /// The layer's cost per pass (indexed by Pass) as an affine function of the model's batch, `repeat`
    /// included; filled in by Model::add at run time (`affine` true).  Constant evaluation skips this cache
    /// (it would multiply the compile-time work) and walks the layers instead.  The backward-data entry is the
    /// layer's even when the model skips the pass.
    std::array<AffineCost, 3> costs{};
    bool affine = false;

    /// This node's cost of `pass` for a batch of `batch` model instances.
    [[nodiscard]] constexpr PassCost cost(Pass pass, std::int64_t batch) const {
        if (affine) return costs[static_cast<std::size_t>(pass)].at(batch);
        return roofplan::cost(layer, pass, detail::mul(batch, repeat, "batch"));
    }
    /// Whether a training step runs `pass` for this node.
    [[nodiscard]] constexpr bool runs(Pass pass) const {
        return pass != Pass::backward_data || needs_input_gradient;
    }
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

namespace detail {
/// One node's cost of one pass as plain integers, laid out so that summing a model is a stream of vector adds:
/// terms[{0 slope, 1 fixed}·6 + field], fields = MACs, vector FLOPs, weight elements read, activation elements
/// read, activation elements written, gradient elements written.  A pass the model skips is all zero.
struct CostRow {
    static constexpr std::size_t fields = 6;
    std::array<std::int64_t, 2 * fields> terms{};

    static constexpr void put(std::int64_t* out, const PassCost& c) {
        out[0] = c.macs.value();
        out[1] = c.vector_flops.value();
        out[2] = c.weight_elements_read;
        out[3] = c.activation_elements_read;
        out[4] = c.activation_elements_written;
        out[5] = c.gradient_elements_written;
    }
    static constexpr PassCost get(const std::int64_t* in) {
        PassCost c;
        c.macs = units::macs(in[0]);
        c.vector_flops = units::flops(in[1]);
        c.weight_elements_read = in[2];
        c.activation_elements_read = in[3];
        c.activation_elements_written = in[4];
        c.gradient_elements_written = in[5];
        return c;
    }
    static constexpr CostRow of(const Node& n, Pass pass) {
        CostRow r;
        if (!n.runs(pass)) return r;
        const AffineCost& a = n.costs[static_cast<std::size_t>(pass)];
        put(&r.terms[0], a.per_instance);
        put(&r.terms[fields], a.fixed);
        return r;
    }
    [[nodiscard]] constexpr AffineCost affine() const { return {get(&terms[0]), get(&terms[fields])}; }
};

/// Sums rows; the running sums stay in registers.
constexpr AffineCost sum(const std::vector<CostRow>& rows) {
    CostRow acc;
    for (const CostRow& r : rows)
        for (std::size_t k = 0; k < acc.terms.size(); ++k) acc.terms[k] += r.terms[k];
    return acc.affine();
}
}  // namespace detail

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
        Node node{name, AnyLayer{layer}, needs_input_gradient, repeat, {}, false};
        if (!std::is_constant_evaluated()) {
            for (std::size_t i = 0; i < node.costs.size(); ++i) {
                const auto pass = static_cast<Pass>(i);
                node.costs[i] = detail::affine_from(
                    [&](std::int64_t b) { return roofplan::cost(layer, pass, detail::mul(b, repeat, "batch")); });
            }
            node.affine = true;
            for (const Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_weight})
                rows(pass).push_back(detail::CostRow::of(node, pass));
            params_.push_back(roofplan::params(node.layer));
        } else {
            affine_ = false;
        }
        nodes_.push_back(node);
        return layer.output_shape();
    }
    constexpr void reserve(std::size_t n) {
        nodes_.reserve(n);
        if (std::is_constant_evaluated()) return;
        forward_rows_.reserve(n);
        backward_data_rows_.reserve(n);
        backward_weight_rows_.reserve(n);
        params_.reserve(n);
    }

    [[nodiscard]] constexpr std::string_view id() const { return id_.view(); }
    [[nodiscard]] constexpr std::string_view description() const { return description_.view(); }
    [[nodiscard]] constexpr Shape input_shape() const { return input_; }
    [[nodiscard]] constexpr const std::vector<Node>& nodes() const { return nodes_; }
    [[nodiscard]] constexpr std::size_t size() const { return nodes_.size(); }

    /// Exact trainable parameter count.
    [[nodiscard]] constexpr std::int64_t params() const {
        std::int64_t total = 0;
        if (affine_) {
            for (const std::int64_t p : params_) total = detail::add(total, p, "parameter count");
            return total;
        }
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
    /// One pass over all layers for a batch (every layer's cost, summed; the batch is applied once at the end,
    /// and since every term is non-negative an overflow anywhere shows up as an overflow of the total).
    [[nodiscard]] constexpr Work pass_work(Pass pass, std::int64_t batch, Precision precision) const {
        detail::require_batch(batch);
        if (!affine_) {
            PassCost sum{};
            for (const Node& n : nodes_)
                if (n.runs(pass)) sum += n.cost(pass, batch);
            return to_work(sum, pass, precision);
        }
        return to_work(detail::sum(rows(pass)).at(batch), pass, precision);
    }
    /// Forward, backward-data and backward-weight work of one training step (one pass over the layers).
    [[nodiscard]] constexpr StepWork training_work(std::int64_t batch, Precision precision) const {
        detail::require_batch(batch);
        if (!affine_)
            return {pass_work(Pass::forward, batch, precision), pass_work(Pass::backward_data, batch, precision),
                    pass_work(Pass::backward_weight, batch, precision)};
        return {to_work(detail::sum(forward_rows_).at(batch), Pass::forward, precision),
                to_work(detail::sum(backward_data_rows_).at(batch), Pass::backward_data, precision),
                to_work(detail::sum(backward_weight_rows_).at(batch), Pass::backward_weight, precision)};
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
    // Per pass, one row per node, for fast totals; and per-node parameter counts (run time only).
    std::vector<detail::CostRow> forward_rows_, backward_data_rows_, backward_weight_rows_;
    std::vector<std::int64_t> params_;
    constexpr std::vector<detail::CostRow>& rows(Pass pass) {
        return pass == Pass::forward ? forward_rows_ : pass == Pass::backward_data ? backward_data_rows_
                                                                                   : backward_weight_rows_;
    }
    [[nodiscard]] constexpr const std::vector<detail::CostRow>& rows(Pass pass) const {
        return pass == Pass::forward ? forward_rows_ : pass == Pass::backward_data ? backward_data_rows_
                                                                                   : backward_weight_rows_;
    }
    bool affine_ = true;  ///< every node carries its affine costs (false once a node was added at compile time)
};

}  // namespace roofplan
