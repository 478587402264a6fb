// roofplan/engine/predict.hpp — the single-GPU engine: step time, throughput, bounds, memory, energy.
//
// Each layer's passes (forward, backward-data, backward-weight) and the optimizer update are work items, each
// timed by the roofline module (engine/roofline.hpp: max(compute, memory) + launch, with wave quantization).
//
// A Predictor compiles a model once into per-item affine coefficients (cost = slope·batch + intercept, which
// every layer's cost is) so that a prediction is one pass of floating-point arithmetic over the items.
//
// Memory (whether the step fits, its peak and breakdown, the largest batch) is the memory module's
// (memory/memory.hpp): the step's allocations replayed through the caching allocator, for the same runtime.
#pragma once

#include <roofplan/calibration/profile.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/engine/roofline.hpp>
#include <roofplan/engine/program.hpp>
#include <roofplan/engine/timeline.hpp>
#include <roofplan/memory/memory.hpp>
#include <roofplan/runtime/runtime.hpp>
#include <roofplan/model/model.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <tuple>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan {

/// The phases of a training step as the engine reports them (the three passes and the optimizer update).
enum class Phase { forward, backward_data, backward_weight, optimizer };
template <>
struct EnumNames<Phase> {
    static constexpr std::string_view field = "phase";
    static constexpr std::array<std::string_view, 4> names{"forward", "backward-data", "backward-weight", "optimizer"};
};

/// What to predict.
struct PredictRequest {
    std::int64_t batch = 1;
    Precision precision = Precision::fp32;
    Mode mode = Mode::train;
    Optimizer optimizer = Optimizer::sgd;
    /// The device memory outside PyTorch's allocator (CUDA context, library modules); default: the device's
    /// measured figure, or a borrowed one (memory/context.hpp).  Library workspaces and allocator slack are
    /// not part of it: the memory model predicts them.
    std::optional<memory::ContextFigure> context{};
    /// Estimate memory: the peak, whether it fits, the largest batch (memory/memory.hpp).  A sweep that wants
    /// only times can skip it (Prediction::memory, fits and max_batch are then left empty).
    bool estimate_memory = true;
    /// Fill Prediction::layers and Prediction::by_type (a sweep that wants only totals can skip them).
    bool per_layer = true;
    /// How the framework runs the model: `ideal` times one kernel per layer pass with no host cost (the
    /// library's default, the teaching bound); `eager` and `compiled` lower each pass into the kernels the
    /// framework launches and simulate the host's dispatch beside the GPU.
    Runtime runtime = Runtime::ideal;
    /// The compiled runtime: replayed as CUDA graphs (true), or launched kernel by kernel by the compiler's
    /// generated wrapper (torch.compile's default mode).  Ignored by the other runtimes.
    bool cuda_graphs = true;
    /// The compiled runtime in inference as an inference engine (TensorRT-like: weights converted and batch norm
    /// folded offline, bias, batch norm, activation and residual add in the GEMM/convolution epilogue) rather than
    /// torch.compile (no folding: a generated kernel after each convolution, autocast's weight casts every
    /// forward).  An int8 inference always runs as an engine.  Only with the compiled runtime in inference.
    bool engine = false;
    /// Keep every kernel with its time in Prediction::kernels (eager and compiled runtimes).
    bool kernels = false;
    /// The host's dispatch of the layers' forward kernels slowed by this factor (>= 1): nn.DataParallel's replicas,
    /// one thread each, take turns at the interpreter lock (system/parallel.hpp).  Ignored by the ideal runtime.
    double forward_host_scale = 1;
};

/// What limits a whole step.
enum class StepBound { compute, memory, latency, host, input };
template <>
struct EnumNames<StepBound> {
    static constexpr std::string_view field = "bound";
    static constexpr std::string_view what = "step bound";
    static constexpr std::array<std::string_view, 5> names{"compute", "memory", "latency", "host", "input"};
};

/// One layer's share of a step.
struct LayerPrediction {
    std::size_t node = 0;                    ///< index into Model::nodes()
    units::seconds time{};                  ///< all its passes
    EnumArray<Pass, units::seconds> pass{};  ///< per pass
    Bound bound = Bound::memory;            ///< of its slowest pass
    units::flop_amount flops{};
    units::byte_amount bytes{};
};

