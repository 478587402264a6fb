// roofplan/memory/step.hpp — records a step's allocations in order (the walk), as the training loop of
// validation/e2e/e2e_suite.py runs it:
//
//   setup      the weights and buffers (module order), the input batch, the cuBLAS/cuBLASLt workspaces;
//   step       zero_grad(set_to_none=True) frees the gradients;
//              forward, layer by layer (under autocast for amp-*): each layer's outputs, the tensors it keeps,
//                its temporaries; an output is freed after its last reader unless a backward keeps it;
//              the loss (cross-entropy in FP32: the logits cast up, log-softmax kept); autocast's exit drops its
//                cached weight copies (the ones a layer kept stay until that layer's backward);
//              backward in reverse: a layer's incoming gradient, the gradients it makes (activations: delivered to
//                the tensors it read, summed where two paths meet; weights: the FP32 .grad, which then stays),
//                what it kept released after it;
//              the optimizer (foreach): SGD momentum in place; AdamW's sqrt(v) temporaries, one per parameter.
// The first step also creates the optimizer state (SGD: momentum = a clone of the gradient; Adam: zeros for
// both moments, torch/optim/adam.py _init_group) and, with cudnn.benchmark, searches each distinct convolution's
// algorithms, each search ending in emptyCache (aten/src/ATen/native/cudnn/Conv_v7.cpp).  Inference is the
// forward under no_grad: nothing is kept, autocast's weight copies are held to the end of the forward.
#pragma once

#include <roofplan/memory/rules.hpp>
#include <roofplan/memory/walk.hpp>

#include <cstdint>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

namespace roofplan::memory {

namespace step_detail {

/// A parameter or buffer as a layer registers it (PyTorch's order), and how the layer's op uses it.
struct LayerParam {
    std::int64_t numel = 0;
    bool cast = false, cast_saved = false, trainable = true;
    std::int64_t width = 4;  ///< as stored in training (an inference engine stores trainable ones in its dtype)
};

inline void matrix_params(std::vector<LayerParam>& out, std::int64_t weights, std::int64_t bias) {
    out.push_back({weights, true, true, true, 4});
    if (bias > 0) out.push_back({bias, true, false, true, 4});
}
inline void attention_params(const MultiHeadAttention& a, const Implementation& impl, std::vector<LayerParam>& out) {
    const auto& c = a.config();
    const std::int64_t d = c.model_dim, qw = c.heads * c.head_dim, kvw = c.kv_heads * c.head_dim;
    if (impl.fused_qkv) {
        matrix_params(out, detail::mul(d, qw + 2 * kvw), c.bias ? qw + 2 * kvw : 0);
    } else {
        for (const std::int64_t w : {qw, kvw, kvw}) matrix_params(out, detail::mul(d, w), c.bias ? w : 0);
    }
    matrix_params(out, detail::mul(qw, d), c.bias ? d : 0);
}
/// The tensors a layer registers.  A tied linear layer has none of its own for its weight (the caller maps it).
inline void layer_parameters(const AnyLayer& layer, const Implementation& impl, std::vector<LayerParam>& out) {
    out.clear();
    if (const auto* l = std::get_if<Linear>(&layer)) {
        const auto& c = l->config();
        if (!c.tied) out.push_back({detail::mul(c.in_features, c.out_features), true, true, true, 4});
        if (c.bias) out.push_back({c.out_features, true, false, true, 4});
    } else if (const auto* conv = std::get_if<Conv2D>(&layer)) {
        const std::int64_t bias = conv->config().bias ? conv->config().out_channels : 0;
        matrix_params(out, conv->params() - bias, bias);
    } else if (const auto* a = std::get_if<MultiHeadAttention>(&layer)) {
        attention_params(*a, impl, out);
    } else if (const auto* bn = std::get_if<BatchNorm2d>(&layer)) {
        const std::int64_t ch = bn->config().channels;
        if (bn->config().affine) out.insert(out.end(), {{ch, false, false, true, 4}, {ch, false, false, true, 4}});
        out.insert(out.end(), {{ch, false, false, false, 4}, {ch, false, false, false, 4}, {1, false, false, false, 8}});
    } else if (const auto* ln = std::get_if<LayerNorm>(&layer)) {
        if (ln->config().affine) out.insert(out.end(), {{ln->config().width, false, false, true, 4},
                                                        {ln->config().width, false, false, true, 4}});
    } else if (const auto* e = std::get_if<Embedding>(&layer)) {
        out.push_back({e->params(), false, false, true, 4});
    } else if (const std::int64_t p = params(layer); p > 0) {
        const bool matrix = std::visit([](const auto& l) { return l.forward(1).macs.value() > 0; }, layer);
        out.push_back({p, matrix, matrix, true, 4});
    }
}

/// Whether two convolutions share cuDNN's benchmark cache entry (same geometry and channels).
inline bool same_convolution(const Conv2D& a, const Conv2D& b) {
    const auto& x = a.config();
    const auto& y = b.config();
    return x.in_channels == y.in_channels && x.out_channels == y.out_channels && x.in_height == y.in_height &&
           x.in_width == y.in_width && x.kernel == y.kernel && x.stride == y.stride && x.padding == y.padding &&
           x.dilation == y.dilation && x.groups == y.groups;
}

}  // namespace step_detail

/// Records the tape of `model` under `settings` (see the file comment).  `flow` is the model's dataflow.
class StepRecorder {
public:
    StepRecorder(const Model& model, const Dataflow& flow, const StepSettings& settings)
        : model_(&model), flow_(&flow), walk_(tape_, settings) {}

