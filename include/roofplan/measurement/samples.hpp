// roofplan/measurement/samples.hpp — what the micro-benchmarks and the end-to-end runs measured, as typed records.
//
// The measurement pipeline is   CUDA programs and PyTorch scripts ──► JSON reports ──► records (here) ──► calibration
// (fit, calibration/fit.hpp) and validation (compare, validation/compare.hpp).  The one reader that turns reports
// into records is io/reports.hpp; nothing after it sees JSON.  Every record keeps `where` it came from
// ("gemm_h200.json: .results[3]") so that a stage's errors name the file and the record.  Only verified records
// (checked against a reference before they were timed) become samples.
#pragma once

#include <roofplan/calibration/measured_conv.hpp>
#include <roofplan/calibration/measured_gemm.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/engine/predict.hpp>
#include <roofplan/precision.hpp>
#include <roofplan/system/collective_kind.hpp>
#include <roofplan/work.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan {

/// The precision a micro-benchmark kernel computes in, as its report names it (not the engine's modes: the
/// engine calls FP16 and BF16 training amp-fp16 and amp-bf16).
enum class KernelPrecision { fp32, tf32, fp16, bf16, int8 };

template <>
struct EnumNames<KernelPrecision> {
    static constexpr std::string_view field = "precision";
    static constexpr std::string_view what = "kernel precision";
    static constexpr std::array<std::string_view, 5> names{"fp32", "tf32", "fp16", "bf16", "int8"};
};
inline constexpr std::array<KernelPrecision, 5> all_kernel_precisions = enum_values<KernelPrecision>();

namespace detail {
// Indexed by KernelPrecision and Pass.
inline constexpr MathClass gemm_classes[] = {MathClass::fp32, MathClass::tf32_tensor, MathClass::fp16_tensor_fp32_acc,
                                             MathClass::bf16_tensor, MathClass::int8_tensor};
inline constexpr Precision training_precisions[] = {Precision::fp32, Precision::tf32, Precision::amp_fp16,
                                                    Precision::amp_bf16};
inline constexpr std::string_view cudnn_pass_names[] = {"forward", "bwd-data", "bwd-filter"};
}  // namespace detail

/// The math class a GEMM of this precision runs in (cuBLASLt's FP16 GEMMs accumulate in FP32).
constexpr MathClass gemm_math_class(KernelPrecision p) { return detail::gemm_classes[static_cast<std::size_t>(p)]; }

/// The engine's precision mode of a kernel that trains in this precision (FP16/BF16 kernels are what AMP runs);
/// INT8 has no training mode.
constexpr Precision training_precision(KernelPrecision p) {
    if (p == KernelPrecision::int8) detail::fail("INT8 kernels have no training precision");
    return detail::training_precisions[static_cast<std::size_t>(p)];
}

/// cuDNN's names of the three convolution passes, as roofplan-conv reports them ("bwd-data", "bwd-filter").
constexpr std::string_view conv_pass_name(Pass p) { return detail::cudnn_pass_names[static_cast<std::size_t>(p)]; }

/// One GEMM (roofplan-gemm, or the host suite's Eigen GEMM): `count` products of M×K by K×N.
struct GemmSample {
    std::string where;  ///< the record, for errors: "gemm_h200.json: .results[3]"
    KernelPrecision precision = KernelPrecision::fp32;
    double m = 0, n = 0, k = 0, count = 1;
    double bytes = 0;    ///< A, B and D in device memory
    double seconds = 0;  ///< median time of one launch
    std::string label;   ///< the shape's name ("bert.ffn.down"), empty for the square sweep
};

/// One streaming kernel (roofplan-bandwidth): copy, scale and triad, and the memcpy they are set against.
struct StreamSample {
    std::string where;
    std::string kernel;    ///< "copy", "scale", "triad", "memcpy_d2d"
    double bytes = 0;      ///< read plus written per iteration
    double seconds = 0;    ///< median time of one iteration
    double gb_per_s = 0;   ///< the rate the program reports
    /// Whether the engine models this kernel (the streaming kernels; memcpy is only a reference).
    [[nodiscard]] bool modelled() const { return kernel == "copy" || kernel == "scale" || kernel == "triad"; }
};