/// A prediction for one model on one device.
struct Prediction {
    std::int64_t batch = 0;
    Precision precision = Precision::fp32;
    Mode mode = Mode::train;
    Optimizer optimizer = Optimizer::sgd;
    MathClass math = MathClass::fp32;  ///< where the matrix work runs
    units::seconds step_time{};        ///< one step (training) or one batch (inference)
    units::seconds compute_time{};     ///< kernel time on the GPU (= step time on one GPU; no communication)
    double throughput_samples_per_s = 0;
    EnumArray<Phase, units::seconds> phase_time{};
    units::flop_amount flops{};                  ///< all the arithmetic of a step
    units::byte_amount bytes{};                  ///< all the memory traffic of a step
    units::flops_per_second achieved{};          ///< flops / step time
    double fraction_of_peak = 0;                 ///< achieved / peak of the math class
    memory::MemoryEstimate memory{};  ///< the step's memory at the batch (memory/memory.hpp)
    byte_count capacity{};            ///< the device's memory
    bool fits = false;                ///< memory.fits
    std::int64_t max_batch = 0;       ///< the largest batch that fits (0: not even one sample)
    byte_count missing{};             ///< when it does not fit: what the step lacks (memory.total - capacity)
    units::watts power{};        ///< TDP, or the profile's measured power
    double samples_per_joule = 0;
    std::vector<LayerPrediction> layers;                       ///< one per node with work, in model order
    std::vector<std::pair<std::string_view, units::seconds>> by_type;  ///< time per layer type, largest first
    // The execution model (kernel-level runtimes; the ideal runtime counts one kernel per pass and no host).
    Runtime runtime = Runtime::ideal;
    bool cuda_graphs = true;  ///< the compiled runtime's CUDA graphs (PredictRequest::cuda_graphs)
    bool engine = false;      ///< run as an inference engine (PredictRequest::engine; an int8 inference: true)
    std::size_t kernel_count = 0;
    double gpu_busy_s = 0;   ///< the kernels' time as a profiler sees it (their times less the gaps between them)
    double gpu_idle_s = 0;   ///< step minus busy: the GPU waiting for the host, and the gaps between kernels
    double gpu_gap_s = 0;    ///< of the idle time, the gaps between back-to-back kernels
    double host_s = 0;       ///< the host's dispatch time for the step
    StepBound bound = StepBound::compute;
    EnumArray<KernelClass, double> class_time_s{};  ///< GPU time per kernel class
    std::vector<std::string> fallbacks;  ///< layer types the runtime lowered one kernel per pass (no rule)
    std::vector<TimedKernel> kernels;    ///< every kernel, when PredictRequest::kernels
    /// The input pipeline (system/input.hpp, `with_input`); "synthetic": the batch is made on the GPU and these
    /// are 0.  The copy is GPU time in the step; the pipeline runs beside the GPU.
    std::string_view input = "synthetic";
    double input_copy_s = 0;      ///< the batch copied to the GPU over its host link
    double input_pipeline_s = 0;  ///< one batch through the pipeline (decode workers, or gpu-decode's host threads)
    int input_workers = 0;        ///< data-loader workers (cpu-decode) or decode threads (gpu-decode)
};

