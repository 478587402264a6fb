// roofplan/runtime/compiled.hpp — an optimizing compiler or inference engine (torch.compile with CUDA graphs,
// TensorRT-like engines, MLPerf-style submissions).  It starts from what eager PyTorch would launch and applies
// the transformations such compilers make:
//   * activation casts disappear into their producers (a fused kernel writes the dtype its consumer reads);
//     inference engines keep their weights in the compute dtype (no weight casts);
//   * consecutive pointwise, normalization and copy kernels fuse into one kernel per chain (a reduction ends a
//     chain: batch-norm statistics, then one kernel that normalizes, activates and adds the residual); a chain
//     reads its inputs once and writes only its last output;
//   * in inference the chain right after a GEMM or convolution folds into its epilogue (bias, folded batch
//     norm, activation, residual add);
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
/// compiler's own generated kernel, not PyTorch's native one: it streams like a reduction, and in inference max
/// pooling writes no indices (nothing reads them).
inline void lower_node(Emitter& e, const Node& node) {
    if (const auto* pool = std::get_if<Pool2D>(&node.layer)) {
        const double w = bytes_of(e.stream());
        const double instances = static_cast<double>(e.batch()) * static_cast<double>(node.repeat);
        const double in = instances * static_cast<double>(pool->input_shape().elements());
        const double out = instances * static_cast<double>(pool->output_shape().elements());
        const double index = pool->config().kind == PoolKind::max && e.training() ? 8 * out : 0;
        using runtime_detail::stream_kernel;
        e.forward(stream_kernel(KernelClass::reduction, HostOp::module, pool->kind_name(), w * in, w * out + index, in));
        e.backward(stream_kernel(KernelClass::reduction, HostOp::backward, "pool backward", w * out + index, w * in, in));
        return;
    }
    eager::lower_node(e, node);
}

namespace detail {
constexpr bool fusable(const Kernel& k) {
    return k.kind == KernelClass::elementwise || k.kind == KernelClass::normalization ||
           k.kind == KernelClass::copy_cast || k.kind == KernelClass::softmax || k.kind == KernelClass::reduction ||
           k.kind == KernelClass::loss;
}
/// A kernel that reduces (writes far less than it reads) ends a fusion chain.
constexpr bool reduces(const Kernel& k) { return k.bytes_written * 8 < k.bytes_read; }
/// Appends `k` to the chain ending in `chain`: the inputs it does not take from the chain, its writes instead.
inline void absorb(Kernel& chain, const Kernel& k) {
    chain.bytes_read += std::max(0.0, k.bytes_read - chain.bytes_written);
    chain.bytes_written = k.bytes_written;
    chain.vector_flops += k.vector_flops;
    if (chain.host == HostOp::none) chain.host = k.host;
}
}  // namespace detail

/// Rewrites an eager step as a compiler runs it (see the file comment).
inline std::vector<Kernel> fuse(std::vector<Kernel> eager, bool training, bool cuda_graphs = true) {
    std::vector<Kernel> out;
    out.reserve(eager.size());
    bool chain_open = false;
    for (const Kernel& k : eager) {
        if (k.role == KernelRole::activation_cast || (!training && k.role == KernelRole::weight_cast)) continue;
        const bool same_part = !out.empty() && out.back().part == k.part;
        if (detail::fusable(k) && k.part != StepPart::optimizer && same_part) {
            if (chain_open) {
                detail::absorb(out.back(), k);
                chain_open = !detail::reduces(k);
                continue;
            }
            if (!training && is_matrix(out.back().kind) && !detail::reduces(k)) {  // epilogue fusion
                out.back().vector_flops += k.vector_flops;
                continue;
            }
        }
        out.push_back(k);
        chain_open = detail::fusable(k) && k.part != StepPart::optimizer && !detail::reduces(k);
    }
    // CUDA graphs: one launch per replayed graph (forward; backward), no per-op dispatch inside.  Without them,
    // the first kernel of each graph pays the call into it and every kernel the wrapper's launch.
    StepPart last = StepPart::optimizer;
    for (Kernel& k : out) {
        k.call = HostCall::generic;  // compiled code launches the kernels without the modules' Python
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
