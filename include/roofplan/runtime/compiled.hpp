// roofplan/runtime/compiled.hpp — an optimizing compiler or inference engine (torch.compile with or without CUDA
// graphs; TensorRT-like engines for int8).  It starts from what eager PyTorch would launch and applies the
// transformations such compilers make:
//   * activation casts disappear into their producers (a fused kernel writes the dtype its consumer reads);
//   * consecutive pointwise, normalization and copy kernels fuse into one generated kernel per chain (a reduction
//     ends a chain: batch-norm statistics, then one kernel that normalizes, activates and adds the residual); a
//     chain reads its inputs once, writes only its last output, and streams like any generated kernel (the
//     elementwise class, or the reduction class when it reduces), whatever library kernels it replaces;
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

/// Layers are first lowered as eager PyTorch would run them; `fuse` then rewrites the step.  Pooling is the
/// compiler's own generated kernel, not PyTorch's native one: it streams at the elementwise rate (as every generated
/// kernel, see `generated`), and in inference max pooling writes no indices (nothing reads them).
inline void lower_node(Emitter& e, const Node& node) {
    if (const auto* pool = std::get_if<Pool2D>(&node.layer)) {
        const double w = bytes_of(e.stream());
        const double instances = static_cast<double>(e.batch()) * static_cast<double>(node.repeat);
        const double in = instances * static_cast<double>(pool->input_shape().elements());
        const double out = instances * static_cast<double>(pool->output_shape().elements());
        const double index = pool->config().kind == PoolKind::max && e.training() ? 8 * out : 0;
        using runtime_detail::stream_kernel;
        e.forward(stream_kernel(KernelClass::elementwise, HostOp::module, pool->kind_name(), w * in, w * out + index, in));
        e.backward(stream_kernel(KernelClass::elementwise, HostOp::backward, "pool backward", w * out + index, w * in, in));
        return;
    }
    eager::lower_node(e, node);
}

namespace detail {
constexpr bool fusable(const Kernel& k) {
    return k.kind == KernelClass::elementwise || k.kind == KernelClass::normalization || k.kind == KernelClass::batch_norm ||
           k.kind == KernelClass::batch_norm_inference || k.kind == KernelClass::copy_cast || k.kind == KernelClass::widening_cast || k.kind == KernelClass::layout_copy || k.kind == KernelClass::softmax || k.kind == KernelClass::reduction ||
           k.kind == KernelClass::loss;
}
/// A kernel that reduces (writes far less than it reads) ends a fusion chain.
constexpr bool reduces(const Kernel& k) { return k.bytes_written * 8 < k.bytes_read; }
/// The class of the kernel a compiler generates for a chain: it streams its bytes like an elementwise kernel, a
/// reducing chain too (not at the rate of the library kernels it replaces, such as PyTorch's native batch norm or
/// its reduce kernel, whose class is fitted on column sums; no micro-benchmark measures generated reductions yet).
constexpr KernelClass generated(const Kernel&) { return KernelClass::elementwise; }
/// Appends `k` to the chain ending in `chain`: the inputs it does not take from the chain, its writes instead.
inline void absorb(Kernel& chain, const Kernel& k) {
    chain.bytes_read += std::max(0.0, k.bytes_read - chain.bytes_written);
    chain.bytes_written = k.bytes_written;
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
    const auto close_chain = [&] {
        if (!out.empty() && detail::fusable(out.back()) && out.back().part != StepPart::optimizer)
            out.back().kind = detail::generated(out.back());
    };
    for (const Kernel& k : eager) {
        if (k.role == KernelRole::activation_cast || (engine && k.role == KernelRole::weight_cast)) continue;
        if (k.role == KernelRole::weight_cast) {  // a kernel of its own: it reads a weight, not the chain's output
            close_chain();
            out.push_back(k);
            out.back().kind = detail::generated(k);
            chain_open = false;
            continue;
        }
        const bool same_part = !out.empty() && out.back().part == k.part;
        if (detail::fusable(k) && k.part != StepPart::optimizer && same_part) {
            if (chain_open) {
                detail::absorb(out.back(), k);
                chain_open = !detail::reduces(k);
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
