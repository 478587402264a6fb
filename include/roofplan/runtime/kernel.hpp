// roofplan/runtime/kernel.hpp — the level below work items: the kernels a framework launches, and the host
// operations that dispatch them.
//
// A runtime (runtime/lowering.hpp) lowers each layer pass into kernels: what eager PyTorch launches for it (casts
// under autocast, batch norm's several passes, the backward of in-place activations, dropout masks, the loss, the
// multi-tensor optimizer kernels), what a compiler launches after fusion, or the teaching ideal of one kernel per
// pass.  A kernel carries its class (which sets the bandwidth it reaches and its fixed GPU cost), its arithmetic
// and bytes, its GEMM shape, and the host operation that issues it (which sets the CPU time before the launch).
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/enum_names.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace roofplan {

/// What a kernel does, as far as its speed goes: matrix classes run at the GEMM/convolution rates; the others
/// are memory-bound streams whose achieved bandwidth and fixed cost the operator micro-benchmarks measure.
enum class KernelClass {
    gemm,           ///< cuBLAS/cuBLASLt matrix products (linear layers, batched matmuls)
    conv,           ///< cuDNN convolutions (forward, backward-data, backward-filter)
    attention,      ///< fused scaled-dot-product attention (flash / memory-efficient)
    elementwise,    ///< unary and binary pointwise ops (activations, adds, dropout, bias)
    reduction,      ///< sums and means (bias gradients, pooling, statistics)
    normalization,  ///< cuDNN batch norm kernels (channels-last, amp-fp16; layer norm has a class of its own)
    batch_norm,     ///< PyTorch's native batch-norm forward kernels (what bf16 inputs get: statistics, transform)
    softmax,        ///< softmax, log-softmax and their backward
    copy_cast,      ///< casts to a narrower type (FP32 to fp16/bf16) and contiguous copies: vectorized
    optimizer,      ///< multi-tensor optimizer kernels (foreach)
    memset,         ///< zero fills
    gather,         ///< embedding lookups and their scatter-add backward, index kernels
    loss,           ///< loss kernels (nll, cross-entropy pieces)
    pooling,        ///< PyTorch's native pooling forward, NCHW (max pooling writes its int64 indices too)
    pooling_nhwc,   ///< the same on channels-last tensors (another kernel, slower per byte)
    pooling_backward, ///< its backward (either layout): scatters the output gradient through the indices
    batch_norm_inference, ///< PyTorch's native batch-norm transform in eval mode (bf16 channels-last inference)
    widening_cast,  ///< a cast to a wider type (fp16/bf16 to FP32): PyTorch's unrolled copy kernel, not vectorized
    layout_copy,    ///< a strided tensor made contiguous, a concatenation, an NCHW/NHWC conversion (not vectorized)
    generated,      ///< a compiler's generated pointwise kernel (Triton from torch.compile): one fused chain
    generated_reduction, ///< a generated kernel that reduces (layer norm over rows, batch-norm statistics, bias sums)
    layer_norm,     ///< PyTorch's layer norm forward (not cuDNN's batch norm: another cost an element)
    concat,         ///< a concatenation along the last axis (a split's backward): vectorized, unlike the other layout copies
    layer_norm_backward, ///< PyTorch's layer norm backward: the input gradient, then the weight and bias gradients
    batch_norm_nchw, ///< cuDNN's batch norm on NCHW tensors (FP32 and TF32 models): another kernel than the native one
    batch_norm_backward, ///< PyTorch's native batch-norm backward (reduce, elementwise): twice the forward's rate
};
template <>
struct EnumNames<KernelClass> {
    static constexpr std::string_view field = "kernel_class";
    static constexpr std::string_view what = "kernel class";
    static constexpr std::array<std::string_view, 26> names{
        "gemm",      "conv",      "attention", "elementwise", "reduction", "normalization", "batch_norm",
        "softmax",   "copy_cast", "optimizer", "memset",      "gather",    "loss",      "pooling",
        "pooling_nhwc", "pooling_backward", "batch_norm_inference", "widening_cast", "layout_copy", "generated",
        "generated_reduction", "layer_norm", "concat", "layer_norm_backward", "batch_norm_nchw",
        "batch_norm_backward"};
};
inline constexpr std::size_t kernel_class_count = enum_count<KernelClass>;
inline constexpr std::array<KernelClass, kernel_class_count> all_kernel_classes = enum_values<KernelClass>();
constexpr KernelClass parse_kernel_class(std::string_view name) { return parse_enum<KernelClass>(name); }
/// Whether the class runs on the matrix units (timed by the GEMM/convolution model).
constexpr bool is_matrix(KernelClass c) {
    return c == KernelClass::gemm || c == KernelClass::conv || c == KernelClass::attention;
}

/// The host operation that issues a kernel, which sets the CPU time spent before its launch.
enum class HostOp : std::uint8_t {
    none,      ///< a further kernel of the same operation: only the launch itself
    module,    ///< an operator called from Python (a module's forward or a functional op), recorded by autograd
    internal,  ///< an operator dispatched inside another (autocast's casts, a bias add): the dispatcher only
    backward,  ///< an autograd node run by the backward engine (C++)
    optimizer, ///< a multi-tensor (foreach) optimizer operation called from Python
    graph,     ///< the launch of a captured CUDA graph (compiled runtimes): its kernels cost no host time
};
inline constexpr std::size_t host_op_count = 6;

/// Whose host cost a kernel's operation has: the generic cost of its `HostOp`, or that of a layer kind whose
/// module call and autograd node were measured on their own (validation/e2e/host_bench.py) because they cost far
/// more than the generic ones.  A kernel of such a call pays the kind's cost once (on the kernel issued by the
/// module call in the forward, and by the autograd node in the backward); its other kernels pay the launch only.
enum class HostCall : std::uint8_t {
    generic,
    batch_norm,     ///< nn.BatchNorm2d in training: the module's Python (counting, momentum), the backend's checks
    autocast_cast,  ///< a cast that autocast inserts (`_to_copy` through its cast cache): HostCosts::cast_s, not
                    ///< the generic internal op's cost
    compiled,       ///< launched by a compiler's generated wrapper without CUDA graphs (torch.compile's default
                    ///< mode): a per-kernel cost, and a per-call cost on the first kernel of each compiled graph;
                    ///< with CUDA graphs (HostOp::graph) torch.compile's call into its graph, not an engine's launch
};

/// What a transformer block's own Python costs in a step's mode (Kernel::block_glue holds a set of these).
namespace block_glue {
inline constexpr std::uint8_t python = 1;    ///< its Python between operators: HostCosts::block_python_s
inline constexpr std::uint8_t autocast = 2;  ///< under autocast: block_autocast_s more
inline constexpr std::uint8_t autograd = 4;  ///< with autograd recording (training): block_autograd_s more
}  // namespace block_glue

/// Which part of a step a kernel belongs to.
enum class StepPart : std::uint8_t { forward, backward, optimizer };
template <>
struct EnumNames<StepPart> {
    static constexpr std::string_view field = "part";
    static constexpr std::string_view what = "step part";
    static constexpr std::array<std::string_view, 3> names{"forward", "backward", "optimizer"};
};

/// What a kernel is for, where the engine and the compiled runtime treat kernels differently.
enum class KernelRole : std::uint8_t {
    other,
    weight_gradient,  ///< computes, reduces or converts a weight gradient (the layer's backward-weight pass)
    activation_cast,  ///< autocast's cast of an activation or its gradient (a compiler fuses it into the producer)
    weight_cast,      ///< autocast's cast of a parameter (an inference engine stores weights in the compute dtype)
};

/// Kernel::element_bytes of a dropout kernel on `width`-byte tensors: two of them and a one-byte mask (the forward
/// writes it, the backward reads it).  The lowering and the calibration's dropout cases count it alike.
constexpr double dropout_element_bytes(double width) { return (2 * width + 1) / 3; }

/// One kernel at one batch size.
struct Kernel {
    KernelClass kind = KernelClass::elementwise;
    StepPart part = StepPart::forward;
    HostOp host = HostOp::none;
    std::uint32_t node = 0;      ///< the model node it belongs to (step-level kernels: the last node)
    std::string_view what;       ///< "conv forward", "bn statistics", "cast weight to bf16", ...
    double macs = 0;             ///< matrix multiply-adds
    double vector_flops = 0;
    double bytes_read = 0;
    double bytes_written = 0;
    /// Bytes per element the kernel reads or writes, on average: its bytes over the elements it touches (2 for a
    /// bf16 add, 4 for an FP32 one, 3 for a cast from FP32 to bf16).  A streaming class's SM-side work goes by the
    /// element (KernelClassCost), so a kernel's elements are its bytes over this.  0: a matrix kernel, or none given.
    double element_bytes = 0;
    double m = 0, n = 0, k = 0, count = 0;  ///< GEMM view of matrix work (0: none)
    bool simt = false;           ///< matrix work on the FP32 FMA units whatever the step's math class
    /// Convolutions: ConvGeometry::key() of the convolution and its layout (0: none), and the batch of the call
    /// (its N), where a profile's measured convolutions (calibration/measured_conv.hpp) look them up.
    std::uint64_t conv_shape = 0;
    double images = 0;
    /// Linear layers' GEMMs (and attention's projections, and the workspace fills of their backward):
    /// GemmGeometry::key() of the layer (0: none) and the product's rows (tokens), where a profile's measured GEMMs
    /// (calibration/measured_gemm.hpp) look them up.
    std::uint64_t gemm_shape = 0;
    double rows = 0;
    /// Attention kernels: a causal mask (the kernel skips the key blocks above the diagonal, not single pairs).
    /// Their GEMM view is m = query length, n = key length, k = head dimension, count = batch × heads.
    bool causal = false;
    bool dropout = false;        ///< attention kernels: dropout on the probabilities (the kernel draws the mask)
    bool sync_before = false;    ///< the host waits for the GPU before issuing it (a .item(), a scaler check)
    double host_tensors = 0;     ///< tensors the host walks in Python before the launch (optimizer bookkeeping)
    /// That walk is AdamW's: the foreach operation (1-8, the order of HostCosts::adam_op_shares) whose share of its
    /// per-tensor Python precedes this launch; 0: not AdamW's (SGD's or GradScaler's walk, or none).
    std::uint8_t adam_op = 0;
    bool scaler_bookkeeping = false; ///< that walk is GradScaler's unscale_ (and the op carries its per-step cost)
    bool step_level = false;     ///< the loss or the optimizer, not a layer's
    /// Host work without a kernel before this launch: Python view ops (view, transpose, reshape), container module
    /// calls (a transformer block's nesting), autograd nodes that launch nothing (the backward of views and adds).
    std::uint8_t views = 0, containers = 0, silent_backward_nodes = 0;
    /// The transformer block whose Python this kernel's operation carries (its attention kernel): a set of
    /// block_glue bits (HostCosts::block_python_s, plus block_autocast_s and block_autograd_s in those modes); 0: none.
    std::uint8_t block_glue = 0;
    /// Issued by an operator that autocast dispatches (its wrapper inspects and casts the arguments): the matrix
    /// operators of a mixed-precision forward.  Costs HostCosts::autocast_s on top of the operator's own cost.
    bool autocast_op = false;
    KernelRole role = KernelRole::other;
    HostCall call = HostCall::generic;  ///< whose host costs the operation that issues it has

    [[nodiscard]] constexpr double bytes() const { return bytes_read + bytes_written; }
    /// Whether a backward kernel computes or converts a weight gradient (the layer's backward-weight pass).
    [[nodiscard]] constexpr bool weight_gradient() const { return role == KernelRole::weight_gradient; }
};

}  // namespace roofplan
