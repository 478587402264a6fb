// roofplan/calibration/profile.hpp — what calibration fits and prediction reads: how much of a datasheet peak real
// kernels reach (EfficiencyProfile) and what collectives reach of the links (LinkParameters).
//
// The roofline alone is an upper bound.  Real kernels reach a fraction of the peak (instruction overheads,
// imperfect pipelining, clocks below boost under load), lose more when a GEMM's tiles do not fill the SMs evenly
// (wave quantization), and pay a floor per kernel launch.  These fractions are explicit parameters: defaults per
// architecture generation (below, with their reasoning in docs/model.md), replaced by a profile that
// calibration (calibration/fit.hpp) fits to micro-benchmarks (GEMM, convolution, bandwidth, NCCL) — never to
// end-to-end results.  Both are plain data: the core predicts with them and needs nothing else.
#pragma once

#include <roofplan/calibration/measured_conv.hpp>
#include <roofplan/calibration/measured_conv_h200.hpp>
#include <roofplan/calibration/measured_gemm.hpp>
#include <roofplan/calibration/measured_gemm_h200.hpp>
#include <roofplan/detail/checked.hpp>
#include <roofplan/detail/enum_array.hpp>
#include <roofplan/detail/fixed_string.hpp>
#include <roofplan/device/catalog.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/runtime/kernel.hpp>
#include <roofplan/system/collective_kind.hpp>
#include <roofplan/system/topology.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <utility>
#include <string_view>

namespace roofplan {

/// How fast a memory-bound kernel class runs:
///     t = fixed_s + bytes / (bandwidth · memory) + elements / (SMs · clock · sm_elements_per_cycle)
/// where `elements` are the elements the kernel reads and writes (its bytes over Kernel::element_bytes).  The
/// operator micro-benchmarks fit them; small kernels never reach the bandwidth, which the fixed cost expresses.
/// The SM-side term is the work a kernel's streaming multiprocessors do beside the memory traffic (address
/// arithmetic, non-vectorized loads, reductions across threads, FP32 math), and it goes by the element, not the
/// byte: a layer norm or a KV-cache concatenation takes nearly the same time in FP32 as in bf16 (twice the bytes)
/// and on an H100 as on an H200 (same SMs and clock, 30% less bandwidth), a vectorized add twice the time and
/// 1.43x.  Cases of one dtype on one GPU cannot separate the two terms (both scale with the bytes); cases of two
/// dtypes, or of two GPUs with other bandwidth-to-SM ratios, can (`roofplan calibrate`).  0: no SM-side term
/// (the class follows the bandwidth alone).
struct KernelClassCost {
    double memory = 0;    ///< fraction of datasheet bandwidth at large sizes; 0: unset (the profile's `memory`)
    double fixed_s = -1;  ///< GPU time of an empty kernel of the class; < 0: unset (the profile's `launch_s`)
    double sm_elements_per_cycle = 0;  ///< elements per SM per clock cycle of the SM-side term; 0: none