/// One pass of one convolution through cuDNN (roofplan-conv).
struct ConvSample {
    std::string where;
    std::string label;   ///< the zoo layer the shape comes from ("resnet50.b256.layer1.0.conv2")
    Pass pass = Pass::forward;
    KernelPrecision precision = KernelPrecision::fp32;
    std::string layout;  ///< "nhwc" or "nchw"
    std::int64_t n = 0, c = 0, h = 0, w = 0;  ///< batch, input channels, input height and width
    std::int64_t k = 0, r = 0, s = 0;         ///< output channels, filter height and width
    std::int64_t stride = 1, pad = 0, dilation = 1;
    double seconds = 0;
    double tflops = 0;   ///< the rate the program reports (its own MAC count)
};

/// One collective (roofplan-nccl) over `ranks` GPUs.
struct CollectiveSample {
    std::string where;
    Collective op = Collective::allreduce;
    int ranks = 0;
    std::int64_t bytes = 0;  ///< the message size S as nccl-tests counts it
    double seconds = 0;
    double busbw_gb_s = 0;
};

/// One DP4A measurement (roofplan-dp4a): the instruction's issue rate, or the program's own INT8 GEMM.
struct Dp4aSample {
    std::string where;
    std::string test;  ///< "issue-rate" or "gemm"
    double m = 0, n = 0, k = 0;  ///< the GEMM's shape (0 for the issue rate)
    double seconds = 0;
    double tops = 0;
};

/// One end-to-end training run (roofplan-e2e, validation/e2e/train_throughput.py).
struct E2eSample {
    std::string where;
    std::string case_name;  ///< "resnet50", "bert-qa"
    int gpus = 1;           ///< more than 1: a data-parallel run
    std::int64_t batch = 0;
    Precision precision = Precision::fp32;
    Optimizer optimizer = Optimizer::sgd;
    std::int64_t seq = 0;         ///< sequence length (0: not given)
    std::int64_t image_size = 0;  ///< image side (0: not given)
    double samples_per_s = 0;
};

/// The records of one or several reports.  `sources` names each report they came from
/// ("gemm_h200.json (roofplan-gemm, 2026-11-21T10:02:11Z)").
/// One timed framework operator case (validation/ops/op_bench.py, report roofplan-ops).
struct OperatorSample {
    std::string op, pass, dtype, layout, backend;
    double bytes = 0;    ///< nominal: inputs read once, outputs written once
    double numel = 0;    ///< elements (optimizers: parameters)
    double kernels = 1;  ///< launches per call
    double seconds = 0;  ///< median per call, calls back to back
    double flops = 0;
    std::vector<double> shape;  ///< GEMMs: M, N, K; attention: batch, heads, sequence, head dimension
    /// The profiler's time per call in the kernels of the case's own class (attention: the fused kernel alone,
    /// without the workspace fill and the backward's pre- and post-processing kernels); 0 when not recorded.
    double class_seconds = 0;
    bool back_to_back = true;   ///< timed among other calls (not alone between two events)
    /// The GPU that ran the case when it is not the profile's (a second GPU's cases inform the kernel classes'
    /// SM-side rate): its datasheet bandwidth (bytes/s) and SM cycles a second (SMs x boost clock); 0: the profile's.
    double bandwidth_b_s = 0, sm_cycles_s = 0;
};
/// One host-dispatch case: wall time per call of a tiny operator.
struct HostSample {
    std::string name;
    double seconds = 0;
    double kernels = 0;  ///< kernels per call
};

/// One convolution pass timed on its own through the framework (validation/ops/conv_bench.py, roofplan-conv-shapes):
/// the GPU time of the pass's own kernels, without TF32's layout conversions, which the eager runtime lowers into
/// kernels of their own.
struct ConvShapeSample {
    std::string where;
    ConvGeometry geometry;
    Precision precision = Precision::fp32;  ///< fp32, tf32, amp-bf16 or amp-fp16: the mode the shape ran in
    Pass pass = Pass::forward;
    std::int64_t batch = 0;
    double seconds = 0;
    double conversion_seconds = 0;  ///< TF32 on NCHW tensors: the pass's layout conversions (0: none measured)
    double kernels = 0;  ///< kernels per call, TF32's conversions excepted (0: not recorded)
};

