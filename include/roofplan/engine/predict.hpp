// roofplan/engine/predict.hpp — the single-GPU roofline engine: step time, throughput, bounds, memory, energy.
//
// Each layer's passes (forward, backward-data, backward-weight) and the optimizer update are work items.  An item
// takes   time = max(compute, memory) + launch,   where
//   compute = 2·MACs / (peak[math class] · gemm efficiency · conv factor · tile utilization)
//             + vector FLOPs / (FP32 peak · vector efficiency)
//   memory  = bytes / (bandwidth · memory efficiency)
// and tile utilization models wave quantization: the item's GEMM (M×N×K, count) is cut into output tiles, one
// thread block per SM per wave, the library choosing the faster of a large and a small tile and splitting K
// when there are too few tiles.  Small or awkward shapes are therefore slower than the bare roofline.
//
// A Predictor compiles a model once into per-item affine coefficients (cost = slope·batch + intercept, which
// every layer's cost is) so that a prediction is one pass of floating-point arithmetic over the items.
#pragma once

#include <roofplan/device/device.hpp>
#include <roofplan/engine/profile.hpp>
#include <roofplan/model/model.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <tuple>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan {

/// The optimizer whose state and update the memory model and the update item count.
enum class Optimizer { sgd, adam };  ///< sgd: SGD with momentum (one FP32 buffer); adam: two FP32 buffers

constexpr std::string_view to_string(Optimizer o) { return o == Optimizer::sgd ? "sgd" : "adam"; }
constexpr Optimizer parse_optimizer(std::string_view name) {
    if (name == "sgd" || name == "sgd-momentum" || name == "momentum") return Optimizer::sgd;
    if (name == "adam" || name == "adamw") return Optimizer::adam;
    detail::fail("unknown optimizer '", name, "'; accepted: sgd (with momentum), adam");
}

/// What limits a work item: its arithmetic, its memory traffic, or the per-kernel floor.
enum class Bound { compute, memory, latency };
constexpr std::string_view to_string(Bound b) {
    switch (b) {
        case Bound::compute: return "compute";
        case Bound::memory: return "memory";
        case Bound::latency: return "latency";
    }
    return "unknown";
}

/// The phases of a training step as the engine reports them (the three passes and the optimizer update).
enum class Phase { forward, backward_data, backward_weight, optimizer };
constexpr std::string_view to_string(Phase p) {
    switch (p) {
        case Phase::forward: return "forward";
        case Phase::backward_data: return "backward-data";
        case Phase::backward_weight: return "backward-weight";
        case Phase::optimizer: return "optimizer";
    }
    return "unknown";
}

/// What to predict.
struct PredictRequest {
    std::int64_t batch = 1;
    Precision precision = Precision::fp32;
    Mode mode = Mode::train;
    Optimizer optimizer = Optimizer::sgd;
    /// Memory the framework keeps besides tensors: CUDA context, cuDNN/cuBLAS workspaces, allocator slack.
    /// 1 GiB by default (a CUDA 11/12 context with cuDNN loaded takes 0.3-0.8 GiB; workspaces the rest).
    byte_count reserved = units::bytes(std::int64_t{1} << 30);
    /// Fill Prediction::layers and Prediction::by_type (a sweep that wants only totals can skip them).
    bool per_layer = true;
};

/// Memory needed on the device for a step at the request's batch.
struct MemoryBreakdown {
    byte_count weights{};          ///< FP32 masters in training (+ FP16/BF16 copies under AMP); inference copies
    byte_count gradients{};        ///< FP32 weight gradients (training)
    byte_count optimizer_state{};  ///< momentum (SGD) or two moments (Adam), FP32
    byte_count activations{};      ///< saved for backward (training) or the peak working set (inference)
    byte_count reserved{};         ///< framework overhead (PredictRequest::reserved)
    byte_count activations_per_sample{};

    [[nodiscard]] constexpr byte_count total() const {
        return weights + gradients + optimizer_state + activations + reserved;
    }
    /// The part that does not grow with the batch.
    [[nodiscard]] constexpr byte_count fixed() const { return weights + gradients + optimizer_state + reserved; }
};