    /// Seconds a byte of the class's memory side takes on a GPU of `bandwidth` bytes/s (at `memory`, or
    /// `default_memory` when unset).
    [[nodiscard]] constexpr double memory_seconds_per_byte(double bandwidth, double default_memory) const {
        return 1.0 / (bandwidth * (memory > 0 ? memory : default_memory));
    }
    /// Seconds an element of the SM side takes on a GPU of `sm_cycles` SM cycles a second (Device::sm_cycles_per_s).
    [[nodiscard]] constexpr double sm_seconds_per_element(double sm_cycles) const {
        return sm_elements_per_cycle > 0 && sm_cycles > 0 ? 1.0 / (sm_cycles * sm_elements_per_cycle) : 0.0;
    }
    /// Seconds a byte takes at large sizes with `element_bytes` bytes an element: both sides.
    [[nodiscard]] constexpr double seconds_per_byte(double bandwidth, double sm_cycles, double default_memory,
                                                    double element_bytes) const {
        return memory_seconds_per_byte(bandwidth, default_memory) +
               (element_bytes > 0 ? sm_seconds_per_element(sm_cycles) / element_bytes : 0.0);
    }
    /// The class's large-size rate on `d` as a fraction of its bandwidth (both sides), for elements of
    /// `element_bytes` bytes.
    [[nodiscard]] constexpr double streamed_fraction(const Device& d, double default_memory, double element_bytes) const {
        const double bandwidth = d.bandwidth_gb_s * 1e9;
        return 1.0 / (bandwidth * seconds_per_byte(bandwidth, d.sm_cycles_per_s(), default_memory, element_bytes));
    }
};

/// Fused scaled-dot-product attention kernels (flash / cuDNN / memory-efficient) as fractions of the math
/// class's peak (tensor-core kernels) or of the FP32 peak (`simt_*`: the memory-efficient kernel that FP32
/// inputs get), per pass.  They reach far less than a GEMM of the same FLOPs: the softmax's exponentials and
/// rescaling sit between the two products (head dimension 64 leaves the tensor cores waiting on them).
/// Defaults: `roofplan calibrate` on validation/results/2026-11-23-h200-ops/ops_h200.json (op_bench's sdpa
/// cases: BF16/FP16/FP32, sequence 128 to 1,024, no mask and causal).
struct AttentionEfficiency {
    double forward = 0.61;
    double backward = 0.44;
    double simt_forward = 0.53;
    double simt_backward = 0.56;
    /// With dropout on the attention probabilities (the kernel draws its mask: Philox per score, the backward
    /// draws it again), the same four; 0 in a profile file: as without dropout.  Defaults: `roofplan calibrate`
    /// on validation/results/2026-11-24-h200-sdpa-dropout/ops_sdpa_dropout_h200.json (op_bench's sdpa_dropout
    /// cases: p = 0.1, the shapes above; the kernels take 1.5-2.4x (bf16/fp16) and 1.2-1.3x (fp32) as long).
    double dropout_forward = 0.20;
    double dropout_backward = 0.25;
    double dropout_simt_forward = 0.39;
    double dropout_simt_backward = 0.47;
};

/// What the host CPU spends issuing work (seconds), a property of the host and the framework, not the GPU.
/// Defaults: PyTorch 2.11 on the 16-vCPU Xeon (family 6 model 207, KVM guest) of the H200 machine, fitted by
/// `roofplan calibrate` from validation/results/2026-11-23-h200-ops/ops_inner_h200.json (op_bench host cases);
/// the same figures moved by up to 40% on a second machine of that kind.  cudaLaunchKernel's own cost is not
/// separable there and stays a prior (2.5 us).
struct HostCosts {
    double module_s = 18.4e-6;        ///< an nn.Module call recorded by autograd (its operator included)
    double internal_s = 7.5e-6;       ///< an operator dispatched inside another (autocast casts, bias adds)
    double backward_s = 23.8e-6;      ///< an autograd node run by the backward engine, per kernel it launches
    double optimizer_s = 15.9e-6;     ///< a foreach optimizer operation called from Python
    double per_tensor_s = 2.5e-6;     ///< the optimizer's Python bookkeeping per parameter tensor (SGD foreach)
    double adam_per_tensor_s = 11.5e-6; ///< the same for AdamW foreach (state and step-count handling)
    double launch_s = 2.5e-6;         ///< cudaLaunchKernel, for every kernel issued from the host (prior)
    double graph_s = 10e-6;           ///< launching a captured CUDA graph from an inference engine (prior)
    /// torch.compile with CUDA graphs (mode "reduce-overhead"; op_bench.py `compiled_host`: chains of 8 and 32
    /// Linear+GELU blocks, 17 and 65 kernels a replay, inference; H200 lease 2026-11-25, validation/results/
    /// 2026-11-25-h200-generated): calling the compiled graph (guards, the cudagraph tree's checks, the replay's
    /// launch) and the host's share per kernel in a graph.  An earlier lease the same hour gave 82 us and 0.42 us.
    double compiled_graph_call_s = 103.8e-6;
    double graph_node_s = 0.157e-6;
    double sync_s = 10e-6;            ///< a host-device synchronisation (end of step, a scaler check; prior)
    double view_s = 1.16e-6;          ///< a Python view op that launches nothing (view, transpose, reshape)
    double container_s = 7.5e-6;      ///< an nn.Module call's own overhead (a container module around others)
    double silent_node_s = 12.3e-6;   ///< an autograd node that launches nothing (the backward of a view or an add)
    /// nn.BatchNorm2d in training, its launches excluded: the module call (the batch count, the Python around
    /// F.batch_norm, the backend's checks and descriptors) and its autograd node.  Measured on an H100 lease's
    /// host (validation/results/2026-11-23-h100-host: chains of 50 tiny modules; mean of NCHW FP32, 67.6 and
    /// 91.5 us, and channels-last under autocast, 47.0 and 80.5 us); the generic costs gave 31 and 26 us.
    double batch_norm_forward_s = 57.3e-6;
    double batch_norm_backward_s = 86.0e-6;
    /// Autocast (validation/ops/op_bench.py `autocast_host`: a conv and a linear with and without autocast, the
    /// region entered around each call as a step does, interleaved rounds; H200 lease, 2026-11-23): a cast it
    /// inserts costs more than a generic internal op (its cache, `aten::to` → `_to_copy` → `empty` + `copy_`), and
    /// its wrapper costs a little per operator it dispatches.  Solved from the two pairs (one cast; three casts).
    double cast_s = 9.8e-6;           ///< an autocast cast, its launch excluded
    double autocast_s = 3.6e-6;       ///< autocast's wrapper around a matrix operator (casts excluded)
    /// torch.compile without CUDA graphs (op_bench.py `compiled_host`: chains of 8 and 32 Linear+GELU blocks,
    /// compiled in the default mode; H200 lease, 2026-11-23): Inductor's Python wrapper launches every kernel.
    double compiled_call_s = 78e-6;            ///< calling a compiled graph (guards, the wrapper's entry)
    double compiled_kernel_s = 11.0e-6;        ///< per kernel of a compiled forward, its launch excluded (a second
                                               ///< lease gave 6.3: host costs move between leases, see docs)
    double compiled_backward_kernel_s = 38.8e-6; ///< per kernel of a compiled backward (its autograd node's
                                                 ///< share and AccumulateGrad nodes included), launch excluded
    /// GradScaler in amp-fp16 training (op_bench.py `scaler_host`: the foreach SGD and AdamW step alone and with
    /// `scaler.step(opt); scaler.update()` in interleaved rounds at 16, 64 and 256 tensors; H200 lease,
    /// 2026-11-24, three runs pooled, validation/results/2026-11-24-h200-scaler-interleaved; `roofplan calibrate`'s
    /// fit): its Python per parameter tensor (unscale_'s loop grouping the gradients), and per step what it costs
    /// beyond its two foreach operations and the found_inf read (the found_inf tensors, the scale's bookkeeping).
    double scaler_per_tensor_s = 1.24e-6;
    double scaler_s = 118e-6;
    /// A transformer block's own Python between its operators (Hugging Face's BertLayer and GPT2Block: attribute
    /// lookups, shape arithmetic, argument checks, calls that launch nothing), beyond what the per-operator costs
    /// above charge for its operators, views and containers: charged once per block, on its attention kernel.
    /// Measured (op_bench.py `block_host`: tiny BERT layers and GPT-2 blocks, 1 and 4 layers, host time only, in
    /// the host's fast state; validation/results/2026-11-24-h200-block-host) as the per-layer slope less the
    /// model's own charges for the same block (`roofplan calibrate`'s fit_block_host), the mean of BERT's and
    /// GPT-2's: in inference, the further share under autocast, and the further share when autograd records.
    double block_python_s = 99.9e-6;
    double block_autocast_s = 103.0e-6;
    double block_autograd_s = 122.5e-6;
    /// nn.DataParallel's host side (op_bench.py `dp_host`; system/parallel.hpp): replicate's Python each step — a
    /// cost per call and per module once (its lists, its walk over the modules), and per module and per tensor
    /// (parameter or buffer) for every replica (the copies, the tensors set on each) — and parallel_apply's thread
    /// per replica (a Python thread started and joined).  `roofplan calibrate`'s fit of the dev VM's CPU run (2 vCPUs,
    /// torch 1.13, no GPU: replicate's Python and a bare thread; median error 12%, worst 43%;
    /// validation/results/2026-12-07-devvm-dp-host).  An H200 lease's host (validation/results/2026-12-07-h200-dp-host,
    /// PyTorch 2.11) agrees with the replicate figures in its fast state (its fastest rounds: median 13%) and runs
    /// about 2x slower in its slow state (its medians); its threaded forwards, all on one GPU, are not fitted.
    double dp_replicate_call_s = 144.7e-6;
    double dp_replicate_module_once_s = 3.69e-6;
    double dp_replicate_module_s = 20.72e-6;
    double dp_replicate_tensor_s = 0.277e-6;
    double dp_thread_s = 165.9e-6;
    /// The share of a replica's forward dispatch during which its thread holds the interpreter lock, hand-overs
    /// included: N replicas' forwards each take max(1, N x share) times one forward's host time (above 1: the
    /// hand-overs cost more than the lock's own work).  Prior 1 (the forwards serialised: PyTorch's operators
    /// release the lock only around their C++).  The H200 host's meta-device threads took 1.2-2.0x the serialised
    /// forwards (2-8 threads), so the prior is optimistic; not fitted (the meta device's dispatch is not CUDA's).
    double dp_lock_share = 1.0;
    /// Where AdamW's per-tensor Python (adam_per_tensor_s) falls: the share paid before each of its eight foreach
    /// operations (weight decay, first moment, second moment scale, second moment add, square root, bias
    /// correction, epsilon, update; they sum to 1).  The first carries the grouping and the CPU step counts, the
    /// square root the bias corrections (a .item() a step count) and `_foreach_sqrt`'s new tensors, each one its
    /// own call's walk over its tensor lists, the update also the temporaries freed after it.  op_bench.py
    /// `adam_split_host` on an H100 lease's host (the same Xeon model as the H200's, PyTorch 2.11;
    /// validation/results/2026-12-07-h100-adam-split), two runs pooled by `roofplan calibrate`
    /// (calibration/operators.hpp, fit_adam_split_host); the runs alone agree within 0.03.  A ratio of Python
    /// costs: it does not follow the host's speed.
    std::array<double, 8> adam_op_shares{0.388, 0.034, 0.021, 0.048, 0.303, 0.047, 0.020, 0.139};