    Tape record() {
        tape_.exact = walk_.settings().runtime == Runtime::ideal;
        const std::size_t n = model_->size();
        walk_.values.assign(n + 1, Value{});
        walk_.begin_nodes(n + 1);  // the last slot is the loss's
        walk_.record_into(tape_.setup);
        walk_.at(StepPhase::setup, no_node);
        setup();
        walk_.record_into(tape_.first_step);
        step(true);
        walk_.record_into(tape_.steady_step);
        for (auto& saved : tape_.saved) saved.clear();  // keep the steady step's
        step(false);
        return std::move(tape_);
    }

private:
    // --- setup ----------------------------------------------------------------------------------------------
    void setup() {
        register_parameters();
        inputs();
        const StepSettings& s = walk_.settings();
        if (s.runtime == Runtime::ideal) return;
        const int threads = s.blas_threads > 0 ? s.blas_threads : walk_.training() ? 2 : 1;
        for (int t = 0; t < threads; ++t) {
            persistent_.push_back(walk_.make(fixed_bytes(s.workspaces.cublas_bytes, 1), Category::workspaces));
            persistent_.push_back(walk_.make(fixed_bytes(s.workspaces.cublaslt_bytes, 1), Category::workspaces));
        }
    }
    /// Every layer's parameters and buffers, allocated in module order; gradients and state declared.
    void register_parameters() {
        std::vector<step_detail::LayerParam> layer;
        const auto& nodes = model_->nodes();
        walk_.node_params.assign(nodes.size(), {});
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            step_detail::layer_parameters(nodes[i].layer, walk_.impl(), layer);
            if (const auto* l = std::get_if<Linear>(&nodes[i].layer); l && l->config().tied) tie(i, *l);
            for (const auto& lp : layer) {
                Parameter p;
                p.numel = lp.numel;
                p.trainable = lp.trainable;
                p.width = walk_.engine() && lp.trainable ? Walk::width(walk_.compute()) : lp.width;
                const Category c = Category::weights;
                p.weight = walk_.make(fixed_bytes(p.numel, p.width), c);
                persistent_.push_back(p.weight);
                if (p.trainable && walk_.training()) {
                    p.grad = walk_.declare(fixed_bytes(p.numel, 4), Category::gradients);
                    const int states = walk_.settings().optimizer == Optimizer::sgd ? 1 : 2;
                    for (int k = 0; k < states; ++k)
                        p.state[static_cast<std::size_t>(k)] = walk_.declare(fixed_bytes(p.numel, 4), Category::optimizer_state);
                }
                walk_.node_params[i].push_back({static_cast<std::uint32_t>(walk_.params.size()), lp.cast, lp.cast_saved});
                walk_.params.push_back(p);
            }
        }
    }
    /// A tied linear layer (GPT-2's lm_head) reads the embedding table of the same shape.
    void tie(std::size_t node, const Linear& l) {
        const auto& c = l.config();
        for (std::size_t j = 0; j < node; ++j) {
            const auto* e = std::get_if<Embedding>(&model_->nodes()[j].layer);
            if (!e || e->config().vocabulary != c.out_features || e->config().width != c.in_features) continue;
            walk_.node_params[node].push_back({walk_.node_params[j].front().param, true, true});
            return;
        }
        walk_.node_params[node].push_back({static_cast<std::uint32_t>(walk_.params.size()), true, true});
        Parameter p;
        p.numel = detail::mul(c.in_features, c.out_features);
        p.weight = walk_.make(fixed_bytes(p.numel, 4), Category::weights);
        persistent_.push_back(p.weight);
        if (walk_.training()) {
            p.grad = walk_.declare(fixed_bytes(p.numel, 4), Category::gradients);
            for (std::size_t k = 0; k < 2; ++k) p.state[k] = walk_.declare(fixed_bytes(p.numel, 4), Category::optimizer_state);
        }
        walk_.params.push_back(p);
    }
    /// The batch on the device: images in FP32 or token ids in int64 (with an int64 attention mask where the
    /// implementation takes one), and in training one int64 label tensor per label.
    void inputs() {
        const Shape in = model_->input_shape();
        const bool tokens = !model_->nodes().empty() && std::holds_alternative<Embedding>(model_->nodes().front().layer);
        const Implementation& impl = walk_.impl();
        Value& v = walk_.values[0];
        v.elements = in.elements();
        v.dtype = DType::f32;
        v.tensor = walk_.make(per_sample_bytes(v.elements, tokens ? 8 : 4), Category::inputs);
        walk_.holds(v.tensor, 0);
        persistent_.push_back(v.tensor);
        if (tokens && impl.attention_mask)
            persistent_.push_back(walk_.make(per_sample_bytes(v.elements, 8), Category::inputs));
        if (!walk_.training()) return;
        for (int i = 0; i < impl.label_tensors; ++i)
            persistent_.push_back(walk_.make(per_sample_bytes(1, 8), Category::inputs));
    }