/// A model compiled for prediction.  Keeps a pointer to the model: the model must outlive the predictor (binding
/// one to a temporary does not compile).
class Predictor {
public:
    explicit Predictor(const Model& model) : model_(&model), memory_(model) {
        const auto& nodes = model.nodes();
        std::map<Key, std::uint32_t> index;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            compile_node(static_cast<std::uint32_t>(i), nodes[i], index);
            const std::string_view type = type_label(nodes[i].layer);
            const auto known = std::find(type_names_.begin(), type_names_.end(), type);
            node_type_.push_back(static_cast<std::uint16_t>(known - type_names_.begin()));
            if (known == type_names_.end()) type_names_.push_back(type);
        }
        params_ = model.params();
        // The largest batch at which every count (and every byte count at up to 4 bytes per element) fits in
        // 64 bits; beyond it, the exact integer path reports which count overflows.
        const double limit = static_cast<double>(std::numeric_limits<std::int64_t>::max()) / 8.0;
        safe_batch_ = max_slope_ > 0 ? limit / max_slope_ : limit;
    }
    explicit Predictor(const Model&&) = delete;  ///< a predictor of a temporary model would dangle

    [[nodiscard]] const Model& model() const { return *model_; }

    /// Predicts a step.  Errors: batch < 1, a precision the device lacks, int8 training, a batch whose counts
    /// overflow 64 bits, an invalid profile.
    [[nodiscard]] Prediction operator()(const Device& device, const EfficiencyProfile& profile,
                                        const PredictRequest& request) const {
        check(request);
        Prediction out;
        out.batch = request.batch;
        out.precision = request.precision;
        out.mode = request.mode;
        out.optimizer = request.optimizer;
        out.math = math_class(device, request.precision, request.mode);
        out.runtime = request.runtime;
        out.cuda_graphs = request.cuda_graphs;
        out.engine = request.runtime == Runtime::compiled && step_config(request).runs_as_engine();
        const Roofline roofline(device, profile, out.math);
        if (request.runtime != Runtime::ideal) {
            simulate_step(roofline, device, profile, request, out);
            return out;
        }
        const Totals totals = time_items(roofline, request, out);
        finish(totals,
               totals.phase[Phase::forward] + totals.phase[Phase::backward_data] +
                   totals.phase[Phase::backward_weight] + totals.phase[Phase::optimizer],
               device, profile, request, out);
        ideal_execution(out);
        if (request.per_layer) out.by_type = time_by_type(out);
        return out;
    }

    /// The memory model alone (no timing): the step's memory at the request's batch on `device`.
    [[nodiscard]] memory::MemoryEstimate memory(const Device& device, const PredictRequest& request) const {
        detail::require_batch(request.batch);
        return memory_(memory_request(request), device_memory(device, request));
    }
    /// The largest batch whose step fits `device` (request.batch is ignored), from the memory model's replays.
    [[nodiscard]] memory::MaxBatch max_batch(const Device& device, const PredictRequest& request) const {
        return max_batch_of(memory_request(request), device_memory(device, request));
    }
    /// The memory request that matches a prediction request (same batch, precision, mode, optimizer, runtime).
    [[nodiscard]] static memory::MemoryRequest memory_request(const PredictRequest& r) {
        memory::MemoryRequest m;
        m.batch = r.batch;
        m.precision = r.precision;
        m.mode = r.mode;
        m.optimizer = r.optimizer;
        m.runtime = r.runtime;
        return m;
    }
    /// The device's memory with the request's context (or the device's default one).
    [[nodiscard]] static memory::DeviceMemory device_memory(const Device& device, const PredictRequest& r) {
        memory::DeviceMemory d = memory::DeviceMemory::of(device);
        if (r.context) d.context = *r.context;
        return d;
    }