    /// replicate's Python for `replicas` replicas of a model of `modules` modules and `tensors` tensors.
    [[nodiscard]] double dp_replicate_s(double modules, double tensors, int replicas) const {
        return dp_replicate_call_s + modules * dp_replicate_module_once_s +
               replicas * (modules * dp_replicate_module_s + tensors * dp_replicate_tensor_s);
    }
    /// How many times as long each of `replicas` threaded forwards takes to dispatch as one forward alone.
    [[nodiscard]] double dp_forward_scale(int replicas) const { return std::max(1.0, replicas * dp_lock_share); }

    /// How each class of cost moves with the host's speed (HostSpeedClass; at_host_speed): a cost of class c on a
    /// host whose Python view op takes s times the profile's `view_s` costs 1 + k_c (s - 1) times as much.  The
    /// device hosts switch between two speeds (~2x on the view op); op_bench.py's `host_speed` rounds measured each
    /// class's slow/fast ratio against the view op's (validation/results/2026-11-24-h200-host-speed, run 1, as
    /// `roofplan calibrate` fits it, calibration/operators.hpp fit_speed_sensitivity: Python-called operators
    /// 0.447, the autograd engine and launches 0.144, the optimizers' Python loops 0.670, the view op 1; run 2:
    /// 0.534, 0.148, 0.753).  A transformer block's own Python moved like the operators (0.32-0.77 across the
    /// block_host modes, ../2026-11-24-h200-block-host).
    std::array<double, 4> speed_sensitivity{0.447, 0.144, 0.670, 1.0};
    FixedString<63> source{"default (PyTorch 2.11 on the H200 host, 2026-11-23)"};

