// roofplan/memory/rules.hpp — what each layer allocates and keeps, forward and backward, as PyTorch runs it.
//
// One `forward` and one `backward` per layer type, on the walk's bookkeeping (memory/walk.hpp).  The eager rules
// follow autograd's formulas (tools/autograd/derivatives.yaml: which inputs or outputs each backward needs) and
// autocast's policy (aten/src/ATen/autocast_mode.cpp); they make the decisions runtime/eager.hpp makes for the
// kernels (fused SDPA attention, ReLU in place, one-byte dropout masks, autocast casts, layer norm in FP32, the
// loss in FP32).  In short, eager training keeps:
//   * convolution, linear: the input as the op read it (autocast's FP16/BF16 copy of an FP32 input, one copy per
//     reader: only weights are cached) and the weight's autocast copy (convolution_backward, addmm/mm);
//   * batch norm: the input and the saved mean and inverse std (FP32, per channel);
//   * ReLU (in place): its output, which is the tensor the next layer keeps too; GELU and SiLU: their input;
//     tanh and sigmoid: their output;
//   * dropout: the mask (bool, one byte per element; native_dropout);
//   * max pooling: the input and int64 indices; average pooling: the input;
//   * layer norm: its FP32 input (a cast copy under autocast) and the mean and rstd per row;
//   * fused attention (scaled_dot_product_attention: flash, memory-efficient, cuDNN): Q, K, V, the output and
//     the FP32 log-sum-exp per row and head; unfused: the FP32 softmax, the dropout mask and the dropped
//     probabilities;
//   * embedding: the indices (the input batch, already on the device).
// The fused runtimes (compiled, ideal) keep what eager keeps, less what fusion removes.  AOTAutograd's min-cut
// partitioner (torch/_functorch/partitioners.py, should_ban_recomputation) recomputes pointwise ops in the backward
// only when their outputs are not needed there by a compute-intensive op (a matmul's or convolution's weight
// gradient needs its input, so that input is kept) and never recomputes random ops (dropout keeps its mask); so
// the tensors kept are eager's, except that a cast is materialized once per tensor (Q, K and V share their input's
// copy), layer norm keeps its input before the FP32 cast, a Python-written activation chain is one fused kernel,
// and pointwise chains write no intermediates.  Inference saves nothing.
#pragma once

#include <roofplan/memory/walk.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <type_traits>
#include <variant>
#include <vector>

