// roofplan/runtime/compiled.hpp — an optimizing compiler or inference engine (torch.compile with or without CUDA
// graphs; TensorRT-like engines for int8).  It starts from what eager PyTorch would launch and applies the
// transformations such compilers make:
//   * activation casts disappear into their producers (a fused kernel writes the dtype its consumer reads);
//   * consecutive pointwise, normalization and copy kernels fuse into one generated kernel per chain (a reduction
//     ends a chain: batch-norm statistics, then one kernel that normalizes, activates and adds the residual); a
//     chain reads its inputs once, writes only its last output, and streams at the rate of the compiler's own
//     kernels (class `generated`, or `generated_reduction` when the chain holds a normalization, a softmax, a loss
//     or a sum: op_bench.py's `generated` cases, torch.compile's Triton kernels timed alone), whatever library
//     kernels it replaces; dropout draws its mask in the chain with Inductor's per-element Philox, whose
//     arithmetic (not the bytes) sets the time of a large dropout chain (`random_draw_flops`);
//   * torch.compile (float precisions) keeps its weights as they are: autocast's weight casts run every forward,
//     one kernel per weight, and batch norm is not folded into the convolution (no freezing: its default), so in
//     inference the chain after a convolution is one generated kernel (profiled on H200: "triton_poi_fused_
//     _native_batch_norm_legit_no_training_add_relu" after each convolution, 55 weight casts in ResNet-50);
//   * an int8 inference engine has quantized its weights and folded batch norm offline: no weight casts, and the
//     chain right after a GEMM or convolution folds into its epilogue (bias, batch norm, activation, residual add);
//   * the step is replayed as CUDA graphs: one host launch for the forward (and one for the backward) instead of
//     one dispatch per op; without CUDA graphs (torch.compile's default mode) the generated wrapper launches each
//     kernel, at a per-kernel host cost far below eager dispatch.  The optimizer stays eager (foreach), as
//     torch.compile leaves it by default.
#pragma once

#include <roofplan/runtime/eager.hpp>
#include <roofplan/runtime/lowering.hpp>

#include <algorithm>
#include <utility>
#include <variant>
#include <vector>