/// One linear-layer pass timed on its own through the framework (validation/ops/gemm_bench.py,
/// roofplan-gemm-shapes): the GPU time of every kernel cuBLAS launched for it.
struct GemmShapeSample {
    std::string where;
    GemmGeometry geometry;
    Precision precision = Precision::fp32;  ///< fp32, tf32, amp-bf16 or amp-fp16: the mode the product ran in
    Pass pass = Pass::forward;
    std::int64_t rows = 0;  ///< the product's rows (tokens)
    double seconds = 0;
    double kernels = 0;  ///< kernels per call (0: not recorded)
};

/// The host's speed state of op_bench.py's interleaved rounds (block_host, host_speed): a round is in the fast state
/// when both of its view-op probes read under fast_probe_factor times the probe floor.  The device hosts switch
/// between two speeds (the slow one ~2x on the probe: validation/results/2026-11-24-h200-host-speed); the host
/// costs are the fast state's, as the other host cases measured them.
inline constexpr double fast_probe_factor = 1.4;
/// The probe floor: the 5th percentile of the rounds' slower probe (non-empty).
inline double probe_floor(std::vector<double> slower_probes) {
    const auto at = slower_probes.begin() + static_cast<std::ptrdiff_t>(slower_probes.size() / 20);
    std::nth_element(slower_probes.begin(), at, slower_probes.end());
    return *at;
}

/// One round of op_bench.py's `host_speed` group: the view-op probe before and after, and each host case's wall
/// time per operation in between (the host switches between a fast and a slow state within seconds).
struct HostSpeedRound {
    std::string source;  ///< the report's file: rounds are fitted per report (one host, one lease)
    std::array<double, 2> probe_s{};
    std::vector<std::pair<std::string, double>> per_op_s;  ///< case name, seconds per operation
};

/// nn.DataParallel's host side on one GPU (op_bench.py `dp_host`): the median host time of `replicas` replicas of a
/// model, either replicate's Python (its broadcast left out) or the replicas' training forwards on one thread each
/// (parallel_apply; one replica runs inline); or a Python thread started and joined (`thread`, no model).
struct DataParallelHostSample {
    enum class Part { replicate, forward, thread };
    Part part = Part::replicate;
    std::string model;      ///< with the precision for the forwards ("resnet50 amp-bf16")
    double modules = 0;     ///< replicate: the model's modules
    double tensors = 0;     ///< replicate: its parameters and buffers
    int replicas = 1;
    double seconds = 0;
};

struct Measurements {
    std::vector<GemmSample> gemm;
    std::vector<StreamSample> streams;
    std::vector<ConvSample> conv;
    std::vector<CollectiveSample> collectives;
    std::vector<Dp4aSample> dp4a;
    std::vector<E2eSample> e2e;
    std::vector<OperatorSample> operators;  ///< kernel-class curves and misaligned GEMMs
    std::vector<HostSample> host;           ///< host dispatch costs
    std::vector<double> kernel_gaps;        ///< the GPU's gap between back-to-back kernels, seconds (per chain)
    std::vector<double> graph_kernel_gaps;  ///< the same between a replayed CUDA graph's kernels
    std::vector<HostSpeedRound> host_speed;  ///< host cases interleaved with a probe of the host's speed
    std::vector<ConvShapeSample> conv_shapes;  ///< convolutions measured shape by shape
    std::vector<GemmShapeSample> gemm_shapes;  ///< linear layers' GEMMs measured shape by shape
    std::vector<DataParallelHostSample> data_parallel_host;  ///< nn.DataParallel's replicate and threads
    std::vector<std::string> sources;
};

/// Appends `more` to `into`, keeping the order of both.
inline void append(Measurements& into, const Measurements& more) {
    const auto add = [](auto& to, const auto& from) { to.insert(to.end(), from.begin(), from.end()); };
    add(into.gemm, more.gemm);
    add(into.streams, more.streams);
    add(into.conv, more.conv);
    add(into.collectives, more.collectives);
    add(into.dp4a, more.dp4a);
    add(into.e2e, more.e2e);
    add(into.operators, more.operators);
    add(into.host, more.host);
    add(into.kernel_gaps, more.kernel_gaps);
    add(into.graph_kernel_gaps, more.graph_kernel_gaps);
    add(into.host_speed, more.host_speed);
    add(into.conv_shapes, more.conv_shapes);
    add(into.gemm_shapes, more.gemm_shapes);
    add(into.data_parallel_host, more.data_parallel_host);
    add(into.sources, more.sources);
}

}  // namespace roofplan