    [[nodiscard]] bool operator==(const HostCosts&) const = default;
};

/// Which side of the host a cost is spent on, as far as the host's speed goes (HostCosts::speed_sensitivity).
enum class HostSpeedClass : std::uint8_t {
    python,     ///< operators called from Python (the dispatcher behind them included), a block's own Python
    cpp,        ///< the autograd engine's nodes, launches, synchronisations, graph replays
    optimizer,  ///< the optimizers' and GradScaler's Python loops over the parameters
    view,       ///< the Python view op itself (the probe)
};
template <>
struct EnumNames<HostSpeedClass> {
    static constexpr std::string_view field = "speed_sensitivity";
    static constexpr std::string_view what = "host speed class";
    static constexpr std::array<std::string_view, 4> names{"python", "cpp", "optimizer", "view"};
};

/// One host cost: its name in profile files, its member, its speed class.
struct HostCostField {
    std::string_view name;
    double HostCosts::*member;
    HostSpeedClass speed;
};

/// Every host cost by its name in profile files: the JSON reader, the writer, the validation and the host-speed
/// scaling walk this one table (a new cost is one line here).
inline constexpr std::array<HostCostField, 31> host_cost_fields{{
    {"module_s", &HostCosts::module_s, HostSpeedClass::python},
    {"internal_s", &HostCosts::internal_s, HostSpeedClass::python},
    {"backward_s", &HostCosts::backward_s, HostSpeedClass::cpp},
    {"optimizer_s", &HostCosts::optimizer_s, HostSpeedClass::optimizer},
    {"per_tensor_s", &HostCosts::per_tensor_s, HostSpeedClass::optimizer},
    {"adam_per_tensor_s", &HostCosts::adam_per_tensor_s, HostSpeedClass::optimizer},
    {"launch_s", &HostCosts::launch_s, HostSpeedClass::cpp},
    {"graph_s", &HostCosts::graph_s, HostSpeedClass::cpp},
    {"graph_node_s", &HostCosts::graph_node_s, HostSpeedClass::cpp},
    {"sync_s", &HostCosts::sync_s, HostSpeedClass::cpp},
    {"view_s", &HostCosts::view_s, HostSpeedClass::view},
    {"container_s", &HostCosts::container_s, HostSpeedClass::python},
    {"silent_node_s", &HostCosts::silent_node_s, HostSpeedClass::cpp},
    {"batch_norm_forward_s", &HostCosts::batch_norm_forward_s, HostSpeedClass::python},
    {"batch_norm_backward_s", &HostCosts::batch_norm_backward_s, HostSpeedClass::cpp},
    {"cast_s", &HostCosts::cast_s, HostSpeedClass::python},
    {"autocast_s", &HostCosts::autocast_s, HostSpeedClass::python},
    {"compiled_call_s", &HostCosts::compiled_call_s, HostSpeedClass::python},
    {"compiled_graph_call_s", &HostCosts::compiled_graph_call_s, HostSpeedClass::python},
    {"compiled_kernel_s", &HostCosts::compiled_kernel_s, HostSpeedClass::python},
    {"compiled_backward_kernel_s", &HostCosts::compiled_backward_kernel_s, HostSpeedClass::cpp},
    {"scaler_per_tensor_s", &HostCosts::scaler_per_tensor_s, HostSpeedClass::optimizer},
    {"scaler_s", &HostCosts::scaler_s, HostSpeedClass::optimizer},
    {"block_python_s", &HostCosts::block_python_s, HostSpeedClass::python},
    {"block_autocast_s", &HostCosts::block_autocast_s, HostSpeedClass::python},
    {"block_autograd_s", &HostCosts::block_autograd_s, HostSpeedClass::python},
    {"dp_replicate_call_s", &HostCosts::dp_replicate_call_s, HostSpeedClass::python},
    {"dp_replicate_module_once_s", &HostCosts::dp_replicate_module_once_s, HostSpeedClass::python},
    {"dp_replicate_module_s", &HostCosts::dp_replicate_module_s, HostSpeedClass::python},
    {"dp_replicate_tensor_s", &HostCosts::dp_replicate_tensor_s, HostSpeedClass::python},
    {"dp_thread_s", &HostCosts::dp_thread_s, HostSpeedClass::cpp},
}};

/// The limits of a host speed (the host's view-op probe over the profile's `view_s`): the device hosts ran 1-2.3.
inline constexpr double min_host_speed = 0.25, max_host_speed = 8;

/// The host costs of a host `speed` times as slow as the one that measured `h` (its Python view op over `view_s`):
/// each cost times 1 + k (speed - 1), k its class's sensitivity.
inline HostCosts at_host_speed(const HostCosts& h, double speed) {
    static_assert(min_host_speed == 0.25 && max_host_speed == 8, "the message below names the limits");
    if (!(speed >= min_host_speed && speed <= max_host_speed))
        detail::fail("host speed must be a number in [0.25, 8] (the host's Python view op over the profile's view_s)");
    HostCosts out = h;
    for (const HostCostField& f : host_cost_fields)
        out.*f.member = h.*f.member * (1 + h.speed_sensitivity[static_cast<std::size_t>(f.speed)] * (speed - 1));
    return out;
}

/// Efficiency parameters of one device.  Fractions are of the datasheet peak (compute) or bandwidth (memory).
struct EfficiencyProfile {
    FixedString<127> source;  ///< "default (hopper generation)" or where a calibrated profile came from

