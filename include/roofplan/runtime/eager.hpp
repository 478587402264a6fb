// roofplan/runtime/eager.hpp — what PyTorch 2.x eager (with autocast under amp-*; CNNs channels-last) launches
// for each layer pass.  The rules and their sources (PyTorch's sources and our profiles) are listed in
// docs/eager-lowering.md; in short:
//   * autocast casts every matrix op's FP32 weights to FP16/BF16 in the forward (one copy per weight per step:
//     the cast cache lives for one autocast region) and casts their gradients back in the backward; activations
//     that arrive in FP32 (after layer norm, embeddings, type-promoting adds) are cast by every matrix op that
//     reads them;
//   * convolutions add their bias in a separate kernel; linear layers fuse it into the GEMM epilogue; bias
//     gradients are separate reductions;
//   * batch norm in training makes two passes forward (statistics, then the transform) and two backward;
//   * activations, adds and dropout are one kernel each way; dropout writes a one-byte mask; max pooling writes
//     64-bit indices; a residual branch point accumulates its two gradients with one add;
//   * layer norm runs in FP32 under autocast and returns FP32; embeddings gather FP32 rows and zero-fill then
//     scatter-add their gradient table;
//   * attention runs as three projections, one fused scaled-dot-product kernel (flash / memory-efficient) and a
//     copy that makes the heads contiguous again, then the output projection;
//   * the loss is cross-entropy over the last layer's output in FP32 (log-softmax + NLL);
//   * SGD (momentum) and AdamW are PyTorch's foreach implementations: a few multi-tensor operations, each
//     launched once per 320 chunks of 65,536 elements or per tensor-list limit.
// Layer types without a rule (recurrent layers, additive attention, LRN, concat, transposed convolution,
// activation×activation matmul) are lowered one kernel per pass and reported as a fallback.
#pragma once

#include <roofplan/calibration/measured_conv.hpp>
#include <roofplan/calibration/measured_gemm.hpp>
#include <roofplan/runtime/lowering.hpp>

#include <array>
#include <cmath>
#include <span>
#include <string_view>
#include <cstdint>
#include <utility>
#include <variant>
#include <vector>