namespace roofplan::compiled {

/// What one random draw of a generated dropout costs, in FP32 vector operations at the profile's vector rate
/// (half the FP32 peak unless calibrated): Inductor draws one Philox value per element (tl.rand), integer
/// arithmetic that bounds a large dropout kernel, not its bytes.  Measured on an H200 (validation/results/
/// 2026-11-25-h200-generated, op_bench.py `generated`: dropout alone, and dropout + residual add + layer norm,
/// [8192 | 32768, 768] bf16): in a training forward (inputs requiring gradients: the kernel also stores the mask
/// and layer norm's statistics) 6.5 and 5.8 ps a draw after the 3.4 us fixed cost, against 3.3-4.2 in a no_grad call; a
/// compiled dropout runs only in training: 6.1 ps = 205 operations at 0.5 x 67 TFLOP/s.  Assumed to hold on
/// other GPUs in proportion to their FP32 rate (Philox is integer arithmetic; NVIDIA's SMs from Volta to Hopper
/// have 64 32-bit integer lanes each, their FP32 lanes 64 or 128: a stated approximation).
inline constexpr double random_draw_flops = 205;

/// Layers are first lowered as eager PyTorch would run them; `fuse` then rewrites the step.  Pooling is the
/// compiler's own generated kernel, not PyTorch's native one (in inference max pooling writes no indices: nothing
/// reads them); dropout draws its mask in the generated kernel (`random_draw_flops` a value).
inline void lower_node(Emitter& e, const Node& node) {
    if (const auto* drop = std::get_if<Dropout>(&node.layer)) {
        eager::dropout(e, {node, static_cast<double>(e.batch()) * static_cast<double>(node.repeat)}, *drop, random_draw_flops);
        return;
    }
    if (const auto* pool = std::get_if<Pool2D>(&node.layer)) {
        const double w = bytes_of(e.stream());
        const double instances = static_cast<double>(e.batch()) * static_cast<double>(node.repeat);
        const double in = instances * static_cast<double>(pool->input_shape().elements());
        const double out = instances * static_cast<double>(pool->output_shape().elements());
        const double index = pool->config().kind == PoolKind::max && e.training() ? 8 * out : 0;
        using runtime_detail::stream_kernel;
        e.forward(stream_kernel(KernelClass::elementwise, HostOp::module, pool->kind_name(), w * in, w * out + index, in, w));
        e.backward(stream_kernel(KernelClass::elementwise, HostOp::backward, "pool backward", w * out + index, w * in, in, w));
        return;
    }
    eager::lower_node(e, node);
}

namespace detail {
constexpr bool fusable(const Kernel& k) {
    return k.kind == KernelClass::elementwise || k.kind == KernelClass::normalization || k.kind == KernelClass::batch_norm ||
           k.kind == KernelClass::batch_norm_inference || k.kind == KernelClass::copy_cast || k.kind == KernelClass::widening_cast ||
           k.kind == KernelClass::layout_copy || k.kind == KernelClass::concat || k.kind == KernelClass::softmax ||
           k.kind == KernelClass::reduction || k.kind == KernelClass::loss || k.kind == KernelClass::layer_norm ||
           k.kind == KernelClass::layer_norm_backward || k.kind == KernelClass::batch_norm_nchw ||
           k.kind == KernelClass::batch_norm_backward;
}
/// A kernel that reduces (writes far less than it reads) ends a fusion chain.
constexpr bool reduces(const Kernel& k) { return k.bytes_written * 8 < k.bytes_read; }
/// Whether a kernel in a chain makes the generated kernel a reduction (over rows: layer norm, softmax, the loss;
/// over columns: batch-norm statistics, bias sums).  PyTorch's native batch norm splits into kernels that reduce
/// (statistics, the backward's sums: they write far less than they read) and pointwise ones (the transform, the
/// backward's elementwise pass), which Inductor generates as pointwise kernels.
constexpr bool reducing(const Kernel& k) {
    return k.kind == KernelClass::normalization || k.kind == KernelClass::layer_norm ||
           k.kind == KernelClass::layer_norm_backward || k.kind == KernelClass::reduction ||
           k.kind == KernelClass::softmax || k.kind == KernelClass::loss || reduces(k);
}
/// The class of the kernel a compiler generates for a chain: the compiler's own kernels' rate (op_bench.py's
/// `generated` cases), not that of the library kernels it replaces.
constexpr KernelClass generated(bool reduction) { return reduction ? KernelClass::generated_reduction : KernelClass::generated; }
/// Appends `k` to the chain ending in `chain`: the inputs it does not take from the chain, its writes instead (and
/// the chain's bytes an element averaged over the elements of both).
inline void absorb(Kernel& chain, const Kernel& k) {
    const double read = std::max(0.0, k.bytes_read - chain.bytes_written);
    // Elements: both kernels' less the chain's output, which the chain no longer writes nor `k` reads (each at its
    // kernel's mean width, which is why the result is held between the narrowest and widest element there are).
    const auto elements = [](double bytes, const Kernel& of) { return of.element_bytes > 0 ? bytes / of.element_bytes : 0.0; };
    const double passed = std::min(k.bytes_read, chain.bytes_written);
    const double touched = elements(chain.bytes(), chain) + elements(k.bytes(), k) - elements(passed, chain) - elements(passed, k);
    chain.bytes_read += read;
    chain.bytes_written = k.bytes_written;
    chain.element_bytes = touched > 0 ? std::clamp(chain.bytes() / touched, 1.0, 8.0) : 0.0;
    chain.vector_flops += k.vector_flops;
    if (chain.host == HostOp::none) chain.host = k.host;
}
}  // namespace detail

/// Rewrites an eager step as a compiler runs it (see the file comment); `engine`: an int8 inference engine (weights
/// quantized and batch norm folded offline), otherwise torch.compile.
inline std::vector<Kernel> fuse(std::vector<Kernel> eager, bool cuda_graphs = true, bool engine = false) {
    std::vector<Kernel> out;
    out.reserve(eager.size());
    bool chain_open = false;
    bool chain_reduces = false;  // the kernel at out.back() (a chain or a single kernel) holds a reducing one
    const auto close_chain = [&] {
        if (!out.empty() && detail::fusable(out.back()) && out.back().part != StepPart::optimizer)
            out.back().kind = detail::generated(chain_reduces);
    };
    for (const Kernel& k : eager) {
        if (k.role == KernelRole::activation_cast || (engine && k.role == KernelRole::weight_cast)) continue;
        if (k.role == KernelRole::weight_cast) {  // a kernel of its own: it reads a weight, not the chain's output
            close_chain();
            out.push_back(k);
            out.back().kind = detail::generated(false);
            chain_open = chain_reduces = false;
            continue;
        }
        const bool same_part = !out.empty() && out.back().part == k.part;
        if (detail::fusable(k) && k.part != StepPart::optimizer && same_part) {
            if (chain_open) {
                detail::absorb(out.back(), k);
                chain_open = !detail::reduces(k);
                chain_reduces = chain_reduces || detail::reducing(k);
                continue;
            }
            if (engine && is_matrix(out.back().kind) && !detail::reduces(k)) {  // epilogue fusion
                out.back().vector_flops += k.vector_flops;
                continue;
            }
        }
        close_chain();
        out.push_back(k);
        chain_open = detail::fusable(k) && k.part != StepPart::optimizer && !detail::reduces(k);
        chain_reduces = detail::reducing(k);
    }
    close_chain();
    // CUDA graphs: one launch per replayed graph (forward; backward), no per-op dispatch inside.  Without them,
    // the first kernel of each graph pays the call into it and every kernel the wrapper's launch.
    StepPart last = StepPart::optimizer;
    for (Kernel& k : out) {
        k.call = HostCall::generic;  // compiled code launches the kernels without the modules' Python
        k.block_glue = 0;            // nor the blocks' own
        if (k.part == StepPart::optimizer) continue;
        const bool first = k.part != last;
        last = k.part;
        if (cuda_graphs) {
            k.host = first ? HostOp::graph : HostOp::none;
            if (first && !engine) k.call = HostCall::compiled;  // torch.compile's call (guards, cudagraph trees)
        } else {
            k.host = first ? HostOp::module : HostOp::none;
            k.call = HostCall::compiled;
        }
    }
    return out;
}

/// The loss as the compiled graph computes it (the chain rules then fuse its pieces).
inline void loss(Emitter& e, const Node& last) { eager::loss(e, last); }

}  // namespace roofplan::compiled