    /// Fraction of peak that a large, well-shaped GEMM reaches in each math class (indexed by MathClass).
    std::array<double, 8> gemm{};
    /// Convolutions (cuDNN) relative to the implicit GEMM of the same shape at the class's GEMM efficiency:
    /// below 1 where cuDNN's kernels do worse than cuBLAS, above 1 where its algorithm does fewer operations
    /// than the direct count (Winograd, FFT) or its kernels do better.  At most 8.
    double conv = 0.9;
    /// Per math class (indexed by MathClass) when calibrated; 0 means "use `conv`".
    std::array<double, 8> conv_by_class{};
    /// Convolutions measured shape by shape (calibration/measured_conv.hpp): where a step's convolution is in the
    /// table, its measured efficiency replaces the factor above.
    MeasuredConvs measured_conv{};
    FixedString<127> measured_conv_source;  ///< the report the table was fitted to ("" when empty)
    /// Linear-layer GEMMs measured shape by shape (calibration/measured_gemm.hpp): where a step's linear layer is
    /// in the table, its measured efficiency and kernels per call replace the GEMM model.
    MeasuredGemms measured_gemm{};
    FixedString<127> measured_gemm_source;  ///< the report the table was fitted to ("" when empty)
    /// Elementwise arithmetic (bias, activations, normalisation, softmax) as a fraction of the FP32 peak.
    double vector = 0.5;
    /// Fraction of datasheet bandwidth that streaming kernels reach (STREAM copy/triad class).
    double memory = 0.85;
    /// Seconds added per kernel: launch gap and framework dispatch on the GPU timeline.
    double launch_s = 4e-6;
    /// The GPU's gap between two back-to-back kernels of a stream (the next kernel's start less the previous
    /// one's end, as a profiler records them): inside every kernel time fitted from event-timed benchmarks, but
    /// idle to a profiler, so the timeline reports it as idle, not busy.  Measured: op_bench.py `kernel_gap`
    /// (chains of 200 operators queued behind a spin kernel: add, layer norm, GEMM, GEMM+add; medians 0.96-1.03
    /// us, H200, validation/results/2026-11-24-h200-block-host); a prior of the same size for other devices.
    double kernel_gap_s = 1.0e-6;
    /// The same gap between the kernels of a replayed CUDA graph (op_bench.py `kernel_gap`'s chains captured in one
    /// graph: medians 0.06-0.35 us, 0.29 us over the chains, against 1.09 us in a stream the same run; H200,
    /// validation/results/2026-11-25-h200-generated): a graph's kernels run that much closer than event-timed
    /// kernel times (which hold `kernel_gap_s`) say.
    double graph_kernel_gap_s = 0.29e-6;
    /// Tile shapes a GEMM library picks between (output tile M × N per thread block, one block per SM per wave):
    /// the large tile at full efficiency, the small one at `small_tile_efficiency` of it.
    int large_tile_m = 128;
    int large_tile_n = 128;
    int small_tile_m = 64;
    int small_tile_n = 64;
    double small_tile_efficiency = 0.7;
    /// Minimum K per split when a GEMM with few output tiles is split along K (split-K), as cuBLAS does.
    int split_k_min = 512;
    /// Board power under load in watts (0: use the datasheet TDP).
    double power_w = 0;
    /// Tensor-core GEMMs with a dimension that is not a multiple of 8 elements run cuBLAS's fallback kernels at
    /// this fraction of the aligned rate: even dimensions (16-bit vectors) and odd ones (scalar loads).
    double unaligned_even = 0.35;
    double unaligned_odd = 0.17;
    /// Memory-bound kernel classes of the kernel-level runtimes.
    EnumArray<KernelClass, KernelClassCost> kernel_class{};
    /// Fused attention kernels of the kernel-level runtimes.
    AttentionEfficiency attention{};
    /// Host dispatch costs of the kernel-level runtimes.
    HostCosts host{};
    /// Where the kernel-class curves came from ("default (...)" or the operator micro-benchmarks' file).
    FixedString<127> kernel_class_source{"default (H200 and H100 operator benchmarks: bandwidth fractions, SM-side rates)"};

    /// Whether the kernel-class curves were fitted (or read from a profile that carries them).
    [[nodiscard]] constexpr bool kernel_classes_calibrated() const {
        return !kernel_class_source.view().starts_with("default");
    }