private:
    using Pair = std::array<double, 2>;  ///< {slope, intercept} of a count affine in the batch
    struct Item {
        Pair macs{}, vector_flops{}, elements{}, gradients{};
        Pair m{}, n{}, k{}, count{};
        std::uint32_t node = 0;
        std::uint8_t pass = 0;
        bool gemm = false;
        bool conv = false;
    };
    /// Where an item occurs: a node's pass, and which distinct item it is.
    struct Placed {
        std::uint32_t node = 0;
        std::uint32_t kind = 0;
        std::uint8_t pass = 0;
    };
    /// Sums over a step, in seconds, FLOPs and bytes.
    struct Totals {
        EnumArray<Phase, double> phase{};
        double flops = 0, bytes = 0;
    };
    using Key = std::tuple<Pair, Pair, Pair, Pair, Pair, Pair, Pair, Pair, std::uint8_t, bool, bool>;
    static Key key_of(const Item& it) {
        return {it.macs, it.vector_flops, it.elements, it.gradients, it.m, it.n, it.k, it.count, it.pass, it.gemm,
                it.conv};
    }

    /// Compiles one node's passes into items (affine coefficients), and its share of the memory model.
    void compile_node(std::uint32_t i, const Node& n, std::map<Key, std::uint32_t>& index) {
        const bool conv = std::holds_alternative<Conv2D>(n.layer);
        for (std::size_t p = 0; p < 3; ++p) {
            const auto pass = static_cast<Pass>(p);
            if (!n.runs(pass)) continue;
            const AffineCost a = n.affine ? n.costs[p] : detail::affine_from([&](std::int64_t b) {
                return roofplan::cost(n.layer, pass, detail::mul(b, n.repeat, "batch"));
            });
            const PassCost& s = a.per_instance;
            const PassCost& f = a.fixed;
            Item it;
            it.node = i;
            it.pass = static_cast<std::uint8_t>(p);
            it.conv = conv;
            it.macs = pair(s.macs.value(), f.macs.value());
            it.vector_flops = pair(s.vector_flops.value(), f.vector_flops.value());
            it.elements = pair(s.weight_elements_read + s.activation_elements_read + s.activation_elements_written,
                               f.weight_elements_read + f.activation_elements_read + f.activation_elements_written);
            it.gradients = pair(s.gradient_elements_written, f.gradient_elements_written);
            it.m = pair(s.gemm.m, f.gemm.m);
            it.n = pair(s.gemm.n, f.gemm.n);
            it.k = pair(s.gemm.k, f.gemm.k);
            it.count = pair(s.gemm.count, f.gemm.count);
            it.gemm = (s.gemm.count + f.gemm.count) > 0 && (s.macs.value() + f.macs.value()) > 0;
            if (it.macs[0] + it.macs[1] + it.vector_flops[0] + it.vector_flops[1] + it.elements[0] + it.elements[1] +
                    it.gradients[0] + it.gradients[1] == 0)
                continue;  // a view (flatten) or a pass with nothing to do: no kernel
            add_item(it, index);
            if (p == 0) {
            }
            grow_slope(a);
        }
        if (roofplan::params(n.layer) > 0) ++param_tensors_;
    }

    void add_item(const Item& it, std::map<Key, std::uint32_t>& index) {
        auto [at, inserted] = index.try_emplace(key_of(it), static_cast<std::uint32_t>(kinds_.size()));
        if (inserted) {
            kinds_.push_back(it);
            multiplicity_.push_back(0);
        }
        multiplicity_[at->second] += 1;
        items_.push_back({it.node, at->second, it.pass});
    }
    static Pair pair(std::int64_t slope, std::int64_t intercept) {
        return {static_cast<double>(slope), static_cast<double>(intercept)};
    }
    void grow_slope(const AffineCost& a) {
        const PassCost& s = a.per_instance;
        for (std::int64_t v : {s.macs.value(), s.vector_flops.value(), s.weight_elements_read,
                               s.activation_elements_read, s.activation_elements_written, s.gradient_elements_written})
            max_slope_ += static_cast<double>(v);
    }

    /// What a request asks the runtimes to lower.
    static constexpr StepConfig step_config(const PredictRequest& r) {
        return {r.precision, r.mode, r.optimizer, r.cuda_graphs, r.engine};
    }

    void check(const PredictRequest& request) const {
        detail::require_batch(request.batch);
        if (static_cast<double>(request.batch) > safe_batch_)
            (void)model_->training_work(request.batch, Precision::fp32);  // throws, naming the count
        if (static_cast<double>(request.batch) > safe_batch_)
            detail::fail("batch ", request.batch, " is too large to count for model '", model_->id(), "'");
        if (request.context) memory::require_context(*request.context);
        if (!(request.forward_host_scale >= 1 && request.forward_host_scale <= 1e3))
            detail::fail("the forward's host scale must be a number in [1, 1000], got ", std::to_string(request.forward_host_scale));
        if (request.engine && (request.runtime != Runtime::compiled || request.mode != Mode::infer))
            detail::fail("an inference engine is the compiled runtime in inference (runtime ", to_string(request.runtime),
                         ", mode ", to_string(request.mode), " asked)");
    }

    /// An item's work at batch b.
    static KernelWork work_of(const Item& it, double b, double width, double gradient_width) {
        KernelWork w;
        w.macs = it.macs[0] * b + it.macs[1];
        w.vector_flops = it.vector_flops[0] * b + it.vector_flops[1];
        w.bytes = width * (it.elements[0] * b + it.elements[1]) + gradient_width * (it.gradients[0] * b + it.gradients[1]);
        if (it.gemm) {
            w.m = it.m[0] * b + it.m[1];
            w.n = it.n[0] * b + it.n[1];
            w.k = it.k[0] * b + it.k[1];
            w.count = it.count[0] * b + it.count[1];
        }
        w.conv = it.conv;
        return w;
    }

    /// Times every distinct item once (identical items of repeated blocks are counted by multiplicity), adds the
    /// optimizer update, and fills the per-layer breakdown when asked.
    Totals time_items(const Roofline& roofline, const PredictRequest& request, Prediction& out) const {
        const double b = static_cast<double>(request.batch);
        const double width = static_cast<double>(element_bytes(request.precision));
        const double gradient_width = static_cast<double>(gradient_bytes(request.precision));
        const bool train = request.mode == Mode::train;
        Totals totals;
        std::vector<KernelTime> timed;
        if (request.per_layer) timed.resize(kinds_.size());
        for (std::size_t i = 0; i < kinds_.size(); ++i) {
            const Item& it = kinds_[i];
            if (!train && it.pass != 0) continue;
            const KernelTime t = roofline.time(work_of(it, b, width, gradient_width));
            const double times = multiplicity_[i];
            totals.phase[static_cast<Phase>(it.pass)] += times * t.total_s;
            totals.flops += times * t.flops;
            totals.bytes += times * t.bytes;
            if (request.per_layer) timed[i] = t;
        }
        if (request.per_layer) out.layers = per_layer(timed, train);
        if (train) {
            const KernelTime update = optimizer_update(roofline, request);
            totals.phase[Phase::optimizer] = update.total_s;
            totals.flops += update.flops;
            totals.bytes += update.bytes;
        }
        return totals;
    }

    /// The per-layer breakdown from the distinct items' times, in model order.
    std::vector<LayerPrediction> per_layer(const std::vector<KernelTime>& timed, bool train) const {
        std::vector<LayerPrediction> layers;
        layers.reserve(model_->size());
        for (const Placed& at : items_) {
            if (!train && at.pass != 0) continue;
            const KernelTime& t = timed[at.kind];
            if (layers.empty() || layers.back().node != at.node) {
                LayerPrediction lp;
                lp.node = at.node;
                lp.bound = t.bound;
                layers.push_back(lp);
            }
            LayerPrediction& lp = layers.back();
            if (t.total_s > lp.pass[slowest_pass(lp)].value()) lp.bound = t.bound;
            const auto pass = static_cast<Pass>(at.pass);
            lp.pass[pass] = units::in_seconds(lp.pass[pass].value() + t.total_s);
            lp.time = units::in_seconds(lp.time.value() + t.total_s);
            lp.flops = units::flop_amount::from_value(lp.flops.value() + t.flops);
            lp.bytes = units::byte_amount::from_value(lp.bytes.value() + t.bytes);
        }
        return layers;
    }
    static Pass slowest_pass(const LayerPrediction& lp) {
        Pass best = Pass::forward;
        for (Pass p : enum_values<Pass>())
            if (lp.pass[p].value() > lp.pass[best].value()) best = p;
        return best;
    }

    /// The optimizer update (training): memory-bound streams over every parameter, fused across tensors in chunks
    /// (PyTorch's multi-tensor apply), plus under AMP the gradient unscale/inf check and the FP16/BF16 weight
    /// casts.  One launch cost per fused kernel.
    KernelTime optimizer_update(const Roofline& roofline, const PredictRequest& request) const {
        const double params = static_cast<double>(params_);
        const bool amp = is_mixed(request.precision);
        const double state_buffers = request.optimizer == Optimizer::sgd ? 1.0 : 2.0;
        KernelWork w;
        // read weight, gradient, state; write weight, state (FP32)
        w.bytes = params * 4.0 * (2.0 + state_buffers + 1.0 + state_buffers);
        w.vector_flops = params * (request.optimizer == Optimizer::sgd ? 4.0 : 12.0);
        if (amp) {
            w.bytes += params * (8.0 + 6.0);  // unscale: read+write FP32 grads; cast: read FP32, write 2 bytes
            w.vector_flops += params * 2.0;
        }
        const double kernels =
            std::max(1.0, std::ceil(static_cast<double>(param_tensors_) / 32.0)) * (amp ? 3.0 : 1.0);
        KernelTime t = roofline.time(w);
        t.launch_s = kernels * roofline.launch_s();
        t.total_s = std::max(t.memory_s, t.compute_s) + t.launch_s;
        return t;
    }

    /// The execution fields of the ideal runtime: one kernel per timed pass, no host, no idle time.
    void ideal_execution(Prediction& out) const {
        const bool train = out.mode == Mode::train;
        for (std::size_t i = 0; i < kinds_.size(); ++i)
            if (train || kinds_[i].pass == 0) out.kernel_count += static_cast<std::size_t>(multiplicity_[i]);
        out.gpu_busy_s = out.step_time.value();
        double compute = 0, memory = 0;
        for (const LayerPrediction& lp : out.layers)
            (lp.bound == Bound::compute ? compute : memory) += lp.time.value();
        out.bound = compute >= memory ? StepBound::compute : StepBound::memory;
    }

    /// The kernel-level runtimes: lower the step, simulate host and GPU, and fill the prediction from it.
    void simulate_step(const Roofline& roofline, const Device& device, const EfficiencyProfile& profile,
                       const PredictRequest& request, Prediction& out) const {
        const StepConfig step = step_config(request);
        std::vector<std::string> fallbacks;
        const bool keep = request.per_layer || request.kernels;
        Timeline t;
        if (request.runtime == Runtime::eager) {  // lowered once per settings, evaluated at the batch
            const auto [program, costs] = program_for(step, profile.host);
            t = simulate(*program, request.batch, roofline, profile.host, *costs, keep, request.forward_host_scale);
            fallbacks = program->fallbacks();
        } else {
            LoweredStep lowered = lower(*model_, request.batch, step, request.runtime);
            t = simulate(lowered.kernels, roofline, profile.host, keep, request.forward_host_scale);
            fallbacks = std::move(lowered.fallbacks);
        }
        Totals totals;
        totals.phase[Phase::forward] = t.part_s[StepPart::forward];
        totals.phase[Phase::optimizer] = t.part_s[StepPart::optimizer];
        totals.phase[Phase::backward_data] = t.part_s[StepPart::backward];
        for (const TimedKernel& k : t.kernels)  // the backward's weight-gradient kernels, when kept
            if (k.kernel.part == StepPart::backward && k.kernel.weight_gradient()) {
                totals.phase[Phase::backward_weight] += k.time.total_s;
                totals.phase[Phase::backward_data] -= k.time.total_s;
            }
        totals.flops = t.flops;
        totals.bytes = t.bytes;
        finish(totals, t.step_s, device, profile, request, out);
        out.kernel_count = t.kernel_count;
        out.gpu_busy_s = t.gpu_busy_s;
        out.gpu_idle_s = t.gpu_idle_s;
        out.gpu_gap_s = t.gpu_gap_s;
        out.host_s = t.host_s;
        out.class_time_s = t.class_s;
        out.fallbacks = std::move(fallbacks);
        out.bound = step_bound(t);
        if (request.per_layer) {
            out.layers = kernel_layers(t);
            out.by_type = time_by_type(out);
            const double loss = step_level_time(t, StepPart::forward) + step_level_time(t, StepPart::backward);
            if (loss > 0) out.by_type.emplace_back("loss", units::in_seconds(loss));
            std::stable_sort(out.by_type.begin(), out.by_type.end(),
                             [](const auto& x, const auto& y) { return x.second.value() > y.second.value(); });
        }
        if (request.kernels) out.kernels = std::move(t.kernels);
    }

    /// The eager program of these settings, lowered on first use (a Predictor's copies share the cache), and its
    /// kernels' host costs for `host`, computed on first use with that host (the last few hosts are kept).
    std::pair<const Program*, std::shared_ptr<const std::vector<double>>> program_for(const StepConfig& step,
                                                                                     const HostCosts& host) const {
        const std::lock_guard<std::mutex> lock(cache_->mutex);
        const Program* program = nullptr;
        for (const auto& [key, p] : cache_->programs)
            if (key.precision == step.precision && key.mode == step.mode && key.optimizer == step.optimizer) program = p.get();
        if (program == nullptr) {
            cache_->programs.emplace_back(step, std::make_unique<Program>(*model_, step, Runtime::eager));
            program = cache_->programs.back().second.get();
        }
        auto& kept = cache_->host_costs;
        for (const auto& [p, h, costs] : kept)
            if (p == program && h == host) return {program, costs};
        if (kept.size() == ProgramCache::kept_host_costs) kept.erase(kept.begin());
        kept.emplace_back(program, host, std::make_shared<const std::vector<double>>(host_costs(*program, host)));
        return {program, std::get<2>(kept.back())};
    }

    /// The bound of a simulated step: the host when the GPU waits for it more than a third of the step (the gaps
    /// between back-to-back kernels are not waiting), else what bounds most of the GPU time.
    static StepBound step_bound(const Timeline& t) {
        if (t.gpu_idle_s - t.gpu_gap_s > t.step_s / 3) return StepBound::host;
        const EnumArray<Bound, double>& by = t.bound_s;
        const auto most = static_cast<Bound>(std::max_element(by.begin(), by.end()) - by.begin());
        return most == Bound::compute ? StepBound::compute : most == Bound::memory ? StepBound::memory : StepBound::latency;
    }
    static double step_level_time(const Timeline& t, StepPart part) {
        double s = 0;
        for (const TimedKernel& k : t.kernels)
            if (k.kernel.step_level && k.kernel.part == part) s += k.time.total_s;
        return s;
    }

    /// The per-layer breakdown of a simulated step: each layer's kernels (forward; backward-data; weight
    /// gradients), in model order; step-level kernels (loss, optimizer) are not a layer's.
    std::vector<LayerPrediction> kernel_layers(const Timeline& t) const {
        std::vector<LayerPrediction> by_node(model_->size());
        std::vector<bool> seen(model_->size(), false);
        for (const TimedKernel& k : t.kernels) {
            if (k.kernel.step_level) continue;
            LayerPrediction& lp = by_node[k.kernel.node];
            const Pass pass = k.kernel.part == StepPart::forward ? Pass::forward
                              : k.kernel.weight_gradient()       ? Pass::backward_weight
                                                                 : Pass::backward_data;
            if (!seen[k.kernel.node] || k.time.total_s > lp.pass[slowest_pass(lp)].value()) lp.bound = k.time.bound;
            seen[k.kernel.node] = true;
            lp.node = k.kernel.node;
            lp.pass[pass] = units::in_seconds(lp.pass[pass].value() + k.time.total_s);
            lp.time = units::in_seconds(lp.time.value() + k.time.total_s);
            lp.flops = units::flop_amount::from_value(lp.flops.value() + k.time.flops);
            lp.bytes = units::byte_amount::from_value(lp.bytes.value() + k.time.bytes);
        }
        std::vector<LayerPrediction> layers;
        for (std::size_t i = 0; i < by_node.size(); ++i)
            if (seen[i]) layers.push_back(by_node[i]);
        return layers;
    }

    /// Step totals, rates, memory, fit and energy.
    void finish(const Totals& totals, double step, const Device& device, const EfficiencyProfile& profile,
                const PredictRequest& request, Prediction& out) const {
        for (Phase ph : enum_values<Phase>()) out.phase_time[ph] = units::in_seconds(totals.phase[ph]);
        out.step_time = units::in_seconds(step);
        out.compute_time = out.step_time;
        out.throughput_samples_per_s = static_cast<double>(request.batch) / step;
        out.flops = units::flop_amount::from_value(totals.flops);
        out.bytes = units::byte_amount::from_value(totals.bytes);
        out.achieved = units::flops_per_second::from_value(totals.flops / step);
        out.fraction_of_peak = totals.flops / step / (device.peak[out.math] * 1e12);

        out.capacity = device.memory();
        if (request.estimate_memory) fill_memory(device, request, out);
        out.power = units::in_watts(profile.power_w > 0 ? profile.power_w : device.tdp_w);
        out.samples_per_joule = out.throughput_samples_per_s / out.power.value();
    }

    /// Time per layer type, largest first (the optimizer update as its own entry in training).
    std::vector<std::pair<std::string_view, units::seconds>> time_by_type(const Prediction& out) const {
        std::vector<double> per_type(type_names_.size(), 0.0);
        std::vector<bool> seen(type_names_.size(), false);
        for (const LayerPrediction& lp : out.layers) {
            per_type[node_type_[lp.node]] += lp.time.value();
            seen[node_type_[lp.node]] = true;
        }
        std::vector<std::pair<std::string_view, units::seconds>> by_type;
        for (std::size_t i = 0; i < per_type.size(); ++i)
            if (seen[i]) by_type.emplace_back(type_names_[i], units::in_seconds(per_type[i]));
        if (out.mode == Mode::train) by_type.emplace_back("optimizer", out.phase_time[Phase::optimizer]);
        std::stable_sort(by_type.begin(), by_type.end(),
                         [](const auto& x, const auto& y) { return x.second.value() > y.second.value(); });
        return by_type;
    }

    /// The step's memory at the batch, whether it fits, the largest batch that does and what is missing.
    void fill_memory(const Device& device, const PredictRequest& request, Prediction& out) const {
        const memory::MemoryRequest r = memory_request(request);
        const memory::DeviceMemory d = device_memory(device, request);
        out.memory = memory_(r, d);
        out.fits = out.memory.fits;
        const memory::MaxBatch most = max_batch_of(r, d);
        out.max_batch = most.batch;
        if (!out.fits)
            out.missing = units::bytes(std::max<std::int64_t>(1, out.memory.total.value() - out.memory.capacity.value()));
    }
    /// MemoryModel::max_batch, once per settings and device memory (it does not depend on the batch, and a sweep
    /// over batches asks for it at every point).
    [[nodiscard]] memory::MaxBatch max_batch_of(const memory::MemoryRequest& r, const memory::DeviceMemory& d) const {
        const MaxBatchKey key{r.precision, r.mode, r.optimizer, r.runtime, d.capacity, d.context.bytes,
                              d.workspaces.cublas_bytes, d.workspaces.cublaslt_bytes};
        {
            const std::lock_guard<std::mutex> lock(cache_->mutex);
            for (const auto& [k, v] : cache_->max_batches)
                if (k == key) return v;
        }
        memory::MaxBatch most = memory_.max_batch(r, d);  // outside the lock: replays take milliseconds
        const std::lock_guard<std::mutex> lock(cache_->mutex);
        cache_->max_batches.emplace_back(key, most);
        return most;
    }

    const Model* model_;
    memory::MemoryModel memory_;
    using MaxBatchKey = std::tuple<Precision, Mode, Optimizer, Runtime, std::int64_t, std::int64_t, std::int64_t,
                                   std::int64_t>;
    struct ProgramCache {
        std::mutex mutex;
        std::vector<std::pair<StepConfig, std::unique_ptr<Program>>> programs;
        static constexpr std::size_t kept_host_costs = 8;
        std::vector<std::tuple<const Program*, HostCosts, std::shared_ptr<const std::vector<double>>>> host_costs;
        std::vector<std::pair<MaxBatchKey, memory::MaxBatch>> max_batches;
    };
    std::shared_ptr<ProgramCache> cache_ = std::make_shared<ProgramCache>();
    std::vector<Item> kinds_;            ///< distinct items
    std::vector<double> multiplicity_;   ///< how often each distinct item occurs
    std::vector<Placed> items_;          ///< every item, in model order
    std::vector<std::string_view> type_names_;  ///< distinct layer type labels
    std::vector<std::uint16_t> node_type_;      ///< per node, its index in type_names_

    std::int64_t params_ = 0;
    std::int64_t param_tensors_ = 0;
    double max_slope_ = 0;
    double safe_batch_ = 0;
};