namespace roofplan::memory::rules {

/// The node a rule runs for: its index, its values in and out.
struct At {
    std::uint32_t node = 0;
    const Node* n = nullptr;
    const Route* route = nullptr;
    std::uint32_t out = 0;  ///< the value it produces
    /// The value of its input `i` (the last one when it has fewer).
    [[nodiscard]] std::uint32_t in(std::size_t i = 0) const {
        return route->inputs[std::min<std::size_t>(i, route->count - 1u)];
    }
    /// Per-instance elements times the node's repeat: elements per sample.
    [[nodiscard]] std::int64_t per_sample(std::int64_t per_instance) const {
        return detail::mul(per_instance, n->repeat, "tensor elements");
    }
};

using Temporaries = std::vector<TensorId>;

// --- shared pieces ---------------------------------------------------------------------------------------------

/// The tensor a matrix op reads for value `v` (one reference for the caller): eager autocast casts an FP32
/// input afresh for every op; a fused runtime materializes one FP16/BF16 copy of the value for all its readers.
inline TensorId matrix_input(Walk& w, std::uint32_t v) {
    Value& x = w.values[v];
    if (!w.amp() || x.dtype != DType::f32 || w.engine()) {
        w.retain(x.tensor);
        return x.tensor;
    }
    if (w.eager()) return w.make(per_sample_bytes(x.elements, 2));
    if (x.half == no_tensor) x.half = w.make(per_sample_bytes(x.elements, 2));
    w.retain(x.half);
    return x.half;
}
/// What a matrix op keeps of its input: what it read (its weight gradient needs it).
inline void save_matrix_input(Walk& w, TensorId read) { w.save(read); }
/// What a pointwise or normalization op keeps of its input.
inline void save_input(Walk& w, std::uint32_t v) { w.save(w.values[v].tensor); }

/// A matrix layer's weights under autocast: a copy made on first use and held by autocast's cache until the
/// forward ends, the weight's copy (not the bias's) kept by the op for its backward.  The fused runtimes trace the
/// same casts (the backward's matmuls need the copies, so they are kept too); an inference engine stores its
/// weights in the compute dtype.
inline void weights_forward(Walk& w, const At& at, std::size_t first = 0, std::size_t count = SIZE_MAX) {
    if (!w.amp() || w.engine()) return;
    const auto& uses = w.node_params[at.node];
    for (std::size_t i = first; i < uses.size() && i - first < count; ++i) {
        const ParamUse& u = uses[i];
        if (!u.cast) continue;
        const TensorId copy = w.autocast_copy(u.param);
        if (u.cast_saved) w.save(copy);
    }
}
/// Backward: the gradients of a layer's parameters, in two parts as autograd runs them.  A matrix op computes a
/// cast weight's gradient in the compute dtype (`weight_grads_low`, returned); the op's node then releases what
/// it saved, and autograd's ToCopyBackward casts each to the FP32 .grad (`weight_grads_cast`).  Parameters the op
/// reads in FP32 get their .grad directly.
inline Temporaries weight_grads_low(Walk& w, const At& at, std::size_t first = 0, std::size_t count = SIZE_MAX) {
    Temporaries halves;
    const auto& uses = w.node_params[at.node];
    for (std::size_t i = first; i < uses.size() && i - first < count; ++i) {
        const ParamUse& u = uses[i];
        if (u.cast && w.amp() && !w.engine()) halves.push_back(w.make(fixed_bytes(w.params[u.param].numel, 2)));
        else w.param_grad(u.param);
    }
    return halves;
}
inline void weight_grads_cast(Walk& w, const At& at, const Temporaries& halves, std::size_t first = 0,
                              std::size_t count = SIZE_MAX) {
    const auto& uses = w.node_params[at.node];
    std::size_t h = 0;
    for (std::size_t i = first; i < uses.size() && i - first < count; ++i) {
        const ParamUse& u = uses[i];
        if (!(u.cast && w.amp() && !w.engine())) continue;
        w.param_grad(u.param);
        w.release(halves[h++]);
    }
}
inline void weight_grads(Walk& w, const At& at, std::size_t first = 0, std::size_t count = SIZE_MAX) {
    weight_grads_cast(w, at, weight_grads_low(w, at, first, count), first, count);
}

/// Whether this node is the last reader of value `v` (its output may take the input's storage).
inline bool last_reader(const Walk& w, std::uint32_t v) { return w.values[v].readers - w.values[v].held == 1; }

/// A new output, or (fused runtimes, the input's last reader, nothing keeping it) the input's storage: a fused
/// pointwise chain writes no intermediate.
inline void pointwise_output(Walk& w, const At& at, std::uint32_t v, DType dtype) {
    if (w.fused() && last_reader(w, v) && !w.is_saved(w.values[v].tensor) && dtype == w.values[v].dtype)
        w.alias(at.out, v);
    else
        w.produce(at.out, w.values[v].elements, dtype);
}

/// The input gradient of a single-input layer (when one is wanted), in the input's dtype, delivered.
inline void input_grad(Walk& w, const At& at, std::uint32_t v, DType dtype) {
    const Value& x = w.values[v];
    if (!x.needs_grad || !at.n->needs_input_gradient) return;
    w.deliver(v, w.make(per_sample_bytes(x.elements, Walk::width(dtype))));
}
inline void input_grad(Walk& w, const At& at) { input_grad(w, at, at.in(), w.values[at.in()].dtype); }

/// A matrix layer's backward: the input gradient in the compute dtype and the weight gradients; the node's
/// saved tensors (its last group) released; then autograd's casts: the weights' FP32 gradients, and the input
/// gradient back to FP32 when the forward cast the input.
inline void matrix_backward(Walk& w, const At& at, std::uint32_t v, std::size_t first_param = 0,
                            std::size_t params = SIZE_MAX, AffineBytes workspace = {}) {
    const Value& x = w.values[v];
    const bool wanted = x.needs_grad && at.n->needs_input_gradient;
    TensorId gi = wanted ? w.make(per_sample_bytes(x.elements, Walk::width(w.compute()))) : no_tensor;
    const Temporaries halves = weight_grads_low(w, at, first_param, params);
    w.temporary(workspace);  // a library's workspace while the gradients are made
    w.release_last_group(at.node);
    weight_grads_cast(w, at, halves, first_param, params);
    if (gi != no_tensor && w.eager() && w.amp() && x.dtype == DType::f32) {
        const TensorId g32 = w.make(per_sample_bytes(x.elements, 4));
        w.release(gi);
        gi = g32;
    }
    w.deliver(v, gi);
}

/// A matrix layer's forward: its input as read and kept, its weights, its output in the compute dtype (and a
/// library's workspace for the call, once the output exists).
inline void matrix_forward(Walk& w, const At& at, std::int64_t out_per_instance, AffineBytes workspace = {}) {
    const TensorId x = matrix_input(w, at.in());
    save_matrix_input(w, x);
    weights_forward(w, at);
    w.produce(at.out, at.per_sample(out_per_instance), w.compute());
    w.temporary(workspace);
    w.release(x);
}

// --- matrix layers ------------------------------------------------------------------------------------------

inline void forward(Walk& w, const At& at, const Linear& l) {
    matrix_forward(w, at, detail::mul(l.config().rows, l.config().out_features));
}
inline void backward(Walk& w, const At& at, const Linear&) { matrix_backward(w, at, at.in()); }

/// The measured cuDNN workspace of this convolution (memory/conv_workspace.hpp), if the device's table has it.
inline const ConvWorkspace* measured_conv(const Walk& w, const At& at, const Conv2D& l) {
    const StepSettings& s = w.settings();
    if (s.workspaces.convolutions == nullptr || s.runtime == Runtime::ideal || at.n->repeat != 1) return nullptr;
    ConvMode mode = ConvMode::half;
    if (s.precision == Precision::fp32) mode = ConvMode::fp32;
    else if (s.precision == Precision::tf32) mode = ConvMode::tf32;
    else if (s.precision == Precision::int8) return nullptr;
    return s.workspaces.convolutions->find(ConvKey::of(l.config(), mode));
}
/// Convolutions: as a matrix layer, with cuDNN's workspace for the call: as measured for the convolutions the
/// device's table has; else TF32 on NCHW tensors converts layouts around cuDNN's NHWC kernels (runtime/eager.hpp),
/// temporaries of the input and output sizes, and other modes take none.
inline void forward(Walk& w, const At& at, const Conv2D& l) {
    const std::int64_t out = l.output_shape().elements();
    if (const ConvWorkspace* m = measured_conv(w, at, l)) return matrix_forward(w, at, out, measured_bytes(m->forward_curve()));
    if (w.eager() && w.settings().precision == Precision::tf32) {
        w.temporary(per_sample_bytes(w.values[at.in()].elements, 4));
        w.temporary(per_sample_bytes(at.per_sample(out), 4));
    }
    matrix_forward(w, at, out);
}
inline void backward(Walk& w, const At& at, const Conv2D& l) {
    if (const ConvWorkspace* m = measured_conv(w, at, l))
        return matrix_backward(w, at, at.in(), 0, SIZE_MAX, measured_bytes(m->backward_curve()));
    if (w.eager() && w.settings().precision == Precision::tf32)
        w.temporary(per_sample_bytes(at.per_sample(l.output_shape().elements()), 4));
    matrix_backward(w, at, at.in());
}

/// Layers without a rule of their own (transposed convolution, recurrent layers, additive attention,
/// activation×activation products): the input and the weights' copies kept, as a matrix layer, plus (recurrent
/// layers) cuDNN's reserve space — the gate activations and states of every step (approximate: one gates-wide
/// vector plus two states per step, direction and layer).
template <class L>
void forward(Walk& w, const At& at, const L& l) {
    std::int64_t reserve = 0;
    if constexpr (std::is_same_v<L, LSTM> || std::is_same_v<L, GRU>) {
        const auto& c = l.config();
        const std::int64_t gates = std::is_same_v<L, LSTM> ? 4 : 3;
        reserve = detail::mul(c.seq_len, c.hidden_size, (c.bidirectional ? 2 : 1) * c.num_layers * (gates + 2));
    }
    if (l.params() > 0 || l.forward(1).macs.value() > 0) {
        matrix_forward(w, at, l.output_shape().elements());
    } else {
        save_input(w, at.in());
        w.produce(at.out, at.per_sample(l.output_shape().elements()), w.values[at.in()].dtype);
    }
    if (reserve > 0 && w.training()) {
        const TensorId r = w.make(per_sample_bytes(at.per_sample(reserve), Walk::width(w.compute())));
        w.save(r);
        w.release(r);
    }
}
template <class L>
void backward(Walk& w, const At& at, const L&) {
    matrix_backward(w, at, at.in());
}

// --- normalization ----------------------------------------------------------------------------------------

/// Per-channel (batch norm) or per-row (layer norm) FP32 statistics, kept for the backward.
inline void save_statistics(Walk& w, AffineBytes each, int count) {
    for (int i = 0; i < count; ++i) {
        const TensorId s = w.make(each);
        w.save(s);
        w.release(s);
    }
}

/// Batch norm: training keeps the input and the FP32 mean and inverse std; an inference engine folds it into
/// the convolution.
inline void forward(Walk& w, const At& at, const BatchNorm2d& l) {
    const std::uint32_t v = at.in();
    if (w.engine()) {
        w.alias(at.out, v);
        return;
    }
    if (w.training()) {
        save_input(w, v);
        save_statistics(w, fixed_bytes(l.config().channels, 4), 2);
    }
    w.produce(at.out, w.values[v].elements, w.values[v].dtype);
}
inline void backward(Walk& w, const At& at, const BatchNorm2d&) {
    input_grad(w, at);
    weight_grads(w, at);
}

/// Layer norm: in FP32 under autocast (an FP16/BF16 input is cast, and the copy kept), the FP32 mean and rstd
/// per row kept; the output is FP32 under autocast.
inline void forward(Walk& w, const At& at, const LayerNorm& l) {
    const std::uint32_t v = at.in();
    const Value& x = w.values[v];
    const bool cast = w.eager() && w.amp() && x.dtype != DType::f32;
    const DType out = w.amp() && !w.engine() ? DType::f32 : x.dtype;
    const TensorId in = cast ? w.make(per_sample_bytes(x.elements, 4)) : no_tensor;
    if (cast) w.save(in);
    else if (w.training()) save_input(w, v);
    if (w.training()) save_statistics(w, per_sample_bytes(at.per_sample(l.config().rows), 4), 2);
    w.produce(at.out, w.values[v].elements, out);
    w.release(in);
}
inline void backward(Walk& w, const At& at, const LayerNorm&) {
    const Value& x = w.values[at.in()];
    const DType grad_dtype = w.values[at.out].dtype;
    if (x.needs_grad && at.n->needs_input_gradient) {
        TensorId g = w.make(per_sample_bytes(x.elements, Walk::width(grad_dtype)));
        weight_grads(w, at);
        w.release_last_group(at.node);
        if (grad_dtype != x.dtype && w.eager()) {
            const TensorId narrow = w.make(w.bytes_of(x));
            w.release(g);
            g = narrow;
        }
        w.deliver(at.in(), g);
        return;
    }
    weight_grads(w, at);
}

/// RMS norm as Hugging Face's Llama writes it (to FP32, pow, mean, rsqrt, multiply, back to the input dtype,
/// times the weight): keeps the FP32 input, the rsqrt per row and the normalized input in its dtype.
inline void forward(Walk& w, const At& at, const RMSNorm& l) {
    const std::uint32_t v = at.in();
    const Value& x = w.values[v];
    const AffineBytes wide = per_sample_bytes(x.elements, 4);
    if (w.fused()) {
        if (w.training()) {
            save_input(w, v);
            save_statistics(w, per_sample_bytes(at.per_sample(l.config().rows), 4), 1);
        }
        w.produce(at.out, x.elements, x.dtype);
        return;
    }
    const bool cast = x.dtype != DType::f32;
    const TensorId x32 = cast ? w.make(wide) : x.tensor;
    if (!cast) w.retain(x32);
    w.save(x32);
    w.temporary(wide);  // pow(2), reduced by mean
    save_statistics(w, per_sample_bytes(at.per_sample(l.config().rows), 4), 1);
    const TensorId normalized = w.make(wide);
    const TensorId narrow = w.make(w.bytes_of(x));
    w.release(normalized);
    w.save(narrow);
    w.produce(at.out, w.values[v].elements, w.values[v].dtype);
    w.release(narrow);
    w.release(x32);
}
inline void backward(Walk& w, const At& at, const RMSNorm&) {
    if (w.eager()) w.temporary(per_sample_bytes(w.values[at.in()].elements, 4));
    input_grad(w, at);
    weight_grads(w, at);
}

// --- pointwise ----------------------------------------------------------------------------------------------

/// Hugging Face's NewGELUActivation, 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·pow(x, 3)))), eagerly: `pow` runs in
/// FP32 under autocast (its input cast, and kept), the chain promotes to FP32; kept: the FP32 input of pow, tanh's
/// output, 1 + tanh and 0.5·x.  The output is FP32 under autocast.
inline void python_gelu_forward(Walk& w, const At& at) {
    const std::uint32_t v = at.in();
    const Value& x = w.values[v];
    const AffineBytes wide = per_sample_bytes(x.elements, 4);
    const TensorId half_x = w.make(w.bytes_of(x));  // 0.5 * x
    const TensorId x32 = x.dtype == DType::f32 ? x.tensor : w.make(wide);
    if (x.dtype == DType::f32) w.retain(x32);
    w.save(x32);
    TensorId t = w.make(wide);  // pow
    for (int i = 0; i < 3; ++i) {  // 0.044715·p, x + ·, √(2/π)·
        const TensorId next = w.make(wide);
        w.release(t);
        t = next;
    }
    const TensorId tanh = w.make(wide);
    w.release(t);
    w.save(tanh);
    const TensorId one_plus = w.make(wide);
    w.release(tanh);
    w.save(half_x);
    w.save(one_plus);
    w.produce(at.out, x.elements, DType::f32);
    w.release(one_plus);
    w.release(half_x);
    w.release(x32);
}
/// Its backward, node by node: mul (two gradients, one cast back), tanh, the scalar muls, pow (three FP32
/// temporaries), the casts back; the input's three gradient contributions summed.
inline void python_gelu_backward(Walk& w, const At& at) {
    const std::uint32_t v = at.in();
    const Value& x = w.values[v];
    const AffineBytes wide = per_sample_bytes(x.elements, 4), narrow = w.bytes_of(x);
    TensorId g_half_x = w.make(wide);
    if (x.dtype != DType::f32) {
        const TensorId n = w.make(narrow);
        w.release(g_half_x);
        g_half_x = n;
    }
    TensorId g = w.make(wide);  // d(1 + tanh)
    for (int i = 0; i < 2; ++i) {  // tanh backward, scalar mul
        const TensorId next = w.make(wide);
        w.release(g);
        g = next;
    }
    const TensorId g_x_direct = w.make(narrow);  // x + ·: cast to x's dtype
    const TensorId g_pow = w.make(wide);
    w.release(g);
    const TensorId square = w.make(wide), scaled = w.make(wide);  // pow backward: x², 3·x², grad·3·x²
    w.release(square);
    TensorId g_x32 = w.make(wide);
    w.release(scaled);
    w.release(g_pow);
    if (x.dtype != DType::f32) {
        const TensorId n = w.make(narrow);
        w.release(g_x32);
        g_x32 = n;
    }
    const TensorId g_x_pow = g_x32;
    w.release(g_half_x);
    w.deliver(v, g_x_direct);
    w.deliver(v, g_x_pow);
    w.deliver(v, w.make(narrow));  // 0.5·x backward
}

/// Activations keep what their backward reads: GELU and SiLU their input, ReLU, tanh and sigmoid their output.
/// ReLU runs in place (eager, torchvision); a fused runtime writes into a dead input.  Hugging Face's Python GELU
/// (GPT-2) is its own rule in eager, one fused kernel with an FP32 output under autocast otherwise.
inline void forward(Walk& w, const At& at, const Activation& l) {
    const std::uint32_t v = at.in();
    const ActivationKind kind = l.config().kind;
    const bool gelu = kind == ActivationKind::gelu || kind == ActivationKind::gelu_tanh;
    const bool python_gelu = gelu && w.impl().python_gelu_tanh;
    if (python_gelu && w.eager()) return python_gelu_forward(w, at);
    if (gelu || kind == ActivationKind::silu) w.save(w.values[v].tensor);
    const DType out = python_gelu && w.amp() && !w.engine() ? DType::f32 : w.values[v].dtype;
    if (w.eager() && kind == ActivationKind::relu && w.impl().inplace_relu && last_reader(w, v)) w.alias(at.out, v);
    else pointwise_output(w, at, v, out);
    if (kind == ActivationKind::relu || kind == ActivationKind::tanh || kind == ActivationKind::sigmoid)
        w.save(w.values[at.out].tensor);
}
inline void backward(Walk& w, const At& at, const Activation& l) {
    if (w.eager() && (l.config().kind == ActivationKind::gelu || l.config().kind == ActivationKind::gelu_tanh) &&
        w.impl().python_gelu_tanh)
        return python_gelu_backward(w, at);
    input_grad(w, at);
}

/// Dropout: training keeps a one-byte mask (native_dropout); inference and p = 0 launch nothing.
inline void forward(Walk& w, const At& at, const Dropout& l) {
    const std::uint32_t v = at.in();
    if (!w.training() || l.config().probability <= 0) {
        w.alias(at.out, v);
        return;
    }
    const TensorId mask = w.make(per_sample_bytes(w.values[v].elements, 1));
    w.save(mask);
    w.release(mask);
    pointwise_output(w, at, v, w.values[v].dtype);
}
inline void backward(Walk& w, const At& at, const Dropout& l) {
    if (!w.training() || l.config().probability <= 0) {
        w.retain(w.values[at.out].grad);
        w.deliver(at.in(), w.values[at.out].grad);
        return;
    }
    input_grad(w, at);
}

/// Softmax (a standalone layer): keeps its output.
inline void forward(Walk& w, const At& at, const Softmax&) {
    const std::uint32_t v = at.in();
    w.produce(at.out, w.values[v].elements, w.values[v].dtype);
    w.save(w.values[at.out].tensor);
}
inline void backward(Walk& w, const At& at, const Softmax&) { input_grad(w, at); }

/// The widest dtype among a join's inputs (PyTorch's promotion).
inline DType joined_dtype(const Walk& w, const At& at) {
    DType t = w.values[at.in(0)].dtype;
    for (std::uint8_t i = 1; i < at.route->count; ++i) t = promote(t, w.values[at.in(i)].dtype);
    return t;
}

/// Residual adds: the sum in the promoted dtype, nothing kept.  torchvision's blocks add in place into their
/// first operand; fused runtimes write into a dead operand.
inline void forward(Walk& w, const At& at, const Add&) {
    const std::uint32_t first = at.in(0);
    const DType out = joined_dtype(w, at);
    const Value& a = w.values[first];
    const bool in_place = (w.fused() || w.impl().inplace_residual_add) && last_reader(w, first) &&
                          a.dtype == out && !w.is_saved(a.tensor) && first != 0;
    if (in_place) {
        w.alias(at.out, first);
    } else {
        w.produce(at.out, a.elements, out);
    }
}
/// Backward: every operand gets the gradient (the same tensor), cast for an operand of a narrower dtype.
inline void backward(Walk& w, const At& at, const Add&) {
    const Value& y = w.values[at.out];
    for (std::uint8_t i = 0; i < at.route->count; ++i) {
        const Value& x = w.values[at.in(i)];
        if (x.dtype != y.dtype) {
            w.deliver(at.in(i), w.make(w.bytes_of(x)));
        } else {
            w.retain(y.grad);
            w.deliver(at.in(i), y.grad);
        }
    }
}

/// Elementwise products (gated MLPs): both inputs kept.
inline void forward(Walk& w, const At& at, const Multiply&) {
    save_input(w, at.in(0));
    save_input(w, at.in(1));
    w.produce(at.out, w.values[at.in(0)].elements, joined_dtype(w, at));
}
inline void backward(Walk& w, const At& at, const Multiply&) {
    input_grad(w, at, at.in(0), w.values[at.in(0)].dtype);
    input_grad(w, at, at.in(1), w.values[at.in(1)].dtype);
}

/// Concatenation: a new tensor; the backward hands each input a view of the gradient.
inline void forward(Walk& w, const At& at, const Concat& l) {
    w.produce(at.out, at.per_sample(l.output_shape().elements()), joined_dtype(w, at));
}
inline void backward(Walk& w, const At& at, const Concat&) {
    for (std::uint8_t i = 0; i < at.route->count; ++i) {
        w.retain(w.values[at.out].grad);
        w.deliver(at.in(i), w.values[at.out].grad);
    }
}

/// Flatten: a view, except of a channels-last feature map with more than one pixel under autocast (eager): a
/// copy (runtime/eager.hpp).
inline void forward(Walk& w, const At& at, const Flatten& l) {
    const Shape in = l.input_shape();
    if (w.eager() && w.amp() && in.rank() == 3 && in[1] * in[2] > 1)
        w.produce(at.out, w.values[at.in()].elements, w.values[at.in()].dtype);
    else
        w.alias(at.out, at.in());
}
inline void backward(Walk& w, const At& at, const Flatten&) {
    w.retain(w.values[at.out].grad);
    w.deliver(at.in(), w.values[at.out].grad);
}

// --- pooling ------------------------------------------------------------------------------------------------

/// Pooling: keeps the input; max pooling also writes int64 indices (kept in training; CUDA's max_pool2d always
/// runs max_pool2d_with_indices, so inference allocates them for the call).
inline void forward(Walk& w, const At& at, const Pool2D& l) {
    const std::uint32_t v = at.in();
    const std::int64_t out = at.per_sample(l.output_shape().elements());
    if (w.training()) save_input(w, v);
    TensorId indices = no_tensor;
    if (l.config().kind == PoolKind::max && !w.engine()) indices = w.make(per_sample_bytes(out, 8));
    w.save(indices);
    w.produce(at.out, out, w.values[v].dtype);
    w.release(indices);
}
inline void backward(Walk& w, const At& at, const Pool2D&) { input_grad(w, at); }
inline void forward(Walk& w, const At& at, const AdaptiveAvgPool2D& l) {
    const std::uint32_t v = at.in();
    if (w.training()) save_input(w, v);
    w.produce(at.out, at.per_sample(l.output_shape().elements()), w.values[v].dtype);
}
inline void backward(Walk& w, const At& at, const AdaptiveAvgPool2D&) { input_grad(w, at); }

// --- embeddings -----------------------------------------------------------------------------------------------

/// Embeddings gather FP32 rows (the engine's table is in the compute dtype) and keep the indices, which are the
/// input batch.  The backward writes the whole FP32 table gradient (embedding_dense_backward), sorting the
/// indices in int64 temporaries.
inline void forward(Walk& w, const At& at, const Embedding& l) {
    w.save(w.values[at.in()].tensor);
    const DType out = w.engine() ? w.compute() : DType::f32;
    w.produce(at.out, at.per_sample(detail::mul(l.config().rows, l.config().width)), out);
}
inline void backward(Walk& w, const At& at, const Embedding& l) {
    w.temporary(per_sample_bytes(at.per_sample(l.config().rows), 16));
    weight_grads(w, at);
}

// --- attention ------------------------------------------------------------------------------------------------

/// Elements per sample of one attention layer's tensors.
struct AttentionSizes {
    std::int64_t q = 0, k = 0, v = 0;  ///< the projections' outputs
    std::int64_t out = 0;              ///< the layer's output (q_len·d)
    std::int64_t rows = 0;             ///< query rows × heads (the log-sum-exp)
    std::int64_t scores = 0;           ///< heads·q_len·kv_len (the unfused probabilities)
};
inline AttentionSizes attention_sizes(const At& at, const MultiHeadAttention& l) {
    const auto& c = l.config();
    AttentionSizes z;
    z.q = at.per_sample(detail::mul(c.q_len, c.heads, c.head_dim));
    z.k = z.v = at.per_sample(detail::mul(c.kv_len, c.kv_heads, c.head_dim));
    z.out = at.per_sample(detail::mul(c.q_len, c.model_dim));
    z.rows = at.per_sample(detail::mul(c.q_len, c.heads));
    z.scores = at.per_sample(detail::mul(c.heads, c.q_len, c.kv_len));
    return z;
}
/// The projections Q, K, V (or one fused QKV projection): their inputs and weights kept, their outputs made.
inline std::array<TensorId, 3> attention_projections(Walk& w, const At& at, const AttentionSizes& z,
                                                     std::size_t params_per) {
    const bool fused_qkv = w.impl().fused_qkv;
    const std::array<std::int64_t, 3> widths{fused_qkv ? z.q + z.k + z.v : z.q, z.k, z.v};
    std::array<TensorId, 3> out{no_tensor, no_tensor, no_tensor};
    for (std::size_t p = 0; p < (fused_qkv ? 1u : 3u); ++p) {
        w.begin_group();
        const TensorId x = matrix_input(w, at.in());
        save_matrix_input(w, x);
        weights_forward(w, at, p * params_per, params_per);
        out[p] = w.make(per_sample_bytes(widths[p], Walk::width(w.compute())));
        w.release(x);
    }
    return out;
}
/// Rotary embeddings (Hugging Face's apply_rotary_pos_emb: q·cos + rotate_half(q)·sin): new Q and K, the
/// originals dropped; only cos and sin are kept.
inline void rotary(Walk& w, std::array<TensorId, 3>& qkv, const AttentionSizes& z) {
    const std::int64_t width = Walk::width(w.compute());
    for (std::size_t i = 0; i < 2; ++i) {
        const AffineBytes b = per_sample_bytes(i == 0 ? z.q : z.k, width);
        const TensorId a = w.make(b), r = w.make(b), rs = w.make(b);
        w.release(r);
        const TensorId rotated = w.make(b);
        w.release(a);
        w.release(rs);
        w.release(qkv[i]);
        qkv[i] = rotated;
    }
}
/// The attention core; returns its output (heads-major), one reference for the caller.  Fused kernels keep
/// Q, K, V, the output and the FP32 log-sum-exp; the unfused path keeps the FP32 softmax, the dropout mask and
/// the dropped probabilities (with Q, K, V for the two products).
inline TensorId attention_core(Walk& w, const AttentionSizes& z, const std::array<TensorId, 3>& qkv) {
    const std::int64_t width = Walk::width(w.compute());
    w.begin_group();
    for (const TensorId t : qkv) w.save(t);
    if (w.settings().attention == AttentionKernel::fused || w.fused()) {
        const TensorId o = w.make(per_sample_bytes(z.q, width));
        w.save(o);
        const TensorId lse = w.make(per_sample_bytes(z.rows, 4));
        w.save(lse);
        w.release(lse);
        return o;
    }
    const AffineBytes scores = per_sample_bytes(z.scores, width), wide = per_sample_bytes(z.scores, 4);
    const TensorId raw = w.make(scores), scaled = w.make(scores);
    w.release(raw);
    const TensorId soft = w.make(wide);
    w.save(soft);
    w.release(scaled);
    TensorId probs = soft;
    if (width != 4) {
        probs = w.make(scores);
        w.release(soft);
    }
    if (w.training()) {
        const TensorId mask = w.make(per_sample_bytes(z.scores, 1));
        w.save(mask);
        w.release(mask);
        const TensorId dropped = w.make(scores);
        w.release(probs);
        probs = dropped;
    }
    w.save(probs);
    const TensorId o = w.make(per_sample_bytes(z.q, width));
    w.release(probs);
    return o;
}

/// Multi-head attention as Hugging Face runs it through scaled_dot_product_attention: the projections, the
/// attention core, the output projection.  Fused kernels write their output in the query's layout
/// (aten/src/ATen/native/cudnn/MHA.cpp alloc_with_matching_layout; flash and memory-efficient attention take
/// (B, L, H, d) inputs), so Hugging Face's transpose(1, 2).contiguous() copies nothing and the output projection
/// keeps the core's output; the unfused product is (B, H, L, d) and is copied.
inline void forward(Walk& w, const At& at, const MultiHeadAttention& l) {
    const AttentionSizes z = attention_sizes(at, l);
    const std::size_t params_per = l.config().bias ? 2 : 1;
    std::array<TensorId, 3> qkv = attention_projections(w, at, z, params_per);
    if (l.config().rotary && !w.impl().fused_qkv) rotary(w, qkv, z);
    const bool fused_kernel = w.settings().attention == AttentionKernel::fused || w.fused();
    // Hugging Face's key/value cache (implementation.hpp): attention reads the cache's copies of K and V
    const bool cached = w.eager() && w.impl().kv_cache;
    std::array<TensorId, 3> read = qkv;
    for (std::size_t i = 1; cached && i < 3; ++i) {
        read[i] = w.make(per_sample_bytes(i == 1 ? z.k : z.v, Walk::width(w.compute())));
        w.hold_until_forward_end(read[i]);
    }
    TensorId o = attention_core(w, z, read);
    for (const TensorId t : qkv) w.release(t);
    for (std::size_t i = 1; cached && i < 3; ++i) w.release(read[i]);
    if (!fused_kernel) {
        const TensorId contiguous = w.make(per_sample_bytes(z.q, Walk::width(w.compute())));
        w.release(o);
        o = contiguous;
    }
    w.begin_group();
    w.save(o);
    const std::size_t projections = w.impl().fused_qkv ? 1 : 3;
    weights_forward(w, at, projections * params_per, params_per);
    w.produce(at.out, z.out, w.compute());
    w.release(o);
}

/// The core's backward: dQ, dK, dV (fused kernels accumulate dQ in an FP32 buffer; a fused QKV projection
/// concatenates the three), or the unfused chain back through dropout, the cast, softmax and the scale.
inline std::array<TensorId, 3> attention_core_backward(Walk& w, const AttentionSizes& z) {
    const std::int64_t width = Walk::width(w.compute());
    std::array<TensorId, 3> d{no_tensor, no_tensor, no_tensor};
    if (w.settings().attention == AttentionKernel::fused || w.fused()) {
        const TensorId accumulator = w.make(per_sample_bytes(z.q, 4));
        d = {w.make(per_sample_bytes(z.q, width)), w.make(per_sample_bytes(z.k, width)),
             w.make(per_sample_bytes(z.v, width))};
        w.release(accumulator);
    } else {
        const AffineBytes scores = per_sample_bytes(z.scores, width), wide = per_sample_bytes(z.scores, 4);
        TensorId g = w.make(scores);
        d[2] = w.make(per_sample_bytes(z.v, width));
        for (const AffineBytes b : {scores, wide, wide, scores, scores}) {  // dropout, cast, softmax, cast, scale
            const TensorId next = w.make(b);
            w.release(g);
            g = next;
        }
        d[0] = w.make(per_sample_bytes(z.q, width));
        d[1] = w.make(per_sample_bytes(z.k, width));
        w.release(g);
    }
    if (w.impl().fused_qkv) {
        const TensorId cat = w.make(per_sample_bytes(z.q + z.k + z.v, width));
        for (const TensorId t : d) w.release(t);
        d = {cat, no_tensor, no_tensor};
    }
    return d;
}
inline void backward(Walk& w, const At& at, const MultiHeadAttention& l) {
    const AttentionSizes z = attention_sizes(at, l);
    const std::size_t params_per = l.config().bias ? 2 : 1, projections = w.impl().fused_qkv ? 1 : 3;
    const TensorId g_context = w.make(per_sample_bytes(z.q, Walk::width(w.compute())));
    const Temporaries halves = weight_grads_low(w, at, projections * params_per, params_per);
    w.release_last_group(at.node);  // the output projection's
    weight_grads_cast(w, at, halves, projections * params_per, params_per);
    if (l.config().rotary) w.temporary(per_sample_bytes(z.q + z.k, Walk::width(w.compute())));
    const std::array<TensorId, 3> d = attention_core_backward(w, z);
    w.release_last_group(at.node);  // the core's
    w.release(g_context);
    for (std::size_t p = projections; p-- > 0;) {
        matrix_backward(w, at, at.in(), p * params_per, params_per);
        w.release(d[p]);
    }
}

}  // namespace roofplan::memory::rules