namespace roofplan::eager {

using runtime_detail::gemm_kernel;
using runtime_detail::matrix_kernel;
using runtime_detail::stream_kernel;
using runtime_detail::with_role;

/// The node being lowered and its sample count (the batch times the node's repeat).
struct At {
    const Node& node;
    double instances;
    [[nodiscard]] bool input_gradient() const { return node.needs_input_gradient; }
};

/// Host op of the first kernel of a module call, then of the ops it dispatches inside.
struct HostSequence {
    bool started = false;
    HostOp next(HostOp first = HostOp::module) {
        if (started) return HostOp::internal;
        started = true;
        return first;
    }
};

/// Autocast's casts of a layer's FP32 parameters to FP16/BF16 in the forward — one `_to_copy` per parameter
/// tensor, the weight and then the bias (the cast cache lives for one autocast region) — and the casts of their
/// gradients back to FP32 in the backward (one per tensor, by autograd's ToCopyBackward).
inline void weight_cast_forward(Emitter& e, HostSequence& host, double weight, double bias = 0) {
    if (!e.amp()) return;
    e.forward(with_role(stream_kernel(KernelClass::copy_cast, host.next(), "cast weight", 4 * weight, 2 * weight, 0, 3), KernelRole::weight_cast));
    if (bias > 0) e.forward(with_role(stream_kernel(KernelClass::copy_cast, host.next(), "cast bias", 4 * bias, 2 * bias, 0, 3), KernelRole::weight_cast));
}
inline void weight_cast_backward(Emitter& e, double weight, double bias = 0) {
    if (!e.amp()) return;
    e.backward(with_role(stream_kernel(KernelClass::widening_cast, HostOp::backward, "cast weight gradient", 2 * weight, 4 * weight, 0, 3), KernelRole::weight_gradient));
    if (bias > 0)
        e.backward(with_role(stream_kernel(KernelClass::widening_cast, HostOp::backward, "cast bias gradient", 2 * bias, 4 * bias, 0, 3), KernelRole::weight_gradient));
}
/// A bias gradient: the sum of the output gradient over its rows.  PyTorch's reduction spreads long columns over
/// several blocks, which first zero a semaphore buffer (aten/src/ATen/native/cuda/Reduce.cuh: ctas_per_output > 1
/// → cudaMemsetAsync).  Our profiles (validation/e2e/kernel_inventory.py) show the memset for BERT's and GPT-2's
/// sums over sequences (128–1,024 rows a sample, 768 or more outputs) and VGG's convolution biases (a feature
/// map a sample), none for one row a sample (classifier heads) or two outputs.  The rule looks at one sample's
/// rows so that a step's kernels do not depend on the batch (engine/program.hpp).
inline void bias_gradient(Emitter& e, double rows, double rows_per_sample, double outputs, double width) {
    HostOp host = HostOp::none;
    if (rows_per_sample >= 64 && outputs >= 32) {
        e.backward(with_role(stream_kernel(KernelClass::memset, host, "reduction semaphores", 0, 4 * outputs, 0, 4), KernelRole::weight_gradient));
    }
    e.backward(with_role(stream_kernel(KernelClass::reduction, host, "bias gradient", width * rows * outputs, width * outputs, 0, width), KernelRole::weight_gradient));
}
/// Whether a matrix op must cast its input (an FP32 activation under autocast).
inline bool casts_input(const Emitter& e) { return e.amp() && e.stream() == DType::f32; }
inline void input_cast_forward(Emitter& e, HostSequence& host, double elements) {
    if (casts_input(e)) e.forward(with_role(stream_kernel(KernelClass::copy_cast, host.next(), "cast input", 4 * elements, 2 * elements, 0, 3), KernelRole::activation_cast));
}
inline void input_cast_backward(Emitter& e, const At& at, double elements) {
    if (casts_input(e) && at.input_gradient())
        e.backward(with_role(stream_kernel(KernelClass::widening_cast, HostOp::backward, "cast input gradient", 2 * elements, 4 * elements, 0, 3), KernelRole::activation_cast));
}

/// Tags a GEMM (or a fill of its backward) with its linear layer's shape and rows, for a profile's measured GEMMs.
inline Kernel with_gemm_shape(Kernel k, const GemmGeometry& g, double rows) {
    k.gemm_shape = g.key();
    k.rows = rows;
    return k;
}

/// One pass of a linear layer as cuBLAS runs it (forward with the bias in the epilogue, backward-data, or
/// backward-weight, which writes the gradient in the compute dtype), tagged with the layer's shape and rows.
/// Calibration builds its samples' kernels with this function too, so that a measured GEMM and a predicted one are
/// the same kernel.
inline Kernel linear_pass_kernel(const Linear& l, std::int64_t instances, Pass pass, double width, HostOp host) {
    const auto& c = l.config();
    const GemmGeometry g{c.in_features, c.out_features, c.bias};
    const double rows = static_cast<double>(instances) * static_cast<double>(c.rows);
    Kernel k;
    switch (pass) {
        case Pass::forward: k = matrix_kernel(KernelClass::gemm, host, "linear", l.forward(instances), width, width); break;
        case Pass::backward_data:
            k = matrix_kernel(KernelClass::gemm, host, "linear dX", l.backward_data(instances), width, width);
            break;
        case Pass::backward_weight:
            k = with_role(matrix_kernel(KernelClass::gemm, host, "linear dW", l.backward_weight(instances), width, width),
                          KernelRole::weight_gradient);
            k.bytes_written = width * static_cast<double>(c.in_features * c.out_features + (c.bias ? c.out_features : 0));
            break;
    }
    k.part = pass == Pass::forward ? StepPart::forward : StepPart::backward;  // as the Emitter files it
    return with_gemm_shape(k, g, rows);
}

/// Linear layers: autocast casts, one GEMM with the bias in its epilogue; backward dX, dW, the bias reduction.
inline void rule(Emitter& e, const At& at, const Linear& l) {
    const auto& c = l.config();
    const double width = bytes_of(e.compute()), w = static_cast<double>(c.in_features) * static_cast<double>(c.out_features);
    const double bias = c.bias ? static_cast<double>(c.out_features) : 0;
    const double rows = at.instances * static_cast<double>(c.rows);
    const auto inst = static_cast<std::int64_t>(at.instances);
    const GemmGeometry shape{c.in_features, c.out_features, c.bias};
    HostSequence host;
    input_cast_forward(e, host, rows * static_cast<double>(c.in_features));
    weight_cast_forward(e, host, w, bias);
    e.forward(linear_pass_kernel(l, inst, Pass::forward, width, host.next()));
    if (at.input_gradient()) e.backward(linear_pass_kernel(l, inst, Pass::backward_data, width, HostOp::backward));
    e.backward(linear_pass_kernel(l, inst, Pass::backward_weight, width, at.input_gradient() ? HostOp::none : HostOp::backward));
    // cuBLASLt's split-K / stream-K kernels clear their workspaces first (cudaMemsetAsync); a measured GEMM counts
    // and times them with its pass.
    for (const double cleared : {static_cast<double>(c.out_features), static_cast<double>(c.in_features)})
        e.backward(with_gemm_shape(stream_kernel(KernelClass::memset, HostOp::none, "GEMM workspace", 0, 4 * cleared, 0, 4), shape, rows));
    if (c.bias) bias_gradient(e, rows, static_cast<double>(c.rows), bias, width);
    weight_cast_backward(e, w, bias);
    if (c.tied) e.backward(with_role(stream_kernel(KernelClass::elementwise, HostOp::backward, "accumulate tied gradient", 8 * w, 4 * w, w, 4), KernelRole::weight_gradient));
    input_cast_backward(e, at, rows * static_cast<double>(c.in_features));
    e.set_stream(e.compute());
}

/// The layout eager PyTorch hands cuDNN: channels-last under autocast (how the suite's CNNs run), NCHW otherwise.
constexpr ConvLayout eager_conv_layout(Precision p) {
    return p == Precision::amp_bf16 || p == Precision::amp_fp16 ? ConvLayout::nhwc : ConvLayout::nchw;
}

/// One pass of a convolution as cuDNN runs it: the implicit GEMM's multiply-adds and the tensors it reads and
/// writes (`width`-byte elements), keyed by its geometry and layout for a profile's measured convolutions.
/// Calibration builds its samples' kernels with this function too, so that a measured shape and a predicted one
/// are the same kernel.
inline Kernel conv_pass_kernel(const Conv2D& l, std::int64_t instances, Pass pass, double width, ConvLayout layout,
                               HostOp host) {
    Kernel k;
    if (pass == Pass::forward) {
        PassCost forward = l.forward(instances);
        forward.vector_flops = flop_count{};  // the bias is its own kernel
        k = matrix_kernel(KernelClass::conv, host, "conv forward", forward, width, width);
    } else if (pass == Pass::backward_data) {
        k = matrix_kernel(KernelClass::conv, host, "conv backward-data", l.backward_data(instances), width, width);
    } else {
        k = with_role(matrix_kernel(KernelClass::conv, host, "conv backward-filter", l.backward_weight(instances),
                                    width, width), KernelRole::weight_gradient);
        k.bytes_written = width * static_cast<double>(l.params());
    }
    k.part = pass == Pass::forward ? StepPart::forward : StepPart::backward;  // as the Emitter files it
    k.conv_shape = ConvGeometry::of(l.config(), layout).key();
    k.images = static_cast<double>(instances);
    return k;
}

/// The layout conversions cuDNN runs around one pass of a TF32 convolution on NCHW tensors (bytes of each tensor
/// converted; a conversion reads and writes them): forward the input and the filter in, the output back;
/// backward-data the output gradient and the filter in, the input gradient back; backward-filter the output
/// gradient and the input in, the filter gradient back.
struct ConvConversions {
    std::array<double, 2> in;
    double out;
};
inline ConvConversions conv_conversion_bytes(const Conv2D& l, double instances, Pass pass, double width) {
    const double input = width * instances * static_cast<double>(l.input_shape().elements());
    const double output = width * instances * static_cast<double>(l.output_shape().elements());
    const double filter = width * static_cast<double>(l.params() - (l.config().bias ? l.config().out_channels : 0));
    if (pass == Pass::forward) return {{input, filter}, output};
    if (pass == Pass::backward_data) return {{output, filter}, input};
    return {{output, input}, filter};
}

/// A layout conversion of a convolution's pass, keyed like the pass so that a profile's measured conversions time it.
inline Kernel conv_conversion(HostOp host, std::string_view what, double bytes, std::uint64_t shape, double images,
                              double width) {
    Kernel k = stream_kernel(KernelClass::layout_copy, host, what, bytes, bytes, 0, width);
    k.conv_shape = shape;
    k.images = images;
    return k;
}

/// Convolutions (cuDNN): casts, the convolution, a separate bias add; backward data, filter, bias reduction.
inline void rule(Emitter& e, const At& at, const Conv2D& l) {
    const auto inst = static_cast<std::int64_t>(at.instances);
    const double width = bytes_of(e.compute()), weights = static_cast<double>(l.params());
    const double outputs = at.instances * static_cast<double>(l.output_shape().elements());
    const double channels = static_cast<double>(l.output_shape()[0]);
    const bool bias = l.config().bias;
    const double bias_elements = bias ? channels : 0;
    HostSequence host;
    input_cast_forward(e, host, at.instances * static_cast<double>(l.input_shape().elements()));
    weight_cast_forward(e, host, weights - bias_elements, bias_elements);
    const ConvLayout layout = eager_conv_layout(e.step().precision);
    // TF32 on NCHW tensors: cuDNN runs NHWC tensor-core kernels and converts the layouts around each pass: forward
    // the input and the filter in, the output back; backward-data the output gradient and the filter in, the input
    // gradient back; backward-filter the output gradient and the input in, the filter gradient back (AlexNet's five
    // convolutions: 42 conversions a step, as this rule gives; docs/eager-lowering.md).  A 1×1 convolution is a
    // GEMM on NCHW tensors as they are: one conversion a step (ResNet-50: 204 measured, 186 by this rule).
    const bool convert = e.step().precision == Precision::tf32;
    const bool pointwise = l.config().kernel.h == 1 && l.config().kernel.w == 1;
    const bool convert_all = convert && !pointwise;
    const std::uint64_t shape = ConvGeometry::of(l.config(), layout).key();
    const auto converted = [&](Pass pass) { return conv_conversion_bytes(l, at.instances, pass, width); };
    const auto conversion = [&](HostOp h, std::string_view what, double bytes) {
        return conv_conversion(h, what, bytes, shape, at.instances, width);
    };
    if (convert_all) {
        e.forward(conversion(host.next(), "nchw to nhwc", converted(Pass::forward).in[0]));
        e.forward(conversion(HostOp::none, "filter to nhwc", converted(Pass::forward).in[1]));
    }
    e.forward(conv_pass_kernel(l, inst, Pass::forward, width, layout, host.next()));
    if (convert_all) e.forward(conversion(HostOp::none, "nhwc to nchw", converted(Pass::forward).out));
    if (bias) e.forward(stream_kernel(KernelClass::elementwise, HostOp::internal, "conv bias add", width * outputs, width * outputs, outputs, width));
    HostOp next_backward = HostOp::backward;  // the first kernel of the node's backward pays the autograd node
    const auto backward_host = [&] { return std::exchange(next_backward, HostOp::none); };
    if (convert && pointwise)  // not one of a pass's measured conversions: the class's rate times it
        e.backward(stream_kernel(KernelClass::layout_copy, backward_host(), "nchw to nhwc", width * outputs, width * outputs, 0, width));
    if (at.input_gradient()) {
        if (convert_all) {
            e.backward(conversion(backward_host(), "nchw to nhwc", converted(Pass::backward_data).in[0]));
            e.backward(conversion(HostOp::none, "filter to nhwc", converted(Pass::backward_data).in[1]));
        }
        e.backward(conv_pass_kernel(l, inst, Pass::backward_data, width, layout, backward_host()));
        if (convert_all) e.backward(conversion(HostOp::none, "nhwc to nchw", converted(Pass::backward_data).out));
    }
    if (convert_all) {
        e.backward(with_role(conversion(backward_host(), "nchw to nhwc", converted(Pass::backward_weight).in[0]), KernelRole::weight_gradient));
        e.backward(with_role(conversion(HostOp::none, "nchw to nhwc", converted(Pass::backward_weight).in[1]), KernelRole::weight_gradient));
    }
    e.backward(conv_pass_kernel(l, inst, Pass::backward_weight, width, layout, backward_host()));
    if (convert_all)
        e.backward(with_role(conversion(HostOp::none, "filter to nchw", converted(Pass::backward_weight).out), KernelRole::weight_gradient));
    // cuDNN's filter gradients split the reduction over the batch: a zeroed FP32 workspace and a reduction.
    // A profile that measured the filter gradient's pass counts and times these with it (they are among the kernels
    // cuDNN launched for it): keyed like the pass, they are then not launched again (Roofline: `launches` 0).
    const auto of_pass = [&](Kernel k) {
        k.conv_shape = shape;
        k.images = at.instances;
        return with_role(k, KernelRole::weight_gradient);
    };
    e.backward(of_pass(stream_kernel(KernelClass::memset, HostOp::none, "split-K workspace", 0, 4 * weights, 0, 4)));
    e.backward(of_pass(stream_kernel(KernelClass::reduction, HostOp::none, "split-K reduction", 8 * weights,
                                     width * weights, weights, (8 + width) / 3)));
    if (bias) bias_gradient(e, outputs / channels, outputs / channels / at.instances, channels, width);
    weight_cast_backward(e, weights - bias_elements, bias_elements);
    input_cast_backward(e, at, at.instances * static_cast<double>(l.input_shape().elements()));
    e.set_stream(e.compute());
}

/// Batch norm.  PyTorch picks cuDNN unless the input is bf16 (Normalization.cpp): cuDNN runs one kernel each way
/// (plus a memset for channels-last); the native kernels that amp-bf16 gets run statistics, transform, the
/// running-average update and a fill forward (reading the input twice), and reduce, elementwise and a fill
/// backward (reading input and gradient twice).  Inference is one pass.
inline void rule(Emitter& e, const At& at, const BatchNorm2d& l) {
    const double width = bytes_of(e.stream());
    const double elements = at.instances * static_cast<double>(l.input_shape().elements());
    const double channels = static_cast<double>(l.config().channels);
    const bool native = e.stream() == DType::half && e.step().precision == Precision::amp_bf16;
    // cuDNN's NHWC kernels (amp-fp16, channels-last) stream well; its NCHW ones (FP32/TF32 models, torchvision's
    // default layout) and PyTorch's native ones (bf16) run far below copy bandwidth: classes of their own.
    const KernelClass kind = native ? KernelClass::batch_norm : e.amp() ? KernelClass::normalization : KernelClass::batch_norm_nchw;
    if (!e.training()) {
        // The native kernels first copy the running mean and turn the running variance into 1/std.
        if (native) {
            e.forward(stream_kernel(KernelClass::copy_cast, HostOp::module, "copy running mean", 4 * channels, 4 * channels, 0, 4));
            e.forward(stream_kernel(KernelClass::elementwise, HostOp::none, "inverse std", 4 * channels, 4 * channels, 2 * channels, 4));
        }
        // The native transform in eval mode has its own, measured, class (it computes no statistics).
        e.forward(stream_kernel(native ? KernelClass::batch_norm_inference : kind, native ? HostOp::none : HostOp::module,
                                "batch norm", width * elements, width * elements, 2 * elements, width));
        return;
    }
    // In training the module call and its autograd node cost the host far more than a generic op's (measured on
    // their own: HostCosts::batch_norm_forward_s, _backward_s); every kernel below is theirs.
    const auto call = [](Kernel k) {
        k.call = HostCall::batch_norm;
        return k;
    };
    // _BatchNorm.forward counts the batches in Python before the kernel (`num_batches_tracked.add_(1)`).
    e.forward(call(stream_kernel(KernelClass::elementwise, HostOp::internal, "count batches", 8, 8, 1, 8)));
    if (!native) {
        const bool channels_last = e.amp();
        e.forward(call(stream_kernel(kind, HostOp::module, "batch norm", width * elements, width * elements + 8 * channels, 5 * elements, width)));
        if (channels_last) e.forward(call(stream_kernel(KernelClass::memset, HostOp::none, "batch norm workspace", 0, 8 * channels, 0, 4)));
        e.backward(call(stream_kernel(kind, HostOp::backward, "batch norm backward", 2 * width * elements, width * elements, 8 * elements, width)));
        if (channels_last) e.backward(call(stream_kernel(KernelClass::memset, HostOp::none, "batch norm workspace", 0, 8 * channels, 0, 4)));
        return;
    }
    e.forward(call(stream_kernel(kind, HostOp::module, "batch norm statistics", width * elements, 8 * channels, 3 * elements, width)));
    e.forward(call(stream_kernel(kind, HostOp::none, "batch norm transform", width * elements + 16 * channels, width * elements, 2 * elements, width)));
    e.forward(call(stream_kernel(KernelClass::elementwise, HostOp::internal, "running statistics", 16 * channels, 8 * channels, 4 * channels, 4)));
    e.forward(call(stream_kernel(KernelClass::memset, HostOp::none, "batch norm fill", 0, 4, 0, 4)));
    e.backward(call(stream_kernel(KernelClass::batch_norm_backward, HostOp::backward, "batch norm backward reduce", 2 * width * elements, 16 * channels, 4 * elements, width)));
    e.backward(call(stream_kernel(KernelClass::batch_norm_backward, HostOp::none, "batch norm backward elementwise", 2 * width * elements + 24 * channels, width * elements, 4 * elements, width)));
    e.backward(call(stream_kernel(KernelClass::memset, HostOp::none, "batch norm fill", 0, 4, 0, 4)));
}

/// The tanh-form GELU written out as tensor ops (Hugging Face's NewGELUActivation, GPT-2):
///   0.5·x · (1 + tanh(√(2/π) · (x + 0.044715·x³)))
/// eight pointwise kernels forward.  Under autocast `pow` is an FP32 op: x is cast up, and every op after it runs
/// in FP32 (type promotion), so the output is FP32.  Backward, autograd runs each node: the products' gradients
/// (a cast back for a half input), tanh's, pow's three kernels, the cast of the pow input's gradient and two
/// accumulations of x's three gradients; the adds' nodes launch nothing.
inline void gelu_tanh(Emitter& e, double elements) {
    const double s = bytes_of(e.stream()), f = 4;
    const bool half = e.stream() != DType::f32;
    // `read` and `written`: bytes an element; `tensors`: the tensors those bytes are spread over (Kernel::element_bytes).
    const auto fwd = [&](HostOp host, std::string_view what, double read, double written, double tensors = 2) {
        e.forward(stream_kernel(KernelClass::elementwise, host, what, read * elements, written * elements, elements,
                                (read + written) / tensors));
    };
    const auto bwd = [&](HostOp host, KernelClass kind, std::string_view what, double read, double written,
                         double tensors = 2) {
        const KernelRole role = kind == KernelClass::copy_cast ? KernelRole::activation_cast : KernelRole::other;
        e.backward(with_role(stream_kernel(kind, host, what, read * elements, written * elements, elements,
                                           (read + written) / tensors), role));
    };
    fwd(HostOp::module, "gelu: half x", s, s);
    if (half) e.forward(with_role(stream_kernel(KernelClass::widening_cast, HostOp::internal, "cast to fp32", s * elements, f * elements, 0, (s + f) / 2), KernelRole::activation_cast));
    fwd(HostOp::internal, "gelu: cube", f, f);
    fwd(HostOp::internal, "gelu: scale cube", f, f);
    fwd(HostOp::internal, "gelu: add x", s + f, f, 3);
    fwd(HostOp::internal, "gelu: scale", f, f);
    fwd(HostOp::internal, "gelu: tanh", f, f);
    fwd(HostOp::internal, "gelu: add one", f, f);
    fwd(HostOp::internal, "gelu: product", s + f, f, 3);
    // Backward, in the reverse order of the forward's nodes.
    bwd(HostOp::backward, KernelClass::elementwise, "gelu backward: product", 2 * f, f, 3);
    if (half) bwd(HostOp::none, KernelClass::copy_cast, "cast gradient", f, s);
    bwd(HostOp::none, KernelClass::elementwise, "gelu backward: product", f + s, f, 3);
    Kernel tanh = stream_kernel(KernelClass::elementwise, HostOp::backward, "gelu backward: tanh", 2 * f * elements, f * elements, elements, f);
    tanh.silent_backward_nodes = 1;  // the add of one
    e.backward(tanh);
    bwd(HostOp::backward, KernelClass::elementwise, "gelu backward: scale", f, f);
    Kernel add = with_role(stream_kernel(half ? KernelClass::copy_cast : KernelClass::elementwise, HostOp::backward,
                                         half ? "cast gradient" : "gelu backward: scale cube", f * elements,
                                         (half ? s : f) * elements, 0, half ? (f + s) / 2 : f),
                           half ? KernelRole::activation_cast : KernelRole::other);
    add.silent_backward_nodes = 1;  // the add of x
    e.backward(add);
    if (half) bwd(HostOp::backward, KernelClass::elementwise, "gelu backward: scale cube", f, f);
    bwd(HostOp::backward, KernelClass::elementwise, "gelu backward: square", f, f);
    bwd(HostOp::none, KernelClass::elementwise, "gelu backward: times three", f, f);
    bwd(HostOp::none, KernelClass::elementwise, "gelu backward: cube", 2 * f, f, 3);
    if (half) bwd(HostOp::backward, KernelClass::copy_cast, "cast gradient", f, s);
    bwd(HostOp::backward, KernelClass::elementwise, "gelu backward: half x", s, s);
    for (int i = 0; i < 2; ++i) bwd(HostOp::backward, KernelClass::elementwise, "accumulate gradient", 2 * s, s, 3);
    e.set_stream(DType::f32);
}

/// Activations: one kernel forward (ReLU in place), one backward reading the gradient and the saved tensor.
inline void rule(Emitter& e, const At& at, const Activation& l) {
    const double width = bytes_of(e.stream());
    const double elements = at.instances * static_cast<double>(l.input_shape().elements());
    if (l.config().kind == ActivationKind::gelu_tanh) return gelu_tanh(e, elements);
    const auto flops = static_cast<double>(l.forward(1).vector_flops.value()) * at.instances;
    e.forward(stream_kernel(KernelClass::elementwise, HostOp::module, l.kind_name(), width * elements, width * elements, flops, width));
    e.backward(stream_kernel(KernelClass::elementwise, HostOp::backward, "activation backward", 2 * width * elements, width * elements, flops, width));
}

/// Dropout: training writes the output and a one-byte mask; inference launches nothing, but the module is still
/// called (nn.Dropout in eval mode returns its input: a module call's host cost).  `draw_flops`: what each random
/// draw costs on top, in vector operations (the compiled runtime's Philox; PyTorch's own kernel: in its class fit).
inline void dropout(Emitter& e, const At& at, const Dropout& l, double draw_flops = 0) {
    if (!e.training()) e.host_only(1);
    if (!e.training() || l.config().probability <= 0) return;
    const double width = bytes_of(e.stream());
    const double elements = at.instances * static_cast<double>(l.input_shape().elements());
    e.forward(stream_kernel(KernelClass::elementwise, HostOp::module, "dropout", width * elements, (width + 1) * elements,
                            (2 + draw_flops) * elements, dropout_element_bytes(width)));
    e.backward(stream_kernel(KernelClass::elementwise, HostOp::backward, "dropout backward", (width + 1) * elements, width * elements, elements, dropout_element_bytes(width)));
}
inline void rule(Emitter& e, const At& at, const Dropout& l) { dropout(e, at, l); }

/// Residual adds: the sum in the wider dtype; backward, the branch point accumulates two gradients (and a
/// type-promoting add casts the gradient of its narrower input).
inline void rule(Emitter& e, const At& at, const Add& l) {
    const double elements = at.instances * static_cast<double>(l.input_shape().elements());
    const DType out = promote(e.stream(), e.residual());
    const double in_bytes = bytes_of(e.stream()) + bytes_of(e.residual()), out_width = bytes_of(out);
    e.forward(stream_kernel(KernelClass::elementwise, HostOp::module, "add", in_bytes * elements, out_width * elements, elements, (in_bytes + out_width) / 3));
    if (out != e.stream())
        e.backward(with_role(stream_kernel(KernelClass::copy_cast, HostOp::backward, "cast gradient", out_width * elements, bytes_of(e.stream()) * elements, 0, (out_width + bytes_of(e.stream())) / 2), KernelRole::activation_cast));
    e.backward(stream_kernel(KernelClass::elementwise, HostOp::backward, "accumulate gradient", 2 * out_width * elements, out_width * elements, elements, out_width));
    e.set_stream(out);
    e.set_residual(out);
}

/// Elementwise products (gated MLPs): one kernel forward, one per input backward.
inline void rule(Emitter& e, const At& at, const Multiply& l) {
    const double width = bytes_of(e.stream());
    const double elements = at.instances * static_cast<double>(l.input_shape().elements());
    e.forward(stream_kernel(KernelClass::elementwise, HostOp::module, "multiply", 2 * width * elements, width * elements, elements, width));
    e.backward(stream_kernel(KernelClass::elementwise, HostOp::backward, "multiply backward", 2 * width * elements, width * elements, elements, width));
    e.backward(stream_kernel(KernelClass::elementwise, HostOp::none, "multiply backward", 2 * width * elements, width * elements, elements, width));
}

/// Layer norm: FP32 under autocast (a cast in if the input is half), FP32 out; backward: the input gradient and
/// the weight/bias gradient reduction (both of the layer_norm_backward class).
inline void rule(Emitter& e, const At& at, const LayerNorm& l) {
    const double rows = at.instances * static_cast<double>(l.config().rows);
    const double width_features = static_cast<double>(l.config().width);
    const double elements = rows * width_features;
    const DType out = e.amp() ? DType::f32 : e.stream();
    const double w_in = bytes_of(e.stream()), w = bytes_of(out);
    HostSequence host;
    const bool cast = e.amp() && e.stream() != DType::f32;
    if (cast) e.forward(with_role(stream_kernel(KernelClass::widening_cast, host.next(), "cast to fp32", w_in * elements, 4 * elements, 0, (w_in + 4) / 2), KernelRole::activation_cast));
    e.forward(stream_kernel(KernelClass::layer_norm, host.next(), "layer norm", w * elements, w * elements + 8 * rows, 6 * elements, w));
    e.backward(stream_kernel(KernelClass::layer_norm_backward, HostOp::backward, "layer norm backward", 2 * w * elements + 8 * rows, w * elements, 8 * elements, w));
    // The weight and bias gradients: PyTorch's GammaBetaBackward kernel, which op_bench's layer norm backward
    // cases time with the input gradient's (two kernels a call): the class's fit covers both.
    e.backward(with_role(stream_kernel(KernelClass::layer_norm_backward, HostOp::none, "layer norm weight gradient", 2 * w * elements, 8 * width_features, 3 * elements, w), KernelRole::weight_gradient));
    if (cast) e.backward(with_role(stream_kernel(KernelClass::copy_cast, HostOp::backward, "cast gradient", 4 * elements, w_in * elements, 0, (4 + w_in) / 2), KernelRole::activation_cast));
    e.set_stream(out);
    e.set_residual(out);
}

/// RMS norm as Hugging Face's Llama writes it: to FP32, pow, mean, rsqrt, multiply, back to the input dtype,
/// times the weight — pointwise ops each way.
inline void rule(Emitter& e, const At& at, const RMSNorm& l) {
    const double rows = at.instances * static_cast<double>(l.config().rows);
    const double elements = rows * static_cast<double>(l.config().width);
    const double w = bytes_of(e.stream());
    e.forward(stream_kernel(KernelClass::elementwise, HostOp::module, "pow", 4 * elements, 4 * elements, elements, 4));
    e.forward(stream_kernel(KernelClass::reduction, HostOp::internal, "mean", 4 * elements, 4 * rows, elements, 4));
    e.forward(stream_kernel(KernelClass::elementwise, HostOp::internal, "rsqrt", 4 * rows, 4 * rows, 2 * rows, 4));
    e.forward(stream_kernel(KernelClass::elementwise, HostOp::internal, "normalize", 4 * elements + 4 * rows, w * elements, elements, (4 + w) / 2));
    e.forward(stream_kernel(KernelClass::elementwise, HostOp::internal, "weight", w * elements, w * elements, elements, w));
    for (int i = 0; i < 5; ++i)
        e.backward(stream_kernel(i == 1 ? KernelClass::reduction : KernelClass::elementwise, HostOp::backward,
                                 "rms norm backward", 2 * 4 * elements, 4 * elements, elements, 4));
}

/// Softmax over the last axis (standalone layers): one kernel each way.
inline void rule(Emitter& e, const At& at, const Softmax& l) {
    const double w = bytes_of(e.stream());
    const double elements = at.instances * static_cast<double>(l.input_shape().elements());
    e.forward(stream_kernel(KernelClass::softmax, HostOp::module, "softmax", w * elements, w * elements, 5 * elements, w));
    e.backward(stream_kernel(KernelClass::softmax, HostOp::backward, "softmax backward", 2 * w * elements, w * elements, 3 * elements, w));
}

/// Pooling: PyTorch's native pooling kernels, classes of their own (op_bench.py's `pool` cases measure them: the
/// backward reaches a fraction of the forward's bandwidth).  Max pooling on CUDA always computes its int64 indices
/// (max_pool2d calls max_pool2d_with_indices, in inference too); its backward zeroes the input gradient, then
/// scatters the output gradient through the indices.
inline void rule(Emitter& e, const At& at, const Pool2D& l) {
    const double w = bytes_of(e.stream());
    const double in = at.instances * static_cast<double>(l.input_shape().elements());
    const double out = at.instances * static_cast<double>(l.output_shape().elements());
    const bool max = l.config().kind == PoolKind::max;
    const double index = max ? 8 * out : 0;
    const KernelClass forward = e.amp() ? KernelClass::pooling_nhwc : KernelClass::pooling;  // AMP CNNs: channels-last
    e.forward(stream_kernel(forward, HostOp::module, l.kind_name(), w * in, w * out + index, in, w));
    if (max) e.backward(stream_kernel(KernelClass::memset, HostOp::backward, "zero pool input gradient", 0, w * in, 0, w));
    e.backward(stream_kernel(KernelClass::pooling_backward, max ? HostOp::none : HostOp::backward, "pool backward",
                             w * out + index, w * in, in, w));
}
inline void rule(Emitter& e, const At& at, const AdaptiveAvgPool2D& l) {
    const double w = bytes_of(e.stream());
    const double in = at.instances * static_cast<double>(l.input_shape().elements());
    const double out = at.instances * static_cast<double>(l.output_shape().elements());
    e.forward(stream_kernel(KernelClass::reduction, HostOp::module, "adaptive average pool", w * in, w * out, in, w));
    e.backward(stream_kernel(KernelClass::elementwise, HostOp::backward, "pool backward", w * out, w * in, in, w));
}

/// Flatten is a view, except of a channels-last feature map with more than one pixel (AMP CNNs): a copy.
inline void rule(Emitter& e, const At& at, const Flatten& l) {
    const Shape in = l.input_shape();
    if (!e.amp() || in.rank() != 3 || in[1] * in[2] <= 1) return;
    const double bytes = bytes_of(e.stream()) * at.instances * static_cast<double>(in.elements());
    e.forward(stream_kernel(KernelClass::layout_copy, HostOp::module, "channels-last flatten copy", bytes, bytes, 0, bytes_of(e.stream())));
}

/// Embeddings: gather FP32 rows (with their int64 indices).  Backward (aten/src/ATen/native/cuda/Embedding.cu):
/// up to 3,072 indices, a zero-filled table gradient and one kernel that adds the rows per feature; more, a radix
/// sort of the 64-bit indices (histogram, exclusive sum, eight one-byte passes, each after a memset of its
/// look-back state) and the segment pipeline (unique keys, partial segments, scans, per-segment sums, the
/// scatter into the table): 29 launches, which our profiles count per embedding.  Position ids are the same for
/// every instance: gathered once, and the next add broadcasts them.
inline void rule(Emitter& e, const At& at, const Embedding& l) {
    const auto& c = l.config();
    const double rows = (c.broadcast ? 1.0 : at.instances) * static_cast<double>(c.rows);
    const double out = rows * static_cast<double>(c.width);
    const double table = static_cast<double>(l.params());
    e.forward(stream_kernel(KernelClass::gather, HostOp::module, "embedding", 4 * out + 8 * rows, 4 * out, 0, 4));
    e.backward(stream_kernel(KernelClass::memset, HostOp::backward, "zero table gradient", 0, 4 * table, 0, 4));
    // Token ids at the batches that train are more than 3,072 (the sort path); broadcast position ids are one
    // sample's.  The path is chosen per sample so that a step's kernels do not depend on the batch.
    if (c.broadcast && c.rows <= 3072) {
        e.backward(stream_kernel(KernelClass::gather, HostOp::none, "embedding backward", 4 * out + 8 * rows, 4 * out, out, 4));
    } else {
        e.backward(stream_kernel(KernelClass::gather, HostOp::none, "sort indices: histogram", 8 * rows, 0, 0, 8));
        e.backward(stream_kernel(KernelClass::gather, HostOp::none, "sort indices: exclusive sum", 0, 0, 0, 8));
        for (int pass = 0; pass < 8; ++pass) {
            e.backward(stream_kernel(KernelClass::memset, HostOp::none, "sort indices: look-back reset", 0, 64, 0, 4));
            e.backward(stream_kernel(KernelClass::gather, HostOp::none, "sort indices: pass", 16 * rows, 16 * rows, 0, 8));
        }
        constexpr std::array<std::string_view, 9> segments{
            "unique indices: init", "unique indices", "count segments", "partial segments", "scan: init", "scan",
            "segment offsets", "segment sums", "scatter into table"};
        for (std::string_view what : segments)
            e.backward(stream_kernel(KernelClass::gather, HostOp::none, what, 8 * rows, 8 * rows, 0, 8));
        e.backward(stream_kernel(KernelClass::gather, HostOp::none, "embedding backward", 4 * out + 16 * rows, 4 * out, out, 4));
    }
    e.set_stream(DType::f32);
    e.set_residual(DType::f32);
}

/// Multi-head attention through scaled_dot_product_attention: Q, K, V projections (each casting its input and
/// weight), one fused kernel, a copy that makes the heads contiguous, and the output projection.
inline void rule(Emitter& e, const At& at, const MultiHeadAttention& l);

/// Every other layer: one kernel per pass of the layer's natural class (the ideal lowering), reported.
template <class L>
void rule(Emitter& e, const At& at, const L& l) {
    e.fallback(L::type_name);
    const auto inst = static_cast<std::int64_t>(at.instances);
    const double width = bytes_of(e.compute());
    const KernelClass kind = l.forward(1).macs.value() > 0 ? KernelClass::gemm : KernelClass::elementwise;
    if (e.amp() && l.params() > 0) {
        HostSequence host;
        weight_cast_forward(e, host, static_cast<double>(l.params()));
    }
    // A pass without matrix work streams its tensors in the compute dtype (its SM side goes by their elements).
    const auto pass = [&](HostOp host, std::string_view what, const PassCost& cost) {
        Kernel k = matrix_kernel(kind, host, what, cost, width, 4);
        if (!is_matrix(kind)) k.element_bytes = width;
        return k;
    };
    e.forward(pass(HostOp::module, L::type_name, l.forward(inst)));
    if (at.input_gradient()) e.backward(pass(HostOp::backward, "backward-data", l.backward_data(inst)));
    if (l.params() > 0) {
        e.backward(with_role(pass(HostOp::none, "backward-weight", l.backward_weight(inst)), KernelRole::weight_gradient));
        weight_cast_backward(e, static_cast<double>(l.params()));
    }
    e.set_stream(e.compute());
}

/// The shape the roofline times a fused attention kernel by: queries, keys, head dimension, (sample, head) pairs.
inline void attention_shape(Kernel& k, const At& at, const MultiHeadAttention::Config& c) {
    k.m = static_cast<double>(c.q_len);
    k.n = static_cast<double>(c.kv_len);
    k.k = static_cast<double>(c.head_dim);
    k.count = at.instances * static_cast<double>(c.heads);
    k.causal = c.causal;
}

/// The fused kernel, forward and backward: QK^T and PV for the unmasked pairs (the backward recomputes QK^T, then
/// dV, dP, dQ, dK: five products to the forward's two); the forward reads Q, K, V and writes O and the log-sum-exp,
/// the backward reads them with dO and writes dQ, dK, dV.  FP32 inputs run the memory-efficient kernel on the FMA
/// units; training with dropout draws the mask in both.  The forward also carries a transformer block's Python glue
/// (Hugging Face): the head split/merge views and the container modules around the attention and the MLP, whose
/// views' autograd nodes the backward carries, and the rest of the block's own Python (HostCosts::block_*_s).
inline std::array<Kernel, 2> sdpa_kernels(const Emitter& e, const At& at, const MultiHeadAttention& l, double width) {
    const auto& c = l.config();
    const double q_rows = at.instances * static_cast<double>(c.q_len), kv_rows = at.instances * static_cast<double>(c.kv_len);
    const double qw = static_cast<double>(c.heads * c.head_dim), kvw = static_cast<double>(c.kv_heads * c.head_dim);
    const double lse = 4 * q_rows * static_cast<double>(c.heads), core = at.instances * static_cast<double>(l.core_macs());
    constexpr std::uint8_t block_views = 10, block_containers = 6;
    Kernel forward = stream_kernel(KernelClass::attention, HostOp::module, "scaled dot-product attention",
                                   width * (q_rows * qw + 2 * kv_rows * kvw), width * q_rows * qw + lse, 0, width);
    forward.macs = core;
    forward.views = block_views;
    forward.containers = block_containers;
    forward.block_glue = static_cast<std::uint8_t>(block_glue::python | (e.amp() ? block_glue::autocast : 0) |
                                                   (e.training() ? block_glue::autograd : 0));
    Kernel backward = stream_kernel(KernelClass::attention, HostOp::none, "scaled dot-product attention backward",
                                    width * (2 * q_rows * qw + 2 * kv_rows * kvw) + lse, width * (q_rows * qw + 2 * kv_rows * kvw), 0, width);
    backward.macs = 2.5 * core;
    backward.silent_backward_nodes = static_cast<std::uint8_t>(block_views + (c.causal ? 2 : 0));
    for (Kernel* k : {&forward, &backward}) {
        k->simt = !e.amp();
        k->dropout = e.training() && c.dropout > 0;
        attention_shape(*k, at, c);
    }
    return {forward, backward};
}

/// A causal (decoder) layer appends its keys and values to Hugging Face's DynamicCache, which models create by
/// default (use_cache), in training too: each of K and V is a new empty tensor (torch.tensor([]): three host ops, no
/// kernel) concatenated with the step's keys or values (one cat kernel copying `bytes`); the cat's backward slices
/// the gradient (an autograd node without a kernel).
inline void kv_cache_append(Emitter& e, double bytes, double width) {
    for (const char* what : {"kv cache append (keys)", "kv cache append (values)"}) {
        Kernel cat = stream_kernel(KernelClass::layout_copy, HostOp::module, what, bytes, bytes, 0, width);
        cat.views = 3;
        e.forward(cat);
    }
}

inline void rule(Emitter& e, const At& at, const MultiHeadAttention& l) {
    const auto& c = l.config();
    const double width = bytes_of(e.compute());
    const double q_rows = at.instances * static_cast<double>(c.q_len), kv_rows = at.instances * static_cast<double>(c.kv_len);
    const double d = static_cast<double>(c.model_dim), qw = static_cast<double>(c.heads * c.head_dim);
    const double kvw = static_cast<double>(c.kv_heads * c.head_dim);
    const double bias = c.bias ? 1.0 : 0.0;
    const bool cast = casts_input(e);
    HostSequence host;
    const double in_q = q_rows * d;
    struct Projection {
        double rows, out;
        std::string_view name;
    };
    // Separate Q, K, V linears (BERT), or one GEMM for all three that the model's code splits (GPT-2's c_attn).
    const std::array<Projection, 3> separate{{{q_rows, qw, "query projection"}, {kv_rows, kvw, "key projection"},
                                              {kv_rows, kvw, "value projection"}}};
    const std::array<Projection, 1> fused{{{q_rows, qw + 2 * kvw, "qkv projection"}}};
    const std::span<const Projection> projections = c.fused_qkv ? std::span<const Projection>(fused)
                                                                : std::span<const Projection>(separate);
    // The projections are linear layers of the model's code (Hugging Face's nn.Linear or Conv1D): their shapes key
    // a profile's measured GEMMs.
    const auto projection_shape = [&](double out) {
        return GemmGeometry{c.model_dim, static_cast<std::int64_t>(out), c.bias};
    };
    for (const auto& [rows, out, name] : projections) {
        if (cast) e.forward(with_role(stream_kernel(KernelClass::copy_cast, host.next(), "cast input", 4 * rows * d, 2 * rows * d, 0, 3), KernelRole::activation_cast));
        weight_cast_forward(e, host, d * out, bias * out);
        e.forward(with_gemm_shape(gemm_kernel(host.next(), name, rows, out, d, 1, width, width), projection_shape(out), rows));
    }
    const auto [sdpa, sdpa_bwd] = sdpa_kernels(e, at, l, width);
    // cuDNN's fused attention (what amp inputs get on Hopper) zeroes its workspace first and, with dropout,
    // unpacks the Philox seed on the device; the memory-efficient kernel (FP32) launches alone.
    if (c.causal) kv_cache_append(e, width * kv_rows * kvw, width);
    const bool cudnn = e.amp();
    if (cudnn && sdpa.dropout) e.forward(stream_kernel(KernelClass::elementwise, HostOp::none, "unpack dropout seed", 16, 16, 0, 8));
    if (cudnn) e.forward(stream_kernel(KernelClass::memset, HostOp::none, "attention workspace", 0, 4 * q_rows * static_cast<double>(c.heads), 0, 4));
    e.forward(sdpa);
    e.forward(stream_kernel(KernelClass::layout_copy, HostOp::internal, "heads contiguous", width * q_rows * qw, width * q_rows * qw, 0, width));
    HostSequence out_host;
    weight_cast_forward(e, out_host, qw * d, bias * d);
    const GemmGeometry out_shape{static_cast<std::int64_t>(qw), c.model_dim, c.bias};
    e.forward(with_gemm_shape(gemm_kernel(out_host.next(), "output projection", q_rows, d, qw, 1, width, width), out_shape, q_rows));
    // Backward, in autograd's order: output projection, attention, then the three projections.
    e.backward(with_gemm_shape(gemm_kernel(HostOp::backward, "output projection dX", q_rows, qw, d, 1, width, width), out_shape, q_rows));
    e.backward(with_gemm_shape(with_role(gemm_kernel(HostOp::none, "output projection dW", qw, d, q_rows, 1, width, width), KernelRole::weight_gradient), out_shape, q_rows));
    if (c.bias) bias_gradient(e, q_rows, static_cast<double>(c.q_len), d, width);
    weight_cast_backward(e, qw * d, bias * d);
    if (cudnn) e.backward(stream_kernel(KernelClass::memset, HostOp::backward, "attention workspace", 0, 4 * q_rows * qw, 0, 4));
    e.backward(stream_kernel(KernelClass::reduction, cudnn ? HostOp::none : HostOp::backward, "attention backward preprocess", 2 * width * q_rows * qw, 4 * q_rows * static_cast<double>(c.heads), 0, width));
    e.backward(sdpa_bwd);
    // cuDNN accumulates dQ in FP32 and converts it to the input dtype in a last kernel.
    if (cudnn) e.backward(stream_kernel(KernelClass::copy_cast, HostOp::none, "attention dQ conversion", 4 * q_rows * qw, width * q_rows * qw, 0, (4 + width) / 2));
    for (const auto& [rows, out, name] : projections) {
        if (at.input_gradient())
            e.backward(with_gemm_shape(gemm_kernel(HostOp::backward, "projection dX", rows, d, out, 1, width, width), projection_shape(out), rows));
        e.backward(with_gemm_shape(with_role(gemm_kernel(at.input_gradient() ? HostOp::none : HostOp::backward, "projection dW", d, out, rows, 1, width, width), KernelRole::weight_gradient), projection_shape(out), rows));
        if (c.bias) bias_gradient(e, rows, rows / at.instances, out, width);
        weight_cast_backward(e, d * out, bias * out);
        if (cast && at.input_gradient())
            e.backward(with_role(stream_kernel(KernelClass::widening_cast, HostOp::backward, "cast input gradient", 2 * rows * d, 4 * rows * d, 0, 3), KernelRole::activation_cast));
    }
    if (c.fused_qkv)  // the split's backward concatenates the three gradients
        e.backward(stream_kernel(KernelClass::concat, HostOp::backward, "concatenate qkv gradient", width * q_rows * (qw + 2 * kvw), width * q_rows * (qw + 2 * kvw), 0, width));
    if (at.input_gradient()) {  // one use of the input per projection: the gradients accumulate
        const double g = bytes_of(e.stream());
        for (std::size_t i = 1; i < projections.size(); ++i)
            e.backward(stream_kernel(KernelClass::elementwise, HostOp::backward, "accumulate gradient", 2 * g * in_q, g * in_q, in_q, g));
    }
    e.set_stream(e.compute());
}

/// Cross-entropy over the last node's output, in FP32 (autocast's rule for the loss): a cast of half logits,
/// log-softmax and NLL forward; the gradient's fill, NLL backward (zero-fill + scatter), log-softmax backward
/// and the cast back.
inline void loss(Emitter& e, const Node& last) {
    const double logits = static_cast<double>(e.batch()) * static_cast<double>(last.repeat) *
                          static_cast<double>(output_shape(last.layer).elements());
    const double rows = static_cast<double>(e.batch());
    const double w = bytes_of(e.stream());
    const bool cast = e.stream() != DType::f32;
    e.step_level(true);
    if (cast) e.forward(with_role(stream_kernel(KernelClass::widening_cast, HostOp::module, "cast logits to fp32", w * logits, 4 * logits, 0, (w + 4) / 2), KernelRole::activation_cast));
    e.forward(stream_kernel(KernelClass::loss, cast ? HostOp::internal : HostOp::module, "log-softmax", 4 * logits, 4 * logits, 4 * logits, 4));
    e.forward(stream_kernel(KernelClass::loss, HostOp::internal, "nll loss", 12 * rows, 8, 0, 4));
    // GradScaler.scale(loss) under amp-fp16: one multiply before the backward.
    if (e.step().precision == Precision::amp_fp16)
        e.forward(stream_kernel(KernelClass::elementwise, HostOp::module, "scale loss", 8, 4, 1, 4));
    e.step_level(false);
    e.loss_backward(stream_kernel(KernelClass::memset, HostOp::backward, "loss gradient seed", 0, 4, 0, 4));
    e.loss_backward(stream_kernel(KernelClass::memset, HostOp::backward, "nll backward zero", 0, 4 * logits, 0, 4));
    e.loss_backward(stream_kernel(KernelClass::loss, HostOp::none, "nll backward", 12 * rows, 4 * rows, 0, 4));
    e.loss_backward(stream_kernel(KernelClass::loss, HostOp::backward, "log-softmax backward", 8 * logits, 4 * logits, 3 * logits, 4));
    if (cast) e.loss_backward(with_role(stream_kernel(KernelClass::copy_cast, HostOp::backward, "cast gradient", 4 * logits, w * logits, 0, (4 + w) / 2), KernelRole::activation_cast));
}

/// Lowers one node.
inline void lower_node(Emitter& e, const Node& node) {
    const At at{node, static_cast<double>(e.batch()) * static_cast<double>(node.repeat)};
    std::visit([&](const auto& layer) { rule(e, at, layer); }, node.layer);
}

}  // namespace roofplan::eager