/// One layer's share of a step.
struct LayerPrediction {
    std::size_t node = 0;                    ///< index into Model::nodes()
    units::seconds time{};                  ///< all its passes
    std::array<units::seconds, 3> pass{};   ///< forward, backward-data, backward-weight
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
    std::array<units::seconds, 4> phase_time{};  ///< indexed by Phase
    units::flop_amount flops{};                  ///< all the arithmetic of a step
    units::byte_amount bytes{};                  ///< all the memory traffic of a step
    units::flops_per_second achieved{};          ///< flops / step time
    double fraction_of_peak = 0;                 ///< achieved / peak of the math class
    MemoryBreakdown memory{};
    byte_count capacity{};
    bool fits = false;
    std::int64_t max_batch = 0;  ///< the largest batch that fits (0: not even one sample)
    units::watts power{};        ///< TDP, or the profile's measured power
    double samples_per_joule = 0;
    std::vector<LayerPrediction> layers;                       ///< one per node with work, in model order
    std::vector<std::pair<std::string_view, units::seconds>> by_type;  ///< time per layer type, largest first
};

/// A model compiled for prediction.  Keeps a pointer to the model: the model must outlive the predictor.
class Predictor {
public:
    explicit Predictor(const Model& model) : model_(&model) {
        const auto& nodes = model.nodes();
        std::map<Key, std::uint32_t> index;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const Node& n = nodes[i];
            const bool conv = std::holds_alternative<Conv2D>(n.layer);
            const bool relu = type_label(n.layer) == "relu";
            for (std::size_t p = 0; p < 3; ++p) {
                const auto pass = static_cast<Pass>(p);
                if (!n.runs(pass)) continue;
                const AffineCost a = n.affine ? n.costs[p] : detail::affine_from([&](std::int64_t b) {
                    return roofplan::cost(n.layer, pass, detail::mul(b, n.repeat, "batch"));
                });
                Item it;
                it.node = static_cast<std::uint32_t>(i);
                it.pass = static_cast<std::uint8_t>(p);
                it.conv = conv;
                set(it.macs, a.per_instance.macs.value(), a.fixed.macs.value());
                set(it.vector_flops, a.per_instance.vector_flops.value(), a.fixed.vector_flops.value());
                set(it.elements, a.per_instance.weight_elements_read + a.per_instance.activation_elements_read +
                                     a.per_instance.activation_elements_written,
                    a.fixed.weight_elements_read + a.fixed.activation_elements_read +
                        a.fixed.activation_elements_written);
                set(it.gradients, a.per_instance.gradient_elements_written, a.fixed.gradient_elements_written);
                set(it.m, a.per_instance.gemm.m, a.fixed.gemm.m);
                set(it.n, a.per_instance.gemm.n, a.fixed.gemm.n);
                set(it.k, a.per_instance.gemm.k, a.fixed.gemm.k);
                set(it.count, a.per_instance.gemm.count, a.fixed.gemm.count);
                it.gemm = (a.per_instance.gemm.count + a.fixed.gemm.count) > 0 &&
                          (a.per_instance.macs.value() + a.fixed.macs.value()) > 0;
                if (it.macs[0] + it.macs[1] + it.vector_flops[0] + it.vector_flops[1] + it.elements[0] +
                        it.elements[1] + it.gradients[0] + it.gradients[1] == 0)
                    continue;  // a view (flatten) or a pass with nothing to do: no kernel
                add_item(it, index);
                if (p == 0) {
                    // Saved for backward: each layer's output, except ReLU's, which runs in place (torchvision,
                    // Keras); inference keeps only one layer's input and output alive at a time.
                    if (!relu) saved_per_sample_ += a.per_instance.activation_elements_written;
                    working_per_sample_ = std::max(working_per_sample_, a.per_instance.activation_elements_read +
                                                                            a.per_instance.activation_elements_written);
                }
                grow_slope(a);
            }
            if (roofplan::params(n.layer) > 0) ++param_tensors_;
            const std::string_view type = type_label(n.layer);
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

    [[nodiscard]] const Model& model() const { return *model_; }

    /// Predicts a step.  Errors: batch < 1, a precision the device lacks, int8 training, a batch whose counts
    /// overflow 64 bits, an invalid profile.
    [[nodiscard]] Prediction operator()(const Device& device, const EfficiencyProfile& profile,
                                        const PredictRequest& request) const {
        detail::require_batch(request.batch);
        if (static_cast<double>(request.batch) > safe_batch_)
            (void)model_->training_work(request.batch, Precision::fp32);  // throws, naming the count
        if (static_cast<double>(request.batch) > safe_batch_)
            detail::fail("batch ", request.batch, " is too large to count for model '", model_->id(), "'");
        if (request.reserved.value() < 0) detail::fail("reserved memory must be >= 0 bytes");

        Prediction out;
        out.batch = request.batch;
        out.precision = request.precision;
        out.mode = request.mode;
        out.optimizer = request.optimizer;
        out.math = math_class(device, request.precision, request.mode);

        const double b = static_cast<double>(request.batch);
        const double width = static_cast<double>(element_bytes(request.precision));
        const bool amp = request.precision == Precision::amp_fp16 || request.precision == Precision::amp_bf16;
        const double gradient_width = amp ? 4.0 : width;
        const Tilings tiles = tilings(profile, device.sms);
        const double matrix_rate = device.peak[out.math] * 1e12 * profile.gemm_efficiency(out.math);
        const double vector_rate = device.peak.fp32 * 1e12 * profile.vector;
        const double byte_rate = device.bandwidth_gb_s * 1e9 * profile.memory;
        // Seconds per MAC (GEMM, convolution), per vector FLOP, per byte: the loop multiplies.
        const double s_per_mac = 2.0 / matrix_rate;
        const double s_per_conv_mac = s_per_mac / profile.conv_factor(out.math);
        const double s_per_flop = 1.0 / vector_rate;
        const double s_per_byte = 1.0 / byte_rate;
        const double launch = profile.launch_s;
        const bool train = request.mode == Mode::train;

        // Identical items (repeated blocks) are timed once and counted by multiplicity.
        const auto time_of = [&](const Item& it) {
            Timed t;
            const double macs = it.macs[0] * b + it.macs[1];
            const double vflops = it.vector_flops[0] * b + it.vector_flops[1];
            t.bytes = width * (it.elements[0] * b + it.elements[1]) +
                      gradient_width * (it.gradients[0] * b + it.gradients[1]);
            double compute = 0;
            if (macs > 0) {
                const double slowdown = it.gemm ? quantization(it, b, tiles) : 1.0;
                compute = macs * (it.conv ? s_per_conv_mac : s_per_mac) * slowdown;
            }
            compute += vflops * s_per_flop;
            const double memory = t.bytes * s_per_byte;
            const double busy = std::max(compute, memory);
            t.time = busy + launch;
            t.flops = 2.0 * macs + vflops;
            t.bound = launch >= busy ? Bound::latency : compute >= memory ? Bound::compute : Bound::memory;
            return t;
        };
        double total_flops = 0, total_bytes = 0;
        std::array<double, 4> phase{};
        std::vector<Timed> timed;
        if (request.per_layer) timed.resize(kinds_.size());
        for (std::size_t i = 0; i < kinds_.size(); ++i) {
            const Item& it = kinds_[i];
            if (!train && it.pass != 0) continue;
            const Timed t = time_of(it);
            const double times = multiplicity_[i];
            phase[it.pass] += times * t.time;
            total_flops += times * t.flops;
            total_bytes += times * t.bytes;
            if (request.per_layer) timed[i] = t;
        }
        if (request.per_layer) {
            out.layers.reserve(model_->size());
            for (const Placed& at : items_) {
                if (!train && at.pass != 0) continue;
                const Timed& t = timed[at.kind];
                if (out.layers.empty() || out.layers.back().node != at.node) {
                    LayerPrediction lp;
                    lp.node = at.node;
                    lp.bound = t.bound;
                    out.layers.push_back(lp);
                }
                LayerPrediction& lp = out.layers.back();
                if (t.time > lp.pass[lp_slowest(lp)].value()) lp.bound = t.bound;
                lp.pass[at.pass] = units::in_seconds(lp.pass[at.pass].value() + t.time);
                lp.time = units::in_seconds(lp.time.value() + t.time);
                lp.flops = units::flop_amount::from_value(lp.flops.value() + t.flops);
                lp.bytes = units::byte_amount::from_value(lp.bytes.value() + t.bytes);
            }
        }

        // The optimizer update (training): memory-bound streams over every parameter, fused across tensors in
        // chunks (PyTorch's multi-tensor apply), plus under AMP the gradient unscale/inf check and the FP16/BF16
        // weight casts.
        const double params = static_cast<double>(params_);
        if (train) {
            const double state_buffers = request.optimizer == Optimizer::sgd ? 1.0 : 2.0;
            // read weight, gradient, state; write weight, state (FP32)
            double bytes = params * 4.0 * (2.0 + state_buffers + 1.0 + state_buffers);
            double flops = params * (request.optimizer == Optimizer::sgd ? 4.0 : 12.0);
            if (amp) {
                bytes += params * (8.0 + 6.0);  // unscale: read+write FP32 grads; cast: read FP32, write 2 bytes
                flops += params * 2.0;
            }
            const double kernels = std::max(1.0, std::ceil(static_cast<double>(param_tensors_) / 32.0)) *
                                   (amp ? 3.0 : 1.0);
            const double time = std::max(bytes / byte_rate, flops / vector_rate) + kernels * launch;
            phase[3] = time;
            total_flops += flops;
            total_bytes += bytes;
        }

        double step = phase[0] + phase[1] + phase[2] + phase[3];
        for (std::size_t i = 0; i < 4; ++i) out.phase_time[i] = units::in_seconds(phase[i]);
        out.step_time = units::in_seconds(step);
        out.compute_time = out.step_time;
        out.throughput_samples_per_s = b / step;
        out.flops = units::flop_amount::from_value(total_flops);
        out.bytes = units::byte_amount::from_value(total_bytes);
        out.achieved = units::flops_per_second::from_value(total_flops / step);
        out.fraction_of_peak = total_flops / step / (device.peak[out.math] * 1e12);

        out.memory = memory(request, params);
        out.capacity = device.memory();
        out.fits = out.memory.total().value() <= out.capacity.value();
        const double room = static_cast<double>(out.capacity.value() - out.memory.fixed().value());
        const double per_sample = static_cast<double>(out.memory.activations_per_sample.value());
        out.max_batch = room <= 0 ? 0 : per_sample <= 0 ? std::numeric_limits<std::int64_t>::max()
                                                        : static_cast<std::int64_t>(std::floor(room / per_sample));

        out.power = units::in_watts(profile.power_w > 0 ? profile.power_w : device.tdp_w);
        out.samples_per_joule = out.throughput_samples_per_s / out.power.value();

        if (request.per_layer) {
            std::vector<double> per_type(type_names_.size(), 0.0);
            std::vector<bool> seen(type_names_.size(), false);
            for (const LayerPrediction& lp : out.layers) {
                per_type[node_type_[lp.node]] += lp.time.value();
                seen[node_type_[lp.node]] = true;
            }
            for (std::size_t i = 0; i < per_type.size(); ++i)
                if (seen[i]) out.by_type.emplace_back(type_names_[i], units::in_seconds(per_type[i]));
            if (train) out.by_type.emplace_back("optimizer", out.phase_time[3]);
            std::stable_sort(out.by_type.begin(), out.by_type.end(),
                             [](const auto& x, const auto& y) { return x.second.value() > y.second.value(); });
        }
        return out;
    }

    /// The wave-quantization slowdown (>= 1) the engine applies to one GEMM of m x n x k (count of them) on a
    /// device with a profile: the time of the better tiling over the ideal time.  1 for a GEMM that fills whole
    /// waves of whole tiles.
    [[nodiscard]] static double gemm_slowdown(double m, double n, double k, double count, const Device& device,
                                              const EfficiencyProfile& profile) {
        Item it;
        it.m = {0, m};
        it.n = {0, n};
        it.k = {0, k};
        it.count = {0, count};
        return quantization(it, 1.0, tilings(profile, device.sms));
    }

    /// The memory model alone (no timing).
    [[nodiscard]] MemoryBreakdown memory(const PredictRequest& request) const {
        detail::require_batch(request.batch);
        return memory(request, static_cast<double>(params_));
    }

private:
    struct Item {
        std::array<double, 2> macs{}, vector_flops{}, elements{}, gradients{};  // {slope, intercept}
        std::array<double, 2> m{}, n{}, k{}, count{};
        std::uint32_t node = 0;
        std::uint8_t pass = 0;
        bool gemm = false;
        bool conv = false;
    };

    /// A timed item.
    struct Timed {
        double time = 0, flops = 0, bytes = 0;
        Bound bound = Bound::memory;
    };
    /// Where an item occurs: a node's pass, and which distinct item it is.
    struct Placed {
        std::uint32_t node = 0;
        std::uint32_t kind = 0;
        std::uint8_t pass = 0;
    };
    using Pair = std::array<double, 2>;
    using Key = std::tuple<Pair, Pair, Pair, Pair, Pair, Pair, Pair, Pair, std::uint8_t, bool, bool>;
    static Key key_of(const Item& it) {
        return {it.macs, it.vector_flops, it.elements, it.gradients, it.m, it.n, it.k, it.count, it.pass, it.gemm,
                it.conv};
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

    static void set(std::array<double, 2>& field, std::int64_t slope, std::int64_t intercept) {
        field = {static_cast<double>(slope), static_cast<double>(intercept)};
    }
    void grow_slope(const AffineCost& a) {
        const PassCost& s = a.per_instance;
        for (std::int64_t v : {s.macs.value(), s.vector_flops.value(), s.weight_elements_read,
                               s.activation_elements_read, s.activation_elements_written, s.gradient_elements_written})
            max_slope_ += static_cast<double>(v);
    }
    static std::size_t lp_slowest(const LayerPrediction& lp) {
        std::size_t best = 0;
        for (std::size_t i = 1; i < 3; ++i)
            if (lp.pass[i].value() > lp.pass[best].value()) best = i;
        return best;
    }

    /// Tile utilization of the item's GEMM at batch b: ideal time over the time of the better tiling, each
    /// tiling's time = waves × tile work / tile efficiency, with split-K when there are fewer tiles than SMs.
    /// A tiling's constants, with reciprocals so that the hot loop multiplies instead of dividing.
    struct Tiling {
        double tm, tn, inv_tm, inv_tn, inv_efficiency;
    };
    struct Tilings {
        Tiling large, small;
        double sms, inv_sms, split_k_min, inv_split_k_min;
    };
    static Tilings tilings(const EfficiencyProfile& p, double sms) {
        const auto t = [](double tm, double tn, double e) { return Tiling{tm, tn, 1.0 / tm, 1.0 / tn, 1.0 / e}; };
        return {t(p.large_tile_m, p.large_tile_n, 1.0), t(p.small_tile_m, p.small_tile_n, p.small_tile_efficiency), sms,
                1.0 / sms, static_cast<double>(p.split_k_min), 1.0 / p.split_k_min};
    }

    /// Wave-quantization slowdown (>= 1) of the item's GEMM at batch b: the time of the better tiling over the
    /// ideal time (all SMs busy, no tile padded).
    static double quantization(const Item& it, double b, const Tilings& t) {
        const double m = it.m[0] * b + it.m[1];
        const double n = it.n[0] * b + it.n[1];
        const double k = it.k[0] * b + it.k[1];
        const double count = it.count[0] * b + it.count[1];
        if (m <= 0 || n <= 0 || k <= 0 || count <= 0) return 1.0;
        const double best = std::min(tiled(m, n, k, count, t.large, t), tiled(m, n, k, count, t.small, t));
        const double ideal = m * n * k * count * t.inv_sms;
        return std::max(1.0, best / ideal);
    }
    /// Time (in MAC units per SM) of a GEMM cut into tm x tn tiles: waves x tile work / efficiency.
    static double tiled(double m, double n, double k, double count, const Tiling& tile, const Tilings& t) {
        const double tiles = ceil_div(m, tile.tm, tile.inv_tm) * ceil_div(n, tile.tn, tile.inv_tn) * count;
        if (tiles >= t.sms)  // enough tiles for every SM: no split-K
            return ceil_div(tiles, t.sms, t.inv_sms) * tile.tm * tile.tn * k * tile.inv_efficiency;
        const double split = std::max(1.0, std::min(floor(t.sms / tiles), floor(k * t.inv_split_k_min)));
        const double k_per_split = split == 1 ? k : ceil(k / split);
        return ceil_div(tiles * split, t.sms, t.inv_sms) * tile.tm * tile.tn * k_per_split * tile.inv_efficiency;
    }
    /// ⌈x / d⌉ for integral x, d > 0, from a multiplication by 1/d corrected for rounding.
    static double ceil_div(double x, double d, double inv_d) {
        double q = ceil(x * inv_d);
        if ((q - 1) * d >= x) q -= 1;
        else if (q * d < x) q += 1;
        return q;
    }
    // Rounding for the non-negative values below 2^52 that GEMM extents are (a truncating conversion is one
    // instruction; std::ceil is a library call without SSE4.1).
    static double floor(double x) { return static_cast<double>(static_cast<std::int64_t>(x)); }
    static double ceil(double x) {
        const double t = floor(x);
        return t < x ? t + 1.0 : t;
    }

    [[nodiscard]] MemoryBreakdown memory(const PredictRequest& r, double params) const {
        MemoryBreakdown mb;
        const auto bytes = [](double v) { return units::bytes(static_cast<std::int64_t>(std::ceil(v))); };
        const double width = static_cast<double>(element_bytes(r.precision));
        const bool amp = r.precision == Precision::amp_fp16 || r.precision == Precision::amp_bf16;
        const double b = static_cast<double>(r.batch);
        if (r.mode == Mode::train) {
            mb.weights = bytes(params * (4.0 + (amp ? 2.0 : 0.0)));
            mb.gradients = bytes(params * 4.0);
            mb.optimizer_state = bytes(params * 4.0 * (r.optimizer == Optimizer::sgd ? 1.0 : 2.0));
            mb.activations_per_sample = bytes(static_cast<double>(saved_per_sample_) * width);
        } else {
            mb.weights = bytes(params * width);
            mb.activations_per_sample = bytes(static_cast<double>(working_per_sample_) * width);
        }
        mb.activations = bytes(static_cast<double>(mb.activations_per_sample.value()) * b);
        mb.reserved = r.reserved;
        return mb;
    }

    const Model* model_;
    std::vector<Item> kinds_;            ///< distinct items
    std::vector<double> multiplicity_;   ///< how often each distinct item occurs
    std::vector<Placed> items_;          ///< every item, in model order
    std::vector<std::string_view> type_names_;  ///< distinct layer type labels
    std::vector<std::uint16_t> node_type_;      ///< per node, its index in type_names_

    std::int64_t params_ = 0;
    std::int64_t param_tensors_ = 0;
    std::int64_t saved_per_sample_ = 0;
    std::int64_t working_per_sample_ = 0;
    double max_slope_ = 0;
    double safe_batch_ = 0;
};

/// One-shot prediction (compiles the model each call; keep a Predictor for sweeps).
inline Prediction predict(const Model& model, const Device& device, const PredictRequest& request,
                          const EfficiencyProfile& profile) {
    return Predictor(model)(device, profile, request);
}
inline Prediction predict(const Model& model, const Device& device, const PredictRequest& request) {
    return predict(model, device, request, default_profile(device));
}

}  // namespace roofplan
