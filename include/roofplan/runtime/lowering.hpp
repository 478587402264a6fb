// roofplan/runtime/lowering.hpp — what the runtimes share: the step's settings, the dtype of the tensors that
// flow between layers, and an emitter that collects a step's kernels in the order the host issues them:
//     forward (model order) → loss forward → loss backward → backward (reverse model order) → optimizer.
// The rules of each runtime (runtime/eager.hpp, runtime/compiled.hpp) call the emitter; runtime/runtime.hpp
// chooses the rules.  Lowering runs at one batch size; engine/timeline.hpp makes the result affine in the batch.
#pragma once

#include <roofplan/device/device.hpp>
#include <roofplan/model/model.hpp>
#include <roofplan/runtime/kernel.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan {

/// The optimizer whose state and update the memory model and the step count.
enum class Optimizer { sgd, adam };  ///< sgd: SGD with momentum (one FP32 buffer); adam: AdamW (two FP32 buffers)

template <>
struct EnumNames<Optimizer> {
    static constexpr std::string_view field = "optimizer";
    static constexpr std::array<std::string_view, 2> names{"sgd", "adam"};
    static constexpr std::array<std::string_view, 2> notes{"with momentum", ""};
    static constexpr std::array<EnumAlias<Optimizer>, 3> aliases{
        {{"sgd-momentum", Optimizer::sgd}, {"momentum", Optimizer::sgd}, {"adamw", Optimizer::adam}}};
};
constexpr Optimizer parse_optimizer(std::string_view name) { return parse_enum<Optimizer>(name); }

/// How a framework runs the model (SPEC §6 `--runtime`).
enum class Runtime {
    eager,     ///< PyTorch 2.x eager with autocast: the kernels each operator launches, one host dispatch per op
    compiled,  ///< an optimizing compiler or inference engine: fused epilogues and pointwise chains, CUDA graphs
    ideal,     ///< one kernel per layer pass and no host cost: the teaching upper bound
};
template <>
struct EnumNames<Runtime> {
    static constexpr std::string_view field = "runtime";
    static constexpr std::array<std::string_view, 3> names{"eager", "compiled", "ideal"};
};
inline constexpr std::array<Runtime, 3> all_runtimes = enum_values<Runtime>();
constexpr Runtime parse_runtime(std::string_view name) { return parse_enum<Runtime>(name); }

/// What a step runs.
struct StepConfig {
    Precision precision = Precision::fp32;
    Mode mode = Mode::train;
    Optimizer optimizer = Optimizer::sgd;
    /// The compiled runtime replays its graphs as CUDA graphs (torch.compile "reduce-overhead", inference engines);
    /// false: its generated wrapper launches every kernel from the host (torch.compile's default mode).
    bool cuda_graphs = true;
    /// The compiled runtime in inference as an inference engine (TensorRT-like): weights converted and batch norm
    /// folded offline, the chain after each GEMM or convolution in its epilogue.  An int8 step always runs as one.
    bool engine = false;

    /// Whether the compiled runtime runs this step as an inference engine: inference asked as one, or in int8.
    [[nodiscard]] constexpr bool runs_as_engine() const {
        return mode == Mode::infer && (engine || precision == Precision::int8);
    }
};

/// Storage types of activations as the runtimes track them.
enum class DType : std::uint8_t { f32, half, i8 };
constexpr double bytes_of(DType t) { return t == DType::f32 ? 4.0 : t == DType::half ? 2.0 : 1.0; }
/// The wider of two types (PyTorch's promotion of a mixed binary op).
constexpr DType promote(DType a, DType b) { return static_cast<std::uint8_t>(a) < static_cast<std::uint8_t>(b) ? a : b; }

/// The kernels of one step, collected in issue order, and the nodes that no rule of the runtime covers.
class Emitter {
public:
    Emitter(const Model& model, std::int64_t batch, const StepConfig& step)
        : model_(&model), batch_(batch), step_(step), backward_(model.size()) {
        amp_ = is_mixed(step.precision);
        compute_ = step.precision == Precision::int8 ? DType::i8 : amp_ ? DType::half : DType::f32;
        stream_ = DType::f32;    // the input batch arrives in FP32 (images; token ids are gathered into FP32)
        residual_ = compute_;    // a residual branch point carries what the layers produce, until a layer norm,
                                 // an embedding or a type-promoting add says otherwise
    }