    // --- one step ---------------------------------------------------------------------------------------------
    void step(bool first) {
        first_ = first;
        const auto& nodes = model_->nodes();
        walk_.at(StepPhase::forward, no_node);
        if (walk_.training()) zero_grad();
        for (std::size_t v = 1; v <= nodes.size(); ++v) {
            walk_.values[v] = Value{};
            walk_.values[v].needs_grad = walk_.training();
            walk_.values[v].readers = static_cast<std::int32_t>(flow_->readers[v]);
        }
        walk_.values[0].readers = static_cast<std::int32_t>(flow_->readers[0]) + 1;  // never dropped
        if (!nodes.empty()) walk_.values[nodes.size()].readers += 1;                // the loss, or the caller
        if (first && walk_.eager()) python_holds();
        for (std::size_t v = 1; v < held_until_.size(); ++v)
            if (held_until_[v] != no_node) {
                walk_.values[v].readers += 1;
                walk_.values[v].held = 1;
            }
        seen_convs_.clear();
        for (std::size_t i = 0; i < nodes.size(); ++i) forward(static_cast<std::uint32_t>(i));
        walk_.release(walk_.values[0].half);  // the input batch stays; a copy made for its readers does not
        walk_.values[0].half = no_tensor;
        if (!nodes.empty()) loss_forward();
        walk_.release_forward_holds();  // the model's output (and its key/value cache) dropped after the loss
        if (walk_.amp() && !walk_.engine()) walk_.clear_autocast_cache();
        if (walk_.training()) {
            if (!nodes.empty()) loss_backward();
            for (std::size_t i = nodes.size(); i-- > 0;) backward(static_cast<std::uint32_t>(i));
            optimizer();
        }
        if (!walk_.balanced(persistent_with_grads()))
            detail::fail("internal error: the memory walk of '", model_->id(), "' leaves tensors allocated");
    }
    void zero_grad() {
        for (Parameter& p : walk_.params) {
            if (!p.grad_live) continue;
            walk_.release(p.grad);
            p.grad_live = false;
        }
    }
    [[nodiscard]] std::vector<TensorId> persistent_with_grads() const {
        std::vector<TensorId> all = persistent_;
        for (const Parameter& p : walk_.params) {
            if (p.grad_live) all.push_back(p.grad);
            for (const TensorId s : p.state)
                if (s != no_tensor && state_live_) all.push_back(s);
        }
        return all;
    }