    [[nodiscard]] constexpr double gemm_efficiency(MathClass m) const { return gemm[static_cast<std::size_t>(m)]; }
    /// The convolution factor of a math class: its calibrated value, else `conv`.
    [[nodiscard]] constexpr double conv_factor(MathClass m) const {
        const double c = conv_by_class[static_cast<std::size_t>(m)];
        return c > 0 ? c : conv;
    }
};

/// Checks that a profile's fractions are in (0, 1], tiles positive, times non-negative; `where` names the origin.
constexpr void validate(const EfficiencyProfile& p, std::string_view where = "profile") {
    const auto fraction = [&](double v, std::string_view field) {
        if (!(v > 0 && v <= 1.0)) detail::fail(where, ": ", field, " must be a fraction in (0, 1]");
    };
    for (MathClass m : all_math_classes) fraction(p.gemm_efficiency(m), detail::cat("gemm.", to_string(m)));
    if (!(p.conv > 0 && p.conv <= 8.0)) detail::fail(where, ": conv must be a factor in (0, 8]");
    for (MathClass m : all_math_classes) {
        const double c = p.conv_by_class[static_cast<std::size_t>(m)];
        if (!(c == 0 || (c > 0 && c <= 8.0)))
            detail::fail(where, ": conv_by_class.", to_string(m), " must be 0 (unset) or a factor in (0, 8]");
    }
    fraction(p.vector, "vector");
    fraction(p.memory, "memory");
    fraction(p.small_tile_efficiency, "small_tile_efficiency");
    fraction(p.unaligned_even, "unaligned_even");
    fraction(p.unaligned_odd, "unaligned_odd");
    fraction(p.attention.forward, "attention.forward");
    fraction(p.attention.backward, "attention.backward");
    fraction(p.attention.simt_forward, "attention.simt_forward");
    fraction(p.attention.simt_backward, "attention.simt_backward");
    for (auto [value, name] : {std::pair{p.attention.dropout_forward, "attention.dropout_forward"},
                               std::pair{p.attention.dropout_backward, "attention.dropout_backward"},
                               std::pair{p.attention.dropout_simt_forward, "attention.dropout_simt_forward"},
                               std::pair{p.attention.dropout_simt_backward, "attention.dropout_simt_backward"}})
        if (value != 0) fraction(value, name);  // 0: as without dropout
    if (!(p.launch_s >= 0 && p.launch_s < 1)) detail::fail(where, ": launch_s must be in [0, 1) seconds");
    if (!(p.kernel_gap_s >= 0 && p.kernel_gap_s < 1e-4)) detail::fail(where, ": kernel_gap_s must be in [0, 1e-4) seconds");
    if (!(p.graph_kernel_gap_s >= 0 && p.graph_kernel_gap_s < 1e-4))
        detail::fail(where, ": graph_kernel_gap_s must be in [0, 1e-4) seconds (above kernel_gap_s it is taken as kernel_gap_s)");
    if (p.large_tile_m < 1 || p.large_tile_n < 1 || p.small_tile_m < 1 || p.small_tile_n < 1 ||
        p.large_tile_m > 4096 || p.large_tile_n > 4096 || p.small_tile_m > 4096 || p.small_tile_n > 4096)
        detail::fail(where, ": tile sizes must be in [1, 4096]");
    if (p.split_k_min < 1) detail::fail(where, ": split_k_min must be >= 1");
    if (!(p.power_w >= 0 && p.power_w < 1e5)) detail::fail(where, ": power_w must be >= 0 (0 = use TDP)");
    for (KernelClass c : all_kernel_classes) {
        const KernelClassCost& k = p.kernel_class[c];
        if (!(k.memory == 0 || (k.memory > 0 && k.memory <= 1.0)))
            detail::fail(where, ": kernel_class.", to_string(c), ".memory must be 0 (unset) or a fraction in (0, 1]");
        if (!(k.fixed_s < 1e-3) || (k.fixed_s < 0 && k.fixed_s != -1))
            detail::fail(where, ": kernel_class.", to_string(c), ".fixed_s must be in [0, 1e-3) seconds (or -1: unset)");
        if (!(k.sm_elements_per_cycle == 0 || (k.sm_elements_per_cycle >= 0.01 && k.sm_elements_per_cycle <= 1e4)))
            detail::fail(where, ": kernel_class.", to_string(c),
                         ".sm_elements_per_cycle must be 0 (no SM-side term) or in [0.01, 1e4] elements per SM per cycle");
    }
    for (const HostCostField& f : host_cost_fields)
        if (const double v = p.host.*f.member; !(v >= 0 && v < 1e-2))
            detail::fail(where, ": host.", f.name, " must be in [0, 0.01) seconds");
    for (HostSpeedClass c : enum_values<HostSpeedClass>())
        if (const double k = p.host.speed_sensitivity[static_cast<std::size_t>(c)]; !(k >= 0 && k <= 1))
            detail::fail(where, ": host.speed_sensitivity.", to_string(c), " must be in [0, 1]");
    if (!(p.host.dp_lock_share >= 0 && p.host.dp_lock_share <= 8))
        detail::fail(where, ": host.dp_lock_share must be a number in [0, 8] (N replicas' forwards take max(1, N x share) "
                     "times one forward's host time)");
    double shares = 0;
    for (double x : p.host.adam_op_shares) {
        if (!(x >= 0 && x <= 1))
            detail::fail(where, ": host.adam_op_shares: each must be a number in [0, 1] (the share of AdamW's per-tensor "
                         "Python before each of its 8 foreach operations)");
        shares += x;
    }
    if (!(std::abs(shares - 1) <= 1e-3))
        detail::fail(where, ": host.adam_op_shares must sum to 1 (the shares of AdamW's per-tensor Python before each "
                     "of its 8 foreach operations)");
}

/// The default profile of a device's architecture generation.
///
/// Sources of the priors (micro-benchmark figures, not end-to-end results): large cuBLAS SGEMM reaches ~90% of
/// FP32 peak on Volta/Ampere, less on Kepler (~75%); large tensor-core HGEMM reaches ~75-80% of the dense peak on
/// Volta/Turing/Ampere and ~70% on Hopper (its peak needs warp-group MMA pipelines that few kernels keep full);
/// TF32 sits a little lower than FP16; INT8 tensor GEMMs ~70%; DP4A GEMMs ~80% of the DP4A issue rate.  STREAM
/// copy reaches ~88% of HBM bandwidth (our own H100 and H200 runs: 2960/3350 and 4146/4800 GB/s) and ~85% of GDDR.
/// Calibration (calibration/fit.hpp) replaces all of these with fitted values.
/// The built-in tables' lookup indexes (calibration/measured_conv.hpp, MeasuredIndex), computed by the compiler.
inline constexpr auto measured_conv_h200_groups =
    detail::groups_of<detail::group_count(measured_conv_h200_data)>(measured_conv_h200_data);
inline constexpr auto measured_conv_h200_samples =
    detail::samples_of<measured_conv_h200_data.size()>(measured_conv_h200_data);
inline constexpr auto measured_gemm_h200_groups =
    detail::groups_of<detail::group_count(measured_gemm_h200_data)>(measured_gemm_h200_data);
inline constexpr auto measured_gemm_h200_samples =
    detail::samples_of<measured_gemm_h200_data.size()>(measured_gemm_h200_data);
inline constexpr auto measured_conv_h200_slots =
    detail::slots_of<detail::slot_count(measured_conv_h200_groups.size())>(measured_conv_h200_groups);
inline constexpr auto measured_gemm_h200_slots =
    detail::slots_of<detail::slot_count(measured_gemm_h200_groups.size())>(measured_gemm_h200_groups);

namespace detail {

/// The memory-bound kernel classes of the default profile (the execution model's curves).
constexpr void default_kernel_classes(EfficiencyProfile& p, const Device& d) {
    // Memory-bound kernel classes from the operator benchmarks of an H200 and an H100 (validation/results/
    // 2026-11-23-h200-ops, 2026-11-25-h200-reduce, 2026-11-25-h200-copy with 2026-11-23-h100-e2e/ops_inner_h100.json
    // and 2026-11-25-h100-reduce-copy-cast; the H200's bandwidth report sets the copy fraction 0.877, which no
    // class that reads and writes may pass), fitted together by `roofplan calibrate` (docs/validation.md, "Two
    // GPUs: the SM side of streaming kernels"): a fraction of the GPU's own bandwidth and, where the two GPUs'
    // times differ by less than their bandwidths (same 132 SMs at 1,980 MHz, 4.8 against 3.35 TB/s), an SM-side
    // rate in elements per SM per cycle that scales with the GPU's SMs and clock (the operator cases in FP32 and bf16
    // separate the two sides on one GPU too: the SM side goes by the element).  Assumed to hold on other
    // generations; the fixed costs are Hopper's, older generations keep their launch floor.
    const auto set_class = [&](KernelClass c, double memory, double fixed_s, double sm_elements_per_cycle = 0) {
        // No class that reads and writes streams faster than the generation's copy kernel (`memory`, set first).
        p.kernel_class[c] = {c == KernelClass::memset || memory == 0 ? memory : std::min(memory, p.memory),
                             d.architecture == Architecture::hopper ? fixed_s : -1.0, sm_elements_per_cycle};
    };
    set_class(KernelClass::elementwise, 0.877, 2.9e-6, 272);
    // PyTorch's reduce kernel (op_bench's reduce: bias gradients as column sums, ResNet's global average pool): far
    // below the elementwise rate.
    set_class(KernelClass::reduction, 0.531, 6.0e-6, 28.4);
    // cuDNN's channels-last batch norm (amp-fp16), layer norm forward and backward, PyTorch's native batch norm
    // (bf16) and cuDNN's NCHW one (FP32/TF32): 1.0-1.4x the H200's time on the H100 and about the same time in FP32
    // as in bf16 (layer norm), so much of it their SMs' work an element beside the memory.
    set_class(KernelClass::normalization, 0.618, 4.1e-6, 19.7);
    set_class(KernelClass::layer_norm, 0.877, 3.5e-6, 4.87);
    set_class(KernelClass::layer_norm_backward, 0.877, 2.8e-6, 4.48);  // input gradient, then weight and bias
    set_class(KernelClass::batch_norm, 0.877, 4.7e-6, 3.52);
    set_class(KernelClass::batch_norm_backward, 0.877, 3.8e-6, 12.4);
    set_class(KernelClass::batch_norm_nchw, 0.877, 5.4e-6, 2.04);
    set_class(KernelClass::softmax, 0.877, 2.6e-6, 9.73);
    // Casts: down to fp16/bf16 vectorized (the bandwidth alone), up to FP32 PyTorch's unrolled copy kernel (about
    // the H200's time on an H100); layout copies (heads made contiguous, the KV-cache cat, a channels-last flatten)
    // non-vectorized, their time set by their elements (median error 18%: the three differ by up to 3.7x an
    // element); a last-axis concatenation streams, with an SM side of its own.
    set_class(KernelClass::copy_cast, 0.877, 2.8e-6);
    set_class(KernelClass::widening_cast, 0.877, 4.4e-6, 7.12);
    set_class(KernelClass::layout_copy, 0.877, 3.8e-6, 3.61);
    set_class(KernelClass::concat, 0.298, 2.7e-6, 26.4);
    set_class(KernelClass::optimizer, 0.877, 6.7e-6, 41.9);
    set_class(KernelClass::memset, 1.0, 2.2e-6, 73.8);  // a fill writes only: no copy-fraction bound
    set_class(KernelClass::gather, 0.877, 1.7e-6);
    set_class(KernelClass::loss, 0.760, 3.7e-6, 12.2);
    set_class(KernelClass::attention, 0.0, 2.9e-6);  // the elementwise kernel's fixed cost (not separable)
    // Max pooling (validation/results/2026-11-23-h200-pool: ResNet, AlexNet and VGG shapes, batch 4 to 256):
    // NCHW FP32 forward, channels-last bf16 forward, and the backward's scatter (after its fill) in either layout.
    set_class(KernelClass::pooling, 0.435, 6.4e-6);
    set_class(KernelClass::pooling_nhwc, 0.281, 18.9e-6);
    set_class(KernelClass::pooling_backward, 0.146, 14.3e-6);
    // Batch norm in eval mode on PyTorch's native kernels (bf16 channels-last; validation/results/
    // 2026-11-24-h200-bn-infer, op_bench's bn_infer: ResNet shapes, batch 1 to 256, three kernels a call): the
    // transform streams faster than the training class's kernels (0.36), which also compute the statistics.
    set_class(KernelClass::batch_norm_inference, 0.461, 3.2e-6);
    // The compiled runtime's generated kernels (validation/results/2026-11-25-h200-generated, op_bench's generated:
    // torch.compile'd chains timed alone, bf16): pointwise (batch norm in eval mode + residual + ReLU on ResNet's
    // maps, erf GELU on [rows, 3072]) and reducing (residual add + layer norm over 768, GELU backward with its bias
    // sum).  Median errors 12% and 24%.
    set_class(KernelClass::generated, 0.661, 2.6e-6);
    set_class(KernelClass::generated_reduction, 0.694, 3.4e-6);
}

/// The default profile's GEMM efficiencies per math class, launch floor and measured tables, by generation.
constexpr void default_generation(EfficiencyProfile& p, const Device& d) {
    const auto set = [&](MathClass m, double v) { p.gemm[static_cast<std::size_t>(m)] = v; };
    switch (d.architecture) {
        case Architecture::kepler:
            set(MathClass::fp32, 0.75);
            set(MathClass::fp64, 0.8);
            p.memory = 0.75;
            p.launch_s = 6e-6;
            break;
        case Architecture::maxwell:
            set(MathClass::fp32, 0.85);
            p.launch_s = 5e-6;
            break;
        case Architecture::pascal:
            set(MathClass::fp32, 0.85);
            set(MathClass::int8_dp4a, 0.8);
            p.launch_s = 5e-6;
            break;
        case Architecture::volta:
            set(MathClass::fp32, 0.9);
            set(MathClass::fp16_tensor_fp16_acc, 0.78);
            set(MathClass::fp16_tensor_fp32_acc, 0.75);
            set(MathClass::int8_dp4a, 0.8);
            break;
        case Architecture::turing:
            set(MathClass::fp32, 0.85);
            set(MathClass::fp16_tensor_fp16_acc, 0.75);
            set(MathClass::fp16_tensor_fp32_acc, 0.75);
            set(MathClass::int8_tensor, 0.7);
            set(MathClass::int8_dp4a, 0.8);
            break;
        case Architecture::ampere:
            set(MathClass::fp32, 0.9);
            set(MathClass::tf32_tensor, 0.7);
            set(MathClass::fp16_tensor_fp16_acc, 0.8);
            set(MathClass::fp16_tensor_fp32_acc, 0.8);
            set(MathClass::bf16_tensor, 0.8);
            set(MathClass::int8_tensor, 0.75);
            set(MathClass::int8_dp4a, 0.8);
            break;
        case Architecture::hopper:
            set(MathClass::fp32, 0.85);
            set(MathClass::tf32_tensor, 0.65);
            set(MathClass::fp16_tensor_fp16_acc, 0.7);
            set(MathClass::fp16_tensor_fp32_acc, 0.7);
            set(MathClass::bf16_tensor, 0.7);
            set(MathClass::int8_tensor, 0.65);
            set(MathClass::int8_dp4a, 0.8);
            p.large_tile_n = 256;  // Hopper GEMMs favour 128x256 tiles
            // The zoo CNNs' convolutions measured shape by shape on an H200, as fractions of each pass's roofline
            // (calibration/measured_conv.hpp): what cuDNN 9 runs on sm_90, by the GPU's own peaks.
            // Both tables were measured on an H200: a prediction for another Hopper GPU moves each pass by its bound
            // (engine/roofline.hpp).
            const MeasuredOn h200 = MeasuredOn::of(*find_builtin_device("h200"));
            p.measured_conv = {measured_conv_h200_data, h200, {measured_conv_h200_groups, measured_conv_h200_samples, measured_conv_h200_slots}};
            p.measured_conv_source = FixedString<127>(measured_conv_h200_source);
            // The suite's transformers' linear layers measured shape by shape on an H200 through PyTorch
            // (calibration/measured_gemm.hpp): what cuBLAS 13 runs on sm_90, kernels per call included.
            p.measured_gemm = {measured_gemm_h200_data, h200, {measured_gemm_h200_groups, measured_gemm_h200_samples, measured_gemm_h200_slots}};
            p.measured_gemm_source = FixedString<127>(measured_gemm_h200_source);
            break;
    }
}

}  // namespace detail

constexpr EfficiencyProfile default_profile(const Device& d) {
    EfficiencyProfile p;
    p.source = FixedString<127>("default (").append(to_string(d.architecture)).append(" generation)");
    for (MathClass m : all_math_classes) p.gemm[static_cast<std::size_t>(m)] = 0.75;  // classes it lacks are unused
    const bool hbm = d.memory_type.view().starts_with("HBM");
    p.memory = hbm ? 0.88 : 0.85;
    detail::default_generation(p, d);
    detail::default_kernel_classes(p, d);  // after the generation's copy fraction, which bounds the classes'
    return p;
}

/// Per-step latency and protocol efficiency of each link kind: documented defaults until the NCCL
/// micro-benchmarks of the validation suite calibrate them.  Latency: the time a ring or tree step costs beyond
/// its bytes (kernel hand-off, flag polling, for the network the NIC/TCP round trip).  Efficiency: the fraction of
/// the link bandwidth NCCL's Simple protocol reaches on large messages (nccl-tests bus bandwidth over link rate).
/// `base_s` is the fixed cost of one collective (launch and the ranks' synchronisation), 5 µs by default.
struct LinkParameters {
    static constexpr std::size_t kinds = std::size(all_link_kinds);
    static constexpr std::size_t collectives = std::size(all_collectives);
    EnumArray<LinkKind, double> latency_s{{1.0e-6, 1.0e-6, 2.5e-6, 3.0e-6, 10.0e-6}};
    EnumArray<LinkKind, double> efficiency{{0.85, 0.80, 0.80, 0.80, 0.90}};
    double base_s = 5.0e-6;
    /// Per-collective bandwidth factor, 1 by default; calibration sets them where NCCL reaches different fractions
    /// per collective.
    EnumArray<Collective, double> collective_factor{{1, 1, 1, 1, 1}};
    /// The factor per collective and rank count (2..kMaxRankFactor) where calibration measured that count; 0 means
    /// unset (then collective_factor applies).  NCCL's rings reach different fractions of the links at different
    /// rank counts (reduce-scatter and all-gather on H200: relatively faster on 4 GPUs than on 2).
    static constexpr int kMaxRankFactor = 16;
    using ByRanks = std::array<double, kMaxRankFactor + 1>;
    EnumArray<Collective, ByRanks> rank_factor{};

    /// The bandwidth factor of collective `op` over `ranks` ranks.
    [[nodiscard]] constexpr double factor(Collective op, int ranks) const {
        if (ranks >= 2 && ranks <= kMaxRankFactor && rank_factor[op][static_cast<std::size_t>(ranks)] > 0)
            return rank_factor[op][static_cast<std::size_t>(ranks)];
        return collective_factor[op];
    }
    [[nodiscard]] constexpr double latency(LinkKind k) const { return latency_s[k]; }
    [[nodiscard]] constexpr double eff(LinkKind k) const { return efficiency[k]; }
};

}  // namespace roofplan