    [[nodiscard]] const Model& model() const { return *model_; }
    [[nodiscard]] std::int64_t batch() const { return batch_; }
    [[nodiscard]] const StepConfig& step() const { return step_; }
    [[nodiscard]] bool training() const { return step_.mode == Mode::train; }
    [[nodiscard]] bool amp() const { return amp_; }
    /// The dtype matrix kernels read and write (half under AMP).
    [[nodiscard]] DType compute() const { return compute_; }
    /// The dtype of the activation flowing into the current node, and of the last residual branch point.
    [[nodiscard]] DType stream() const { return stream_; }
    void set_stream(DType t) { stream_ = t; }
    [[nodiscard]] DType residual() const { return residual_; }
    void set_residual(DType t) { residual_ = t; }

    /// The node the next kernels belong to.
    void at(std::uint32_t node) { node_ = node; }
    [[nodiscard]] std::uint32_t node() const { return node_; }

    /// Whether the next kernels are the step's own (the loss) rather than the current layer's.
    void step_level(bool on) { step_level_ = on; }

    /// A kernel of the current node's forward (it also carries the host work recorded by `host_only` before it).
    void forward(Kernel k) {
        k.part = StepPart::forward;
        if (amp_) {  // what autocast adds to the host's work: its casts, and its wrapper around matrix operators
            if (k.role == KernelRole::weight_cast || k.role == KernelRole::activation_cast) k.call = HostCall::autocast_cast;
            else if (is_matrix(k.kind)) k.autocast_op = true;
        }
        k.node = node_;
        k.step_level = step_level_;
        k.containers = saturate(k.containers + pending_containers_);
        k.views = saturate(k.views + pending_views_);
        pending_containers_ = pending_views_ = 0;
        forward_.push_back(k);
    }
    /// Host work of the forward that launches nothing (a module call that returns its input, view ops): the host
    /// pays it before the next forward kernel.
    void host_only(unsigned containers, unsigned views = 0) {
        pending_containers_ += containers;
        pending_views_ += views;
    }
    /// A kernel of the current node's backward (issued in reverse node order, in the order given here).
    void backward(Kernel k) {
        if (!training()) return;
        k.part = StepPart::backward;
        k.node = node_;
        backward_[node_].push_back(k);
    }
    /// A kernel of the loss's backward (issued right after the loss forward, before the layers' backward).
    void loss_backward(Kernel k) {
        k.part = StepPart::backward;
        k.node = node_;
        k.step_level = true;
        loss_backward_.push_back(k);
    }
    void optimizer(Kernel k) {
        k.part = StepPart::optimizer;
        k.node = node_;
        k.step_level = true;
        optimizer_.push_back(k);
    }
    /// Records that the current node was lowered by the generic one-kernel-per-pass fallback.
    void fallback(std::string_view type) {
        for (const auto& f : fallbacks_)
            if (f == type) return;
        fallbacks_.emplace_back(type);
    }

    /// The step's kernels in issue order.
    [[nodiscard]] std::vector<Kernel> kernels() const {
        std::vector<Kernel> out = forward_;
        out.insert(out.end(), loss_backward_.begin(), loss_backward_.end());
        for (std::size_t i = backward_.size(); i-- > 0;) out.insert(out.end(), backward_[i].begin(), backward_[i].end());
        out.insert(out.end(), optimizer_.begin(), optimizer_.end());
        return out;
    }
    [[nodiscard]] const std::vector<std::string>& fallbacks() const { return fallbacks_; }

private:
    static std::uint8_t saturate(unsigned v) { return static_cast<std::uint8_t>(v > 255 ? 255 : v); }

