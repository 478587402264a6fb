// roofplan/memory/dataflow.hpp — which tensor feeds each layer of a model, recovered from its ordered list.
//
// A roofplan model is a sequence of named layers; the memory walk needs the graph: which earlier output each node
// reads, and so when each output is no longer needed.  Values are the model input (0) and each node's output
// (node i → value i + 1).  The rules:
//   * a node reads the current stream when its input shape matches it;
//   * an embedding reads the model input (token ids); consecutive embeddings queue their outputs for the add
//     that sums them (BERT's word + position + token-type embeddings);
//   * a matrix layer right after another with the same input shape reads what that one read (the gate and up
//     projections of a gated MLP), and queues the stream for the join that follows;
//   * a node whose input shape does not match the stream reads the residual branch point when that matches (a
//     ResNet downsample convolution, the 2nd..4th branches of an Inception module) and queues the stream for the
//     join that follows;
//   * an add or a concat of k inputs reads the stream and k − 1 queued outputs, then the branch point; a
//     multiply reads the stream and one queued output (a gated MLP);
//   * the branch point is the stream entering the first "opening" layer (a matrix layer, or a pre-norm
//     transformer's norm) after the model input, a join (add, concat) or a pooling layer — the block input of a
//     ResNet block, the output of a BERT layer's LayerNorm, the residual stream before a GPT-2 block's ln_1.
// A mismatch nothing explains (BERT's pooler reading the [CLS] row) reads the stream.  Models built by hand in
// other shapes get the same rules; see docs/memory.md.
#pragma once

#include <roofplan/memory/implementation.hpp>
#include <roofplan/model/model.hpp>

#include <array>
#include <cstdint>
#include <variant>
#include <vector>

namespace roofplan::memory {

/// The values one node reads (value 0: the model input; value i + 1: node i's output).
struct Route {
    std::array<std::uint32_t, 4> inputs{};
    std::uint8_t count = 0;
    void add(std::uint32_t v) {
        if (count < inputs.size()) inputs[count++] = v;
    }
};

/// The graph of a model: each node's inputs and each value's number of readers.
struct Dataflow {
    std::vector<Route> routes;             ///< per node
    std::vector<std::uint32_t> readers;    ///< per value: nodes that read it (the loss not counted)
};

namespace dataflow_detail {

inline bool opens_block(const AnyLayer& layer, bool pre_norm) {
    if (pre_norm && (std::holds_alternative<LayerNorm>(layer) || std::holds_alternative<RMSNorm>(layer))) return true;
    return std::holds_alternative<Conv2D>(layer) || std::holds_alternative<ConvTranspose2D>(layer) ||
           std::holds_alternative<Linear>(layer) || std::holds_alternative<MultiHeadAttention>(layer) ||
           std::holds_alternative<AdditiveAttention>(layer) || std::holds_alternative<LSTM>(layer) ||
           std::holds_alternative<GRU>(layer) || std::holds_alternative<MatMul>(layer);
}
inline std::int64_t join_inputs(const AnyLayer& layer) {
    if (const auto* a = std::get_if<Add>(&layer)) return a->config().inputs;
    if (const auto* c = std::get_if<Concat>(&layer)) return c->config().inputs;
    if (std::holds_alternative<Multiply>(layer)) return 2;
    return 0;
}

/// The routing state while walking the nodes in order.
struct Router {
    std::vector<Shape> shapes;            ///< per value
    std::vector<std::uint32_t> queued;    ///< outputs waiting for a join
    std::uint32_t stream = 0, branch = 0;
    std::uint32_t previous_input = 0;     ///< what the previous node read, when it was a matrix layer
    bool previous_matrix = false;
    bool branch_open = true;              ///< the next opening layer sets the branch point
    bool after_embedding = false;

    std::uint32_t pop_or(std::uint32_t fallback) {
        if (queued.empty()) return fallback;
        const std::uint32_t v = queued.back();
        queued.pop_back();
        return v;
    }
    /// The value a non-join node reads.
    std::uint32_t input_for(const Shape& wanted, bool matrix) {
        if (shapes[stream] == wanted) return stream;
        if (matrix && previous_matrix && shapes[previous_input] == wanted) {
            queued.push_back(stream);
            return previous_input;
        }
        if (shapes[branch] == wanted) {
            queued.push_back(stream);
            return branch;
        }
        for (std::size_t i = queued.size(); i-- > 0;)
            if (shapes[queued[i]] == wanted) return queued[i];
        return stream;
    }
};

}  // namespace dataflow_detail

/// Recovers the graph of `model` (see the file comment).
inline Dataflow dataflow(const Model& model, const Implementation& impl) {
    using namespace dataflow_detail;
    const auto& nodes = model.nodes();
    Dataflow out;
    out.routes.resize(nodes.size());
    out.readers.assign(nodes.size() + 1, 0);
    Router r;
    r.shapes.reserve(nodes.size() + 1);
    r.shapes.push_back(model.input_shape());
    for (std::size_t i = 0; i < nodes.size(); ++i) {
        const AnyLayer& layer = nodes[i].layer;
        Route& route = out.routes[i];
        const bool embedding = std::holds_alternative<Embedding>(layer);
        if (embedding) {
            if (r.after_embedding) r.queued.push_back(r.stream);
            route.add(0);
        } else if (const std::int64_t k = join_inputs(layer); k > 0) {
            route.add(r.stream);
            for (std::int64_t j = 1; j < k; ++j) route.add(r.pop_or(r.branch));
        } else {
            const bool matrix = opens_block(layer, false);
            const std::uint32_t in = r.input_for(input_shape(layer), matrix);
            r.previous_input = in;
            if (r.branch_open && opens_block(layer, impl.pre_norm)) {
                r.branch = in;
                r.branch_open = false;
            }
            route.add(in);
        }
        for (std::uint8_t j = 0; j < route.count; ++j) out.readers[route.inputs[j]] += 1;
        const auto value = static_cast<std::uint32_t>(i + 1);
        r.shapes.push_back(output_shape(layer));
        r.stream = value;
        r.after_embedding = embedding;
        r.previous_matrix = !embedding && join_inputs(layer) == 0 && opens_block(layer, false);
        if (join_inputs(layer) > 0 && !std::holds_alternative<Multiply>(layer)) r.branch_open = true;
        if (std::holds_alternative<Pool2D>(layer) || std::holds_alternative<AdaptiveAvgPool2D>(layer)) r.branch_open = true;
    }
    return out;
}

}  // namespace roofplan::memory