/// One-shot prediction (compiles the model each call; keep a Predictor for sweeps).  The arguments come in the
/// order of `Predictor(model)(device, profile, request)`; without a profile, the device's default one.
inline Prediction predict(const Model& model, const Device& device, const EfficiencyProfile& profile,
                          const PredictRequest& request) {
    return Predictor(model)(device, profile, request);
}
inline Prediction predict(const Model& model, const Device& device, const PredictRequest& request) {
    return predict(model, device, default_profile(device), request);
}

/// The engine's prediction for one layer on its own: its passes timed as a training step (or, with
/// `request.mode == Mode::infer`, an inference) would time them, without the optimizer update.  Empty when the
/// layer does no work (a view such as flatten).  `needs_input_gradient` and `repeat` are the model node's.
///
///     const auto conv = predict_layer(layers::Conv2D{c}, h200, profile, {.batch = 256, .precision = Precision::amp_bf16});
inline std::optional<LayerPrediction> predict_layer(const AnyLayer& layer, const Device& device,
                                                    const EfficiencyProfile& profile, PredictRequest request,
                                                    bool needs_input_gradient = true, std::int64_t repeat = 1) {
    Model model("layer", "one layer", input_shape(layer));
    std::visit([&](const auto& l) { (void)model.add("layer", l, needs_input_gradient, repeat); }, layer);
    request.per_layer = true;
    const Prediction p = Predictor(model)(device, profile, request);
    if (p.layers.empty()) return std::nullopt;
    return p.layers.front();
}

}  // namespace roofplan