    unsigned pending_containers_ = 0, pending_views_ = 0;
    const Model* model_;
    std::int64_t batch_;
    StepConfig step_;
    bool amp_ = false;
    DType compute_, stream_, residual_;
    std::uint32_t node_ = 0;
    bool step_level_ = false;
    std::vector<Kernel> forward_, loss_backward_, optimizer_;
    std::vector<std::vector<Kernel>> backward_;
    std::vector<std::string> fallbacks_;
};

namespace runtime_detail {

/// `k` with the given role.
constexpr Kernel with_role(Kernel k, KernelRole role) {
    k.role = role;
    return k;
}

/// A memory-bound kernel reading and writing the given bytes, `element_bytes` a byte per element touched on
/// average (Kernel::element_bytes: 2 for a bf16 op, 4 for an FP32 one, 3 for a cast between them).
constexpr Kernel stream_kernel(KernelClass kind, HostOp host, std::string_view what, double read, double written,
                               double flops, double element_bytes) {
    Kernel k;
    k.kind = kind;
    k.host = host;
    k.what = what;
    k.bytes_read = read;
    k.bytes_written = written;
    k.vector_flops = flops;
    k.element_bytes = element_bytes;
    return k;
}

/// A matrix kernel from a layer pass's cost: its MACs and GEMM view, its bytes at the compute dtype (weight
/// gradients at `gradient_bytes` per element).
constexpr Kernel matrix_kernel(KernelClass kind, HostOp host, std::string_view what, const PassCost& c, double width,
                               double gradient_width) {
    Kernel k;
    k.kind = kind;
    k.host = host;
    k.what = what;
    k.macs = static_cast<double>(c.macs.value());
    k.vector_flops = static_cast<double>(c.vector_flops.value());
    k.bytes_read = width * static_cast<double>(c.weight_elements_read + c.activation_elements_read);
    k.bytes_written = width * static_cast<double>(c.activation_elements_written) +
                      gradient_width * static_cast<double>(c.gradient_elements_written);
    if (c.gemm.count > 0) {
        k.m = static_cast<double>(c.gemm.m);
        k.n = static_cast<double>(c.gemm.n);
        k.k = static_cast<double>(c.gemm.k);
        k.count = static_cast<double>(c.gemm.count);
    }
    return k;
}

/// A GEMM of count products (m×k)·(k×n) with operands and result in `width` bytes.
constexpr Kernel gemm_kernel(HostOp host, std::string_view what, double m, double n, double k, double count,
                             double width, double out_width) {
    Kernel g;
    g.kind = KernelClass::gemm;
    g.host = host;
    g.what = what;
    g.macs = m * n * k * count;
    g.bytes_read = width * (m * k + k * n) * count;
    g.bytes_written = out_width * m * n * count;
    g.m = m;
    g.n = n;
    g.k = k;
    g.count = count;
    return g;
}

/// Launches of one multi-tensor (foreach) operation over tensors of the given chunk counts (65,536 elements a
/// chunk) with `lists` tensor lists per call, as PyTorch's multi_tensor_apply packs them
/// (aten/src/ATen/native/cuda/MultiTensorApply.cuh): a launch goes when it holds depth_limit[lists] tensors or 320
/// chunks or at the last chunk; a tensor cut by a launch stays loaded for the next one.
inline double foreach_launches(const std::vector<double>& tensor_chunks, int lists) {
    constexpr std::array<double, 6> depth_limit{110, 110, 64, 48, 36, 30};
    const double max_tensors = depth_limit[static_cast<std::size_t>(std::clamp(lists, 1, 5))];
    double launches = 0, tensors = 0, chunks = 0;
    for (std::size_t t = 0; t < tensor_chunks.size(); ++t) {
        tensors += 1;
        const double n = tensor_chunks[t];
        for (double c = 0; c < n; ++c) {
            chunks += 1;
            const bool last = t + 1 == tensor_chunks.size() && c + 1 == n;
            if (tensors == max_tensors || chunks == 320 || last) {
                launches += 1;
                chunks = 0;
                tensors = c + 1 == n ? 0 : 1;
            }
        }
    }
    return std::max(1.0, launches);
}

}  // namespace runtime_detail
}  // namespace roofplan