    [[nodiscard]] rules::At at(std::uint32_t i) const {
        return {i, &model_->nodes()[i], &flow_->routes[i], i + 1};
    }
    void forward(std::uint32_t i) {
        walk_.at(StepPhase::forward, i);
        const rules::At a = at(i);
        std::visit([&](const auto& layer) { rules::forward(walk_, a, layer); }, a.n->layer);
        for (std::uint8_t j = 0; j < a.route->count; ++j) walk_.done_reading(a.route->inputs[j]);
        if (i < released_after_.size())
            for (const std::uint32_t v : released_after_[i]) walk_.done_reading(v);
        Value& out = walk_.values[a.out];
        if (out.readers == 0) walk_.drop(out);
        if (searches(a.n->layer)) walk_.empty_cache();
    }
    void backward(std::uint32_t i) {
        walk_.at(StepPhase::backward, i);
        const rules::At a = at(i);
        Value& out = walk_.values[a.out];
        if (out.grad != no_tensor) {
            std::visit([&](const auto& layer) { rules::backward(walk_, a, layer); }, a.n->layer);
            walk_.release(out.grad);
            out.grad = no_tensor;
        }
        walk_.release_saved(i);
        if (first_ && std::holds_alternative<Conv2D>(a.n->layer) && benchmarked(i)) walk_.empty_cache();
    }
    /// Python keeps a module call's arguments until the call returns (the caller's variable still refers to them:
    /// `x = self.layer1(x)` rebinds `x` only after layer1 has run all its blocks; Hugging Face's BertModel holds
    /// `embedding_output` through the encoder).  Modules are the dotted prefixes of the node names (`layer1`,
    /// `layer1.0`, `encoder.layer.3.output`); a value read inside a module that does not contain its producer stays
    /// until that module's last node, the outermost such module deciding.  `held_until_[v]` is that node, or
    /// no_node when the value goes after its last reader as before.  Eager only: a compiled graph frees by liveness.
    void python_holds() {
        const auto& nodes = model_->nodes();
        held_until_.assign(nodes.size() + 1, no_node);
        std::vector<std::string_view> names(nodes.size());
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            names[i] = nodes[i].name.view();
            if (const auto colon = names[i].find(':'); colon != std::string_view::npos) names[i] = names[i].substr(0, colon);
            if (names[i].find('/') != std::string_view::npos) return;  // not module paths (an ONNX graph's names)
        }
        const auto inside = [&](std::size_t node, std::string_view scope) {
            return names[node].size() > scope.size() && names[node].starts_with(scope) && names[node][scope.size()] == '.';
        };
        std::unordered_map<std::string_view, std::size_t> last_of;  // a module's last node
        for (std::size_t i = 0; i < nodes.size(); ++i)
            for (std::size_t dot = names[i].find('.'); dot != std::string_view::npos; dot = names[i].find('.', dot + 1))
                last_of[names[i].substr(0, dot)] = i;
        for (std::size_t r = 0; r < nodes.size(); ++r) {
            const Route& route = flow_->routes[r];
            for (std::uint8_t j = 0; j < route.count; ++j) {
                const std::uint32_t v = route.inputs[j];
                if (v == 0) continue;  // the batch stays anyway
                const std::size_t producer = v - 1;
                // the outermost module of the reader that does not hold the producer
                for (std::size_t dot = names[r].find('.'); dot != std::string_view::npos; dot = names[r].find('.', dot + 1)) {
                    const std::string_view scope = names[r].substr(0, dot);
                    if (inside(producer, scope)) continue;
                    const std::size_t last = last_of[scope];
                    if (last > r && (held_until_[v] == no_node || last > held_until_[v]))
                        held_until_[v] = static_cast<std::uint32_t>(last);
                    break;
                }
            }
        }
        released_after_.assign(nodes.size(), {});
        for (std::size_t v = 1; v < held_until_.size(); ++v)
            if (held_until_[v] != no_node) released_after_[held_until_[v]].push_back(static_cast<std::uint32_t>(v));
    }
    /// Whether the first step runs cuDNN's algorithm search for this layer (the first of its geometry).
    bool searches(const AnyLayer& layer) {
        const auto* conv = std::get_if<Conv2D>(&layer);
        if (!conv || !first_ || !walk_.settings().cudnn_benchmark || tape_.exact) return false;
        for (const Conv2D* seen : seen_convs_)
            if (step_detail::same_convolution(*seen, *conv)) return false;
        seen_convs_.push_back(conv);
        searched_.push_back(walk_.node());
        return true;
    }
    [[nodiscard]] bool benchmarked(std::uint32_t node) const {
        for (const std::uint32_t n : searched_)
            if (n == node) return true;
        return false;
    }

    // --- the loss -------------------------------------------------------------------------------------------
    /// Cross-entropy over the last output, in FP32: eager casts FP16/BF16 logits up (a temporary) and keeps the
    /// log-softmax; a fused runtime keeps the logits and the log-sum-exp per row and recomputes the softmax.
    void loss_forward() {
        const std::uint32_t last = static_cast<std::uint32_t>(model_->size());
        if (!walk_.training()) {  // inference: the caller drops the output
            walk_.done_reading(last);
            return;
        }
        walk_.at(StepPhase::loss, last);
        Value& logits = walk_.values[last];
        if (walk_.training()) {
            const AffineBytes wide = per_sample_bytes(logits.elements, 4);
            if (walk_.eager()) {
                const TensorId up = logits.dtype == DType::f32 ? no_tensor : walk_.make(wide);
                const TensorId log_softmax = walk_.make(wide);
                walk_.save(log_softmax);
                walk_.release(log_softmax);
                walk_.release(up);
            } else {
                walk_.save(logits.tensor);
                const TensorId lse = walk_.make(per_sample_bytes(rows_of_last(), 4));
                walk_.save(lse);
                walk_.release(lse);
            }
        }
        walk_.done_reading(last);
    }
    void loss_backward() {
        const std::uint32_t last = static_cast<std::uint32_t>(model_->size());
        walk_.at(StepPhase::backward, last);
        Value& logits = walk_.values[last];
        const AffineBytes wide = per_sample_bytes(logits.elements, 4);
        TensorId g = no_tensor;
        if (walk_.eager()) {
            const TensorId nll = walk_.make(wide);  // nll_loss_backward: zeros, then the scatter
            g = walk_.make(wide);                   // log_softmax_backward_data
            walk_.release(nll);
            walk_.release_saved(last);
            if (logits.dtype != DType::f32) {
                const TensorId narrow = walk_.make(walk_.bytes_of(logits));
                walk_.release(g);
                g = narrow;
            }
        } else {
            g = walk_.make(walk_.bytes_of(logits));
            walk_.release_saved(last);
        }
        walk_.deliver(last, g);
    }
    [[nodiscard]] std::int64_t rows_of_last() const {
        const Node& n = model_->nodes().back();
        const Shape s = output_shape(n.layer);
        const std::int64_t last_axis = s.rank() > 0 ? s[s.rank() - 1] : 1;
        return detail::mul(s.elements() / last_axis, n.repeat);
    }

    // --- the optimizer ----------------------------------------------------------------------------------------
    void optimizer() {
        walk_.at(StepPhase::optimizer, no_node);
        const bool adam = walk_.settings().optimizer == Optimizer::adam;
        if (first_) {
            for (Parameter& p : walk_.params) {
                if (!p.trainable) continue;
                walk_.allocate(p.state[0]);
                if (adam) walk_.allocate(p.state[1]);
            }
            state_live_ = true;
        }
        if (!adam) return;
        std::vector<TensorId> sqrt;  // torch._foreach_sqrt(exp_avg_sqs), dropped when _multi_tensor_adam returns
        for (const Parameter& p : walk_.params)
            if (p.trainable) sqrt.push_back(walk_.make(fixed_bytes(p.numel, 4)));
        for (const TensorId t : sqrt) walk_.release(t);
    }

    const Model* model_;
    const Dataflow* flow_;
    Tape tape_;
    Walk walk_;
    std::vector<TensorId> persistent_;
    std::vector<const Conv2D*> seen_convs_;
    std::vector<std::uint32_t> held_until_;  ///< per value: the node after which Python lets it go (python_holds)
    std::vector<std::vector<std::uint32_t>> released_after_;  ///< per node: the values Python lets go after it
    std::vector<std::uint32_t> searched_;
    bool first_ = true;
    bool state_live_ = false;
};

/// The tape of `model` under `settings`.
inline Tape record_step(const Model& model, const StepSettings& settings) {
    const Dataflow flow = dataflow(model, settings.implementation);
    return StepRecorder(model, flow, settings).record();
}

}  // namespace roofplan::memory
