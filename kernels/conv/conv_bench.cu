// kernels/conv/conv_bench.cu — roofplan-conv: 2-D convolution throughput through cuDNN 9.
//
// Method.  Each case is one convolution shape (n c h w k r s stride pad dilation, groups 1, cross-correlation as
// in every framework), one precision, one memory layout and one pass:
//
//   pass         computes                                   cuDNN call
//   forward      y  = conv(x, w)                            cudnnConvolutionForward
//   bwd-data     dx = conv_transpose(dy, w)                 cudnnConvolutionBackwardData
//   bwd-filter   dw = sum over n, p, q of dy (x) x           cudnnConvolutionBackwardFilter
//
//   precision  tensors  compute (accumulate)  math type              what the hardware does
//   fp32       fp32     fp32                  CUDNN_FMA_MATH         FP32 FMA only (no TF32)
//   tf32       fp32     fp32                  CUDNN_TENSOR_OP_MATH   tensor cores on TF32-rounded inputs allowed
//   fp16       fp16     fp32                  CUDNN_TENSOR_OP_MATH   FP16 tensor cores, FP32 accumulate
//   bf16       bf16     fp32                  CUDNN_TENSOR_OP_MATH   BF16 tensor cores, FP32 accumulate
//
// Layouts: nchw (filter KCRS) and nhwc (filter KRSC), fully packed.  The algorithm is cuDNN's choice: with
// --algo find (the default; PyTorch's cudnn.benchmark) the fastest of cudnnFind*AlgorithmEx's timed answers that
// succeeded, with --algo heuristic the first of cudnnGet*Algorithm_v7's answers that fits the workspace; the
// workspace limit is --workspace-mib (default 1024).  The chosen algorithm, its math type (tensor cores or not)
// and its workspace are reported.  A (shape, precision, layout, pass) for which cuDNN offers no algorithm is
// reported as skipped with cuDNN's status.
//
// Correctness comes before timing, for every case.  Inputs are fresh random values defined per LOGICAL element
// (n, c, h, w): value(seed, tensor, logical index) = +-(1 + f) 2^-e with e in 1..4 and f a random fraction with as
// many bits as the tensor format holds (23 for fp32/tf32, 10 for fp16, 7 for bf16): never zero, exact in the
// format, the same in both layouts.  The GPU generates them (no host copies of large tensors) and the host
// regenerates any element it needs with the same function.  The output is poisoned (all-ones bytes: NaN in every
// format) before the checked run; after it a GPU scan must find no poison and nothing non-finite, and --samples
// random output elements (fewer for bwd-filter, whose elements sum up to n p q products; at least 16) plus the
// first and last are compared with sums in double on the host (several threads): each must satisfy
//   |d - ref| <= bound * sum_i |a_i b_i|
//   fp32   (T + 2) 2^-24 + 2^-17       T = the products summed; 2^-17 leaves room for Winograd and FFT algorithms
//   tf32   2^-9 + (T + 2) 2^-22
//   fp16   2^-8 + (T + 2) 2^-22        fp16 output rounding, and transform-based algorithms' fp16 intermediates
//   bf16   2^-6 + (T + 2) 2^-22
// and the checked elements together ||d - ref||_2 / ||ref||_2 <= max(limit, T u) with limit fp32 5e-5 (below what
// TF32 gives, so a TF32 algorithm cannot pass as fp32 while T < 800), tf32 4e-3, fp16 4e-3, bf16 3e-2, and u = 2^-24
// for fp32, 2^-22 otherwise: the FFT algorithms' error grows with T (seen: 5e-3 for fp32 backward-filter with
// T = 186,624 on an H200), which a test relative to ||ref|| must allow.  The algorithm's math type as cuDNN reports
// it is recorded beside each result.  A failed check names the case, the
// element and both values, and exits with status 1.
//
// Timing.  Consecutive runs must not find their inputs in L2: each case allocates S copies of its two inputs,
// (S - 1)(|in1| + |in2|) >= 2 x L2 (at most 64, as memory allows), and run r reads copy r mod S.  The case first
// runs back to back for --warmup-ms (default 25 ms); then a lead kernel spins on the GPU while the host queues
// --warmup (default 3) and --repeats (default 15) runs with a CUDA event between consecutive runs; each repeat
// is the time between two events (host_kept_ahead = false flags a host slower than the lead kernel).  Median, min
// and max are reported; TFLOPS = 2 n k p q c r s / median / 1e12 (the MACs of the pass; all three are equal).
//
// Output: progress on stderr, a JSON report (provenance, configuration, one record per case, the skipped cases) in
// --json PATH, rewritten after every case so that an interrupted sweep keeps what it measured, or on stdout.
// Exit status: 0 success, 1 verification failed, 2 bad command line, 3 CUDA/cuDNN/I-O error, 77 no CUDA device.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "../common/report.hpp"

namespace {

using namespace roofplan::bench;

constexpr const char* kProgram = "roofplan-conv";
constexpr const char* kVersion = "0.1.0";  // roofplan's version (include/roofplan/version.hpp); keep in step
constexpr int kExitVerifyFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCudaError = 3;
constexpr int kExitNoDevice = 77;
constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr int kMaxInputSets = 64;

// ---- Error checking ----------------------------------------------------------------------------------

[[noreturn]] void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: CUDA error: %s: %s (%s)\n", file, line, call, cudaGetErrorString(err),
                 cudaGetErrorName(err));
    std::exit(kExitCudaError);
}
[[noreturn]] void cudnn_fail(cudnnStatus_t st, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: cuDNN error: %s: %s\n", file, line, call, cudnnGetErrorString(st));
    std::exit(kExitCudaError);
}
#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        const cudaError_t roofplan_err_ = (call);                                        \
        if (roofplan_err_ != cudaSuccess) cuda_fail(roofplan_err_, #call, __FILE__, __LINE__); \
    } while (0)
#define CUDNN_CHECK(call)                                                                \
    do {                                                                                 \
        const cudnnStatus_t roofplan_st_ = (call);                                       \
        if (roofplan_st_ != CUDNN_STATUS_SUCCESS) cudnn_fail(roofplan_st_, #call, __FILE__, __LINE__); \
    } while (0)
#define CUDA_CHECK_LAUNCH(name)                                                          \
    do {                                                                                 \
        const cudaError_t roofplan_err_ = cudaGetLastError();                            \
        if (roofplan_err_ != cudaSuccess) cuda_fail(roofplan_err_, "launch of " name, __FILE__, __LINE__); \
    } while (0)

// ---- Values defined per logical element -----------------------------------------------------------------

enum class Fmt { f32, f16, bf16 };

__host__ __device__ inline std::uint64_t mix64(std::uint64_t z) {  // SplitMix64's finaliser
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// +-(1 + f) 2^-e, e in 1..4, f with `bits` fraction bits: exact in the format, in [-1, 1), never small.
__host__ __device__ inline float logical_value(std::uint64_t seed, std::uint64_t index, int bits) {
    const std::uint64_t r = mix64(seed + 0x9E3779B97F4A7C15ull * (index + 1));
    const int e = 1 + int(r & 3u);
    const std::uint32_t frac = std::uint32_t(r >> 8) & ((1u << bits) - 1u);
    const float mag = (1.0f + float(frac) / float(1u << bits)) / float(1u << e);
    return (r >> 4) & 1u ? -mag : mag;
}

int fraction_bits(Fmt f) { return f == Fmt::f32 ? 23 : f == Fmt::f16 ? 10 : 7; }
std::size_t element_bytes(Fmt f) { return f == Fmt::f32 ? 4 : 2; }

// A 4-D tensor's logical extents (n, c, h, w) and its layout: memory index <-> logical index (NCHW order).
struct Dims4 {
    std::int64_t n = 0, c = 0, h = 0, w = 0;
    bool nhwc = false;
    [[nodiscard]] std::int64_t count() const { return n * c * h * w; }
};

__host__ __device__ inline std::int64_t memory_index(std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w,
                                                      std::int64_t C, std::int64_t H, std::int64_t W, bool nhwc) {
    return nhwc ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w;
}

template <typename T>
__device__ inline T from_float(float v);
template <>
__device__ inline float from_float<float>(float v) { return v; }
template <>
__device__ inline __half from_float<__half>(float v) { return __float2half_rn(v); }
template <>
__device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float v) { return __float2bfloat16_rn(v); }

template <typename T>
__device__ inline float to_float(T v);
template <>
__device__ inline float to_float<float>(float v) { return v; }
template <>
__device__ inline float to_float<__half>(__half v) { return __half2float(v); }
template <>
__device__ inline float to_float<__nv_bfloat16>(__nv_bfloat16 v) { return __bfloat162float(v); }

// Writes value(seed, logical index) at every memory position of a tensor.
template <typename T>
__global__ void fill_kernel(T* out, std::int64_t count, std::int64_t C, std::int64_t H, std::int64_t W, bool nhwc,
                            std::uint64_t seed, int bits) {
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
         i += std::int64_t(gridDim.x) * blockDim.x) {
        std::int64_t logical = i;
        if (nhwc) {  // memory order n h w c -> logical n c h w
            const std::int64_t c = i % C, rest = i / C, w = rest % W, rest2 = rest / W, h = rest2 % H, n = rest2 / H;
            logical = ((n * C + c) * H + h) * W + w;
        }
        out[i] = from_float<T>(logical_value(seed, std::uint64_t(logical), bits));
    }
}

// Counts elements that are not finite (the poison is all-ones bytes: NaN in every format).
template <typename T>
__global__ void count_bad_kernel(const T* data, std::int64_t count, unsigned long long* bad) {
    unsigned long long local = 0;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
         i += std::int64_t(gridDim.x) * blockDim.x)
        if (!isfinite(to_float<T>(data[i]))) ++local;
    if (local) atomicAdd(bad, local);
}

template <typename T>
__global__ void gather_kernel(const T* data, const std::int64_t* where, int count, float* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) out[i] = to_float<T>(data[where[i]]);
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__global__ void lead_kernel(unsigned long long ns) {
    const unsigned long long start = global_timer_ns();
    while (global_timer_ns() - start < ns) {
    }
}

int grid_for(std::int64_t count) { return int(std::min<std::int64_t>((count + 255) / 256, 4096)); }

void fill(void* p, Fmt f, const Dims4& d, std::uint64_t seed, cudaStream_t s) {
    const int bits = fraction_bits(f);
    switch (f) {
        case Fmt::f32:
            fill_kernel<<<grid_for(d.count()), 256, 0, s>>>(static_cast<float*>(p), d.count(), d.c, d.h, d.w, d.nhwc,
                                                           seed, bits);
            break;
        case Fmt::f16:
            fill_kernel<<<grid_for(d.count()), 256, 0, s>>>(static_cast<__half*>(p), d.count(), d.c, d.h, d.w,
                                                           d.nhwc, seed, bits);
            break;
        case Fmt::bf16:
            fill_kernel<<<grid_for(d.count()), 256, 0, s>>>(static_cast<__nv_bfloat16*>(p), d.count(), d.c, d.h,
                                                           d.w, d.nhwc, seed, bits);
            break;
    }
    CUDA_CHECK_LAUNCH("fill_kernel");
}

unsigned long long count_bad(const void* p, Fmt f, std::int64_t count, unsigned long long* d_bad, cudaStream_t s) {
    CUDA_CHECK(cudaMemsetAsync(d_bad, 0, sizeof(unsigned long long), s));
    switch (f) {
        case Fmt::f32: count_bad_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<const float*>(p), count, d_bad); break;
        case Fmt::f16: count_bad_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<const __half*>(p), count, d_bad); break;
        case Fmt::bf16:
            count_bad_kernel<<<grid_for(count), 256, 0, s>>>(static_cast<const __nv_bfloat16*>(p), count, d_bad);
            break;
    }
    CUDA_CHECK_LAUNCH("count_bad_kernel");
    unsigned long long bad = 0;
    CUDA_CHECK(cudaMemcpyAsync(&bad, d_bad, sizeof bad, cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    return bad;
}

std::vector<float> gather(const void* p, Fmt f, const std::vector<std::int64_t>& where, cudaStream_t s) {
    const int count = int(where.size());
    std::int64_t* d_where = nullptr;
    float* d_out = nullptr;
    CUDA_CHECK(cudaMalloc(&d_where, where.size() * sizeof(std::int64_t)));
    CUDA_CHECK(cudaMalloc(&d_out, where.size() * sizeof(float)));
    CUDA_CHECK(cudaMemcpyAsync(d_where, where.data(), where.size() * sizeof(std::int64_t), cudaMemcpyHostToDevice, s));
    const int grid = (count + 255) / 256;
    switch (f) {
        case Fmt::f32: gather_kernel<<<grid, 256, 0, s>>>(static_cast<const float*>(p), d_where, count, d_out); break;
        case Fmt::f16: gather_kernel<<<grid, 256, 0, s>>>(static_cast<const __half*>(p), d_where, count, d_out); break;
        case Fmt::bf16:
            gather_kernel<<<grid, 256, 0, s>>>(static_cast<const __nv_bfloat16*>(p), d_where, count, d_out);
            break;
    }
    CUDA_CHECK_LAUNCH("gather_kernel");
    std::vector<float> out(where.size());
    CUDA_CHECK(cudaMemcpyAsync(out.data(), d_out, out.size() * sizeof(float), cudaMemcpyDeviceToHost, s));
    CUDA_CHECK(cudaStreamSynchronize(s));
    CUDA_CHECK(cudaFree(d_where));
    CUDA_CHECK(cudaFree(d_out));
    return out;
}

// ---- Cases ---------------------------------------------------------------------------------------------

enum class Prec { fp32, tf32, fp16, bf16 };
enum class Pass { forward, bwd_data, bwd_filter };

struct PrecSpec {
    Prec prec;
    const char* name;
    Fmt fmt;
    cudnnDataType_t data_type;
    cudnnMathType_t math;
    const char* math_name;
};
const PrecSpec kPrecs[] = {
    {Prec::fp32, "fp32", Fmt::f32, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, "CUDNN_FMA_MATH"},
    {Prec::tf32, "tf32", Fmt::f32, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, "CUDNN_TENSOR_OP_MATH"},
    {Prec::fp16, "fp16", Fmt::f16, CUDNN_DATA_HALF, CUDNN_TENSOR_OP_MATH, "CUDNN_TENSOR_OP_MATH"},
    {Prec::bf16, "bf16", Fmt::bf16, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_OP_MATH, "CUDNN_TENSOR_OP_MATH"},
};
const char* pass_name(Pass p) {
    return p == Pass::forward ? "forward" : p == Pass::bwd_data ? "bwd-data" : "bwd-filter";
}

double element_bound(Prec p, std::int64_t terms) {
    const double t = double(terms) + 2.0;
    switch (p) {
        case Prec::fp32: return t * std::ldexp(1.0, -24) + std::ldexp(1.0, -17);
        case Prec::tf32: return std::ldexp(1.0, -9) + t * std::ldexp(1.0, -22);
        case Prec::fp16: return std::ldexp(1.0, -8) + t * std::ldexp(1.0, -22);
        case Prec::bf16: return std::ldexp(1.0, -6) + t * std::ldexp(1.0, -22);
    }
    return 0;
}
double norm_limit(Prec p, std::int64_t terms) {
    const double linear = double(terms) * std::ldexp(1.0, p == Prec::fp32 ? -24 : -22);
    switch (p) {
        case Prec::fp32: return std::max(5e-5, linear);
        case Prec::tf32: return std::max(4e-3, linear);
        case Prec::fp16: return std::max(4e-3, linear);
        case Prec::bf16: return std::max(3e-2, linear);
    }
    return 0;
}

struct Shape {
    std::int64_t n, c, h, w, k, r, s, stride, pad, dilation;
    std::string label;
    [[nodiscard]] std::int64_t p() const { return (h + 2 * pad - dilation * (r - 1) - 1) / stride + 1; }
    [[nodiscard]] std::int64_t q() const { return (w + 2 * pad - dilation * (s - 1) - 1) / stride + 1; }
    [[nodiscard]] double macs() const { return double(n) * double(k) * double(p()) * double(q()) * double(c * r * s); }
};

struct Options {
    std::string shapes_file;
    std::vector<Prec> precisions{Prec::fp32, Prec::tf32, Prec::fp16, Prec::bf16};
    std::vector<bool> layouts{false, true};  // nhwc?
    std::vector<Pass> passes{Pass::forward, Pass::bwd_data, Pass::bwd_filter};
    bool find = true;
    std::int64_t workspace_mib = 1024;
    int warmup = 3, repeats = 15, warmup_ms = 25, samples = 512, device = 0;
    std::optional<std::uint64_t> seed;
    std::string json_path, filter;
    std::optional<std::string> git_sha;
};

struct Timing {
    double median_s = 0, min_s = 0, max_s = 0, lead_s = 0, host_enqueue_s = 0;
    bool host_kept_ahead = true;
    int warm_runs = 0;
};

struct Verify {
    int checked = 0;
    std::int64_t terms = 0;
    double max_rel_error = 0, rel_l2_error = 0, element_bound = 0, norm_limit = 0;
};

struct Record {
    const Shape* shape = nullptr;
    const PrecSpec* prec = nullptr;
    bool nhwc = false;
    Pass pass = Pass::forward;
    std::string skip_reason;
    int algo = -1;
    std::string algo_math;
    std::size_t workspace = 0;
    int algos_offered = 0;
    int input_sets = 1;
    Timing t;
    Verify v;
    double tflops = 0;
};

// ---- Command line ----------------------------------------------------------------------------------------

[[noreturn]] void usage_error(const std::string& what) {
    std::fprintf(stderr, "%s: %s\n(run %s --help for the options)\n", kProgram, what.c_str(), kProgram);
    std::exit(kExitUsage);
}

std::vector<std::string> split(std::string_view s, char sep) {
    std::vector<std::string> out;
    std::size_t start = 0;
    while (true) {
        const std::size_t pos = s.find(sep, start);
        out.emplace_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return out;
}

std::int64_t parse_int(std::string_view text, const char* what, std::int64_t lo, std::int64_t hi) {
    std::int64_t v = 0;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || ptr != text.data() + text.size() || v < lo || v > hi)
        usage_error(std::string(what) + " must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                    "], got '" + std::string(text) + "'");
    return v;
}

const char* kHelp =
    "roofplan-conv: 2-D convolution throughput through cuDNN (forward, backward-data, backward-filter)\n"
    "usage: roofplan-conv --shapes-file FILE [options]\n"
    "  --shapes-file FILE   lines 'n c h w k r s stride pad dilation label' ('#' comments), e.g.\n"
    "                       validation/shapes/zoo_conv.txt (tools: roofplan-zoo-conv-shapes)\n"
    "  --precision LIST     fp32,tf32,fp16,bf16 or all (default all)\n"
    "  --layout LIST        nchw,nhwc or all (default all)\n"
    "  --pass LIST          forward,bwd-data,bwd-filter or all (default all)\n"
    "  --filter TEXT        only shapes whose label contains TEXT\n"
    "  --algo find|heuristic  cudnnFind*AlgorithmEx (timed, default) or cudnnGet*Algorithm_v7\n"
    "  --workspace-mib N    workspace limit for the algorithm (default 1024)\n"
    "  --warmup N --repeats N --warmup-ms N   (defaults 3, 15, 25)\n"
    "  --samples N          output elements checked per case (default 512; bwd-filter fewer)\n"
    "  --seed N             input seed (default: the clock)\n"
    "  --device N           CUDA device (default 0)\n"
    "  --json PATH          write the report here (rewritten after each case); default stdout\n"
    "  --git-sha SHA        source revision to record (default: compile definition or $ROOFPLAN_GIT_SHA)\n";

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string_view a = argv[i];
        if (a == "--help" || a == "-h") {
            std::fputs(kHelp, stdout);
            std::exit(0);
        }
        if (i + 1 >= argc) usage_error("option " + std::string(a) + " needs a value (or is unknown)");
        const std::string_view v = argv[++i];
        if (a == "--shapes-file") o.shapes_file = v;
        else if (a == "--precision") {
            o.precisions.clear();
            for (const std::string& p : split(v, ',')) {
                if (p == "all") { o.precisions = {Prec::fp32, Prec::tf32, Prec::fp16, Prec::bf16}; continue; }
                bool ok = false;
                for (const PrecSpec& s : kPrecs)
                    if (p == s.name) o.precisions.push_back(s.prec), ok = true;
                if (!ok) usage_error("unknown precision '" + p + "'; accepted: fp32, tf32, fp16, bf16, all");
            }
        } else if (a == "--layout") {
            o.layouts.clear();
            for (const std::string& l : split(v, ',')) {
                if (l == "all") o.layouts = {false, true};
                else if (l == "nchw") o.layouts.push_back(false);
                else if (l == "nhwc") o.layouts.push_back(true);
                else usage_error("unknown layout '" + l + "'; accepted: nchw, nhwc, all");
            }
        } else if (a == "--pass") {
            o.passes.clear();
            for (const std::string& p : split(v, ',')) {
                if (p == "all") o.passes = {Pass::forward, Pass::bwd_data, Pass::bwd_filter};
                else if (p == "forward") o.passes.push_back(Pass::forward);
                else if (p == "bwd-data") o.passes.push_back(Pass::bwd_data);
                else if (p == "bwd-filter") o.passes.push_back(Pass::bwd_filter);
                else usage_error("unknown pass '" + p + "'; accepted: forward, bwd-data, bwd-filter, all");
            }
        } else if (a == "--filter") o.filter = v;
        else if (a == "--algo") {
            if (v == "find") o.find = true;
            else if (v == "heuristic") o.find = false;
            else usage_error("--algo must be find or heuristic, got '" + std::string(v) + "'");
        } else if (a == "--workspace-mib") o.workspace_mib = parse_int(v, "--workspace-mib", 0, 1 << 20);
        else if (a == "--warmup") o.warmup = int(parse_int(v, "--warmup", 0, 1000));
        else if (a == "--repeats") o.repeats = int(parse_int(v, "--repeats", 1, 10000));
        else if (a == "--warmup-ms") o.warmup_ms = int(parse_int(v, "--warmup-ms", 0, 60000));
        else if (a == "--samples") o.samples = int(parse_int(v, "--samples", 16, 1 << 20));
        else if (a == "--seed") o.seed = std::uint64_t(parse_int(v, "--seed", 0, std::numeric_limits<std::int64_t>::max()));
        else if (a == "--device") o.device = int(parse_int(v, "--device", 0, 1024));
        else if (a == "--json") o.json_path = v;
        else if (a == "--git-sha") o.git_sha = std::string(v);
        else usage_error("unknown option '" + std::string(a) + "'");
    }
    if (o.shapes_file.empty()) usage_error("--shapes-file FILE is required");
    if (o.precisions.empty() || o.layouts.empty() || o.passes.empty()) usage_error("an empty list was given");
    return o;
}

std::vector<Shape> read_shapes(const Options& o) {
    std::ifstream in(o.shapes_file);
    if (!in) usage_error("cannot open shapes file '" + o.shapes_file + "'");
    std::vector<Shape> shapes;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
        std::istringstream fields(line);
        std::vector<std::string> f;
        for (std::string t; fields >> t;) f.push_back(t);
        if (f.empty()) continue;
        const std::string where = o.shapes_file + ":" + std::to_string(number);
        if (f.size() != 11) usage_error(where + ": expected 'n c h w k r s stride pad dilation label', got " +
                                        std::to_string(f.size()) + " fields");
        Shape s{};
        std::int64_t* dst[] = {&s.n, &s.c, &s.h, &s.w, &s.k, &s.r, &s.s, &s.stride, &s.pad, &s.dilation};
        const char* names[] = {"n", "c", "h", "w", "k", "r", "s", "stride", "pad", "dilation"};
        for (int i = 0; i < 10; ++i)
            *dst[i] = parse_int(f[std::size_t(i)], (where + ": " + names[i]).c_str(), i == 8 ? 0 : 1, 1 << 20);
        s.label = f[10];
        if (s.p() < 1 || s.q() < 1) usage_error(where + ": the kernel does not fit the padded input");
        if (!o.filter.empty() && s.label.find(o.filter) == std::string::npos) continue;
        shapes.push_back(s);
    }
    if (shapes.empty()) usage_error("no shapes in '" + o.shapes_file + "'" + (o.filter.empty() ? "" : " match --filter"));
    return shapes;
}

// ---- Reference -------------------------------------------------------------------------------------------

// Seeds of the three logical tensors of a case.
struct Seeds {
    std::uint64_t x, w, dy;
};

struct Reference {
    double value = 0, abs_sum = 0;
};

// The exact (double) value of one output element at logical position (a, b, i, j) of the pass's output:
// forward y[n,k,p,q], bwd-data dx[n,c,h,w], bwd-filter dw[k,c,r,s].
Reference reference(const Shape& s, Pass pass, const Seeds& seeds, int bits, std::int64_t a, std::int64_t b,
                    std::int64_t i, std::int64_t j) {
    const std::int64_t P = s.p(), Q = s.q();
    auto x = [&](std::int64_t n, std::int64_t c, std::int64_t h, std::int64_t w) {
        return double(logical_value(seeds.x, std::uint64_t(((n * s.c + c) * s.h + h) * s.w + w), bits));
    };
    auto wt = [&](std::int64_t k, std::int64_t c, std::int64_t r, std::int64_t t) {
        return double(logical_value(seeds.w, std::uint64_t(((k * s.c + c) * s.r + r) * s.s + t), bits));
    };
    auto dy = [&](std::int64_t n, std::int64_t k, std::int64_t p, std::int64_t q) {
        return double(logical_value(seeds.dy, std::uint64_t(((n * s.k + k) * P + p) * Q + q), bits));
    };
    Reference ref;
    auto add = [&](double v) {
        ref.value += v;
        ref.abs_sum += std::fabs(v);
    };
    if (pass == Pass::forward) {  // (n, k, p, q)
        for (std::int64_t c = 0; c < s.c; ++c)
            for (std::int64_t r = 0; r < s.r; ++r) {
                const std::int64_t h = i * s.stride - s.pad + r * s.dilation;
                if (h < 0 || h >= s.h) continue;
                for (std::int64_t t = 0; t < s.s; ++t) {
                    const std::int64_t w = j * s.stride - s.pad + t * s.dilation;
                    if (w < 0 || w >= s.w) continue;
                    add(x(a, c, h, w) * wt(b, c, r, t));
                }
            }
    } else if (pass == Pass::bwd_data) {  // (n, c, h, w)
        for (std::int64_t k = 0; k < s.k; ++k)
            for (std::int64_t r = 0; r < s.r; ++r) {
                const std::int64_t ph = i + s.pad - r * s.dilation;
                if (ph < 0 || ph % s.stride != 0 || ph / s.stride >= P) continue;
                for (std::int64_t t = 0; t < s.s; ++t) {
                    const std::int64_t qw = j + s.pad - t * s.dilation;
                    if (qw < 0 || qw % s.stride != 0 || qw / s.stride >= Q) continue;
                    add(dy(a, k, ph / s.stride, qw / s.stride) * wt(k, b, r, t));
                }
            }
    } else {  // (k, c, r, s)
        for (std::int64_t n = 0; n < s.n; ++n)
            for (std::int64_t p = 0; p < P; ++p) {
                const std::int64_t h = p * s.stride - s.pad + i * s.dilation;
                if (h < 0 || h >= s.h) continue;
                for (std::int64_t q = 0; q < Q; ++q) {
                    const std::int64_t w = q * s.stride - s.pad + j * s.dilation;
                    if (w < 0 || w >= s.w) continue;
                    add(dy(n, a, p, q) * x(n, b, h, w));
                }
            }
    }
    return ref;
}

// ---- cuDNN plumbing --------------------------------------------------------------------------------------

struct Descriptors {
    cudnnTensorDescriptor_t x{}, y{};
    cudnnFilterDescriptor_t w{};
    cudnnConvolutionDescriptor_t conv{};
    Descriptors() {
        CUDNN_CHECK(cudnnCreateTensorDescriptor(&x));
        CUDNN_CHECK(cudnnCreateTensorDescriptor(&y));
        CUDNN_CHECK(cudnnCreateFilterDescriptor(&w));
        CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&conv));
    }
    ~Descriptors() {
        cudnnDestroyTensorDescriptor(x);
        cudnnDestroyTensorDescriptor(y);
        cudnnDestroyFilterDescriptor(w);
        cudnnDestroyConvolutionDescriptor(conv);
    }
    Descriptors(const Descriptors&) = delete;
    Descriptors& operator=(const Descriptors&) = delete;
};

void describe(Descriptors& d, const Shape& s, const PrecSpec& p, bool nhwc) {
    const cudnnTensorFormat_t fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.x, fmt, p.data_type, int(s.n), int(s.c), int(s.h), int(s.w)));
    CUDNN_CHECK(cudnnSetFilter4dDescriptor(d.w, p.data_type, fmt, int(s.k), int(s.c), int(s.r), int(s.s)));
    CUDNN_CHECK(cudnnSetConvolution2dDescriptor(d.conv, int(s.pad), int(s.pad), int(s.stride), int(s.stride),
                                                int(s.dilation), int(s.dilation), CUDNN_CROSS_CORRELATION,
                                                CUDNN_DATA_FLOAT));
    CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, p.math));
    int n = 0, c = 0, h = 0, w = 0;
    CUDNN_CHECK(cudnnGetConvolution2dForwardOutputDim(d.conv, d.x, d.w, &n, &c, &h, &w));
    if (n != s.n || c != s.k || h != s.p() || w != s.q()) {
        std::fprintf(stderr, "%s: cuDNN's output %dx%dx%dx%d differs from ours for %s\n", kProgram, n, c, h, w,
                     s.label.c_str());
        std::exit(kExitCudaError);
    }
    CUDNN_CHECK(cudnnSetTensor4dDescriptor(d.y, fmt, p.data_type, n, c, h, w));
}

const char* math_type_name(cudnnMathType_t m) {
    switch (m) {
        case CUDNN_DEFAULT_MATH: return "CUDNN_DEFAULT_MATH";
        case CUDNN_TENSOR_OP_MATH: return "CUDNN_TENSOR_OP_MATH";
        case CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION: return "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION";
        case CUDNN_FMA_MATH: return "CUDNN_FMA_MATH";
    }
    return "unknown";
}

struct Buffers {  // rotated input copies and the output of one case
    std::vector<void*> in1, in2;
    void* out = nullptr;
    void* workspace = nullptr;
};

struct Context {
    cudnnHandle_t handle{};
    cudaStream_t stream{};
    unsigned long long* d_bad = nullptr;
    std::uint64_t l2_bytes = 0;
};

// Chooses the algorithm (find or heuristic) and runs nothing else; returns false with a reason when none works.
struct Choice {
    bool ok = false;
    int algo = -1;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    std::size_t workspace = 0;
    int offered = 0;
    std::string reason;
};

template <typename Perf>
Choice pick(const Perf* perf, int returned, std::size_t limit) {
    Choice c;
    c.offered = returned;
    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    for (int i = 0; i < returned; ++i) {
        if (perf[i].status != CUDNN_STATUS_SUCCESS) {
            last = perf[i].status;
            continue;
        }
        if (perf[i].memory > limit) continue;
        c.ok = true;
        c.algo = int(perf[i].algo);
        c.math = perf[i].mathType;
        c.workspace = perf[i].memory;
        return c;
    }
    c.reason = std::string("no algorithm succeeded within the workspace limit (last status ") +
               cudnnGetErrorString(last) + ")";
    return c;
}

Choice choose(const Context& ctx, const Descriptors& d, Pass pass, const Buffers& b, std::size_t limit, bool find) {
    constexpr int kRequest = 16;
    int returned = 0;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (pass == Pass::forward) {
        cudnnConvolutionFwdAlgoPerf_t perf[kRequest];
        st = find ? cudnnFindConvolutionForwardAlgorithmEx(ctx.handle, d.x, b.in1[0], d.w, b.in2[0], d.conv, d.y, b.out,
                                                           kRequest, &returned, perf, b.workspace, limit)
                  : cudnnGetConvolutionForwardAlgorithm_v7(ctx.handle, d.x, d.w, d.conv, d.y, kRequest, &returned, perf);
        if (st == CUDNN_STATUS_SUCCESS) return pick(perf, returned, limit);
    } else if (pass == Pass::bwd_data) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[kRequest];
        st = find ? cudnnFindConvolutionBackwardDataAlgorithmEx(ctx.handle, d.w, b.in2[0], d.y, b.in1[0], d.conv, d.x,
                                                                b.out, kRequest, &returned, perf, b.workspace, limit)
                  : cudnnGetConvolutionBackwardDataAlgorithm_v7(ctx.handle, d.w, d.y, d.conv, d.x, kRequest, &returned,
                                                                perf);
        if (st == CUDNN_STATUS_SUCCESS) return pick(perf, returned, limit);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[kRequest];
        st = find ? cudnnFindConvolutionBackwardFilterAlgorithmEx(ctx.handle, d.x, b.in1[0], d.y, b.in2[0], d.conv, d.w,
                                                                  b.out, kRequest, &returned, perf, b.workspace, limit)
                  : cudnnGetConvolutionBackwardFilterAlgorithm_v7(ctx.handle, d.x, d.y, d.conv, d.w, kRequest,
                                                                  &returned, perf);
        if (st == CUDNN_STATUS_SUCCESS) return pick(perf, returned, limit);
    }
    Choice c;
    c.reason = std::string(find ? "cudnnFind" : "cudnnGet") + " failed: " + cudnnGetErrorString(st);
    return c;
}

// Launches the pass once with input copy `set`; returns cuDNN's status (a failure is handled by the caller).
cudnnStatus_t enqueue(const Context& ctx, const Descriptors& d, Pass pass, const Choice& c, const Buffers& b,
                      std::size_t set) {
    const float one = 1.0f, zero = 0.0f;
    void* in1 = b.in1[set % b.in1.size()];
    void* in2 = b.in2[set % b.in2.size()];
    switch (pass) {
        case Pass::forward:  // in1 = x, in2 = w
            return cudnnConvolutionForward(ctx.handle, &one, d.x, in1, d.w, in2, d.conv,
                                           cudnnConvolutionFwdAlgo_t(c.algo), b.workspace, c.workspace, &zero, d.y,
                                           b.out);
        case Pass::bwd_data:  // in1 = dy, in2 = w
            return cudnnConvolutionBackwardData(ctx.handle, &one, d.w, in2, d.y, in1, d.conv,
                                                cudnnConvolutionBwdDataAlgo_t(c.algo), b.workspace, c.workspace,
                                                &zero, d.x, b.out);
        case Pass::bwd_filter:  // in1 = x, in2 = dy
            return cudnnConvolutionBackwardFilter(ctx.handle, &one, d.x, in1, d.y, in2, d.conv,
                                                  cudnnConvolutionBwdFilterAlgo_t(c.algo), b.workspace, c.workspace,
                                                  &zero, d.w, b.out);
    }
    return CUDNN_STATUS_BAD_PARAM;
}

Timing time_case(const Context& ctx, const Descriptors& d, Pass pass, const Choice& c, const Buffers& b,
                 const Options& o) {
    Timing t;
    const auto start = std::chrono::steady_clock::now();
    std::size_t run = 0;
    while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(o.warmup_ms)) {
        CUDNN_CHECK(enqueue(ctx, d, pass, c, b, run++));
        if (run % 8 == 0) CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    t.warm_runs = int(run);
    std::vector<cudaEvent_t> events(std::size_t(o.repeats) + 1);
    for (cudaEvent_t& e : events) CUDA_CHECK(cudaEventCreate(&e));
    t.lead_s = std::min(0.25, 2e-3 + 1e-4 * double(o.warmup + o.repeats));
    lead_kernel<<<1, 1, 0, ctx.stream>>>(static_cast<unsigned long long>(t.lead_s * 1e9));
    CUDA_CHECK_LAUNCH("lead_kernel");
    const auto queue_start = std::chrono::steady_clock::now();
    for (int i = 0; i < o.warmup; ++i) CUDNN_CHECK(enqueue(ctx, d, pass, c, b, run++));
    for (int r = 0; r < o.repeats; ++r) {
        CUDA_CHECK(cudaEventRecord(events[std::size_t(r)], ctx.stream));
        CUDNN_CHECK(enqueue(ctx, d, pass, c, b, run++));
    }
    CUDA_CHECK(cudaEventRecord(events.back(), ctx.stream));
    t.host_enqueue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - queue_start).count();
    t.host_kept_ahead = t.host_enqueue_s < t.lead_s;
    CUDA_CHECK(cudaEventSynchronize(events.back()));
    std::vector<double> s;
    for (std::size_t r = 0; r + 1 < events.size(); ++r) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, events[r], events[r + 1]));
        s.push_back(double(ms) * 1e-3);
    }
    for (cudaEvent_t e : events) CUDA_CHECK(cudaEventDestroy(e));
    std::sort(s.begin(), s.end());
    const std::size_t m = s.size();
    t.median_s = m % 2 ? s[m / 2] : 0.5 * (s[m / 2 - 1] + s[m / 2]);
    t.min_s = s.front();
    t.max_s = s.back();
    return t;
}

// ---- Verification ------------------------------------------------------------------------------------------

Verify verify(const Context& ctx, const Record& rec, const Shape& s, const Seeds& seeds, const Buffers& b,
              const Dims4& out, std::uint64_t sample_seed, int samples) {
    const PrecSpec& p = *rec.prec;
    const unsigned long long bad = count_bad(b.out, p.fmt, out.count(), ctx.d_bad, ctx.stream);
    if (bad) {
        std::fprintf(stderr, "%s: VERIFICATION FAILED: %s %s %s %s: %llu of %lld output elements not written or not "
                     "finite\n", kProgram, s.label.c_str(), p.name, rec.nhwc ? "nhwc" : "nchw", pass_name(rec.pass),
                     bad, static_cast<long long>(out.count()));
        std::exit(kExitVerifyFailed);
    }
    // Products per output element (at most; padding and stride skip some).
    const std::int64_t terms = rec.pass == Pass::forward    ? s.c * s.r * s.s
                               : rec.pass == Pass::bwd_data ? s.k * s.r * s.s
                                                            : s.n * s.p() * s.q();
    const int count = int(std::clamp<std::int64_t>(std::int64_t(60'000'000) / std::max<std::int64_t>(terms, 1), 16,
                                                   std::max(16, samples)));
    std::vector<std::int64_t> logical{0, out.count() - 1};
    std::uint64_t state = sample_seed;
    while (int(logical.size()) < std::min<std::int64_t>(count, out.count()))
        logical.push_back(std::int64_t(mix64(state += 0x9E3779B97F4A7C15ull) % std::uint64_t(out.count())));
    std::vector<std::int64_t> where(logical.size());
    std::vector<std::array<std::int64_t, 4>> coords(logical.size());
    for (std::size_t i = 0; i < logical.size(); ++i) {
        std::int64_t l = logical[i];
        const std::int64_t w = l % out.w;
        l /= out.w;
        const std::int64_t h = l % out.h;
        l /= out.h;
        const std::int64_t c = l % out.c, n = l / out.c;
        coords[i] = {n, c, h, w};
        where[i] = memory_index(n, c, h, w, out.c, out.h, out.w, out.nhwc);
    }
    const std::vector<float> got = gather(b.out, p.fmt, where, ctx.stream);
    std::vector<Reference> refs(logical.size());
    const unsigned threads = std::max(1u, std::min(32u, std::thread::hardware_concurrency()));
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&] {
            for (std::size_t i; (i = next.fetch_add(1)) < refs.size();)
                refs[i] = reference(s, rec.pass, seeds, fraction_bits(p.fmt), coords[i][0], coords[i][1], coords[i][2],
                                    coords[i][3]);
        });
    for (std::thread& t : pool) t.join();
    Verify v;
    v.checked = int(logical.size());
    v.terms = terms;
    v.element_bound = element_bound(p.prec, terms);
    v.norm_limit = norm_limit(p.prec, terms);
    double err2 = 0, ref2 = 0;
    for (std::size_t i = 0; i < refs.size(); ++i) {
        const double d = double(got[i]), r = refs[i].value, scale = std::max(refs[i].abs_sum, 1e-30);
        const double rel = std::fabs(d - r) / scale;
        v.max_rel_error = std::max(v.max_rel_error, rel);
        err2 += (d - r) * (d - r);
        ref2 += r * r;
        if (!(rel <= v.element_bound)) {
            std::fprintf(stderr, "%s: VERIFICATION FAILED: %s %s %s %s element (%lld,%lld,%lld,%lld): got %.9g, "
                         "expected %.9g (|error| / sum|terms| = %.3g > %.3g)\n", kProgram, s.label.c_str(), p.name,
                         rec.nhwc ? "nhwc" : "nchw", pass_name(rec.pass), static_cast<long long>(coords[i][0]),
                         static_cast<long long>(coords[i][1]), static_cast<long long>(coords[i][2]),
                         static_cast<long long>(coords[i][3]), d, r, rel, v.element_bound);
            std::exit(kExitVerifyFailed);
        }
    }
    v.rel_l2_error = ref2 > 0 ? std::sqrt(err2 / ref2) : 0;
    if (!(v.rel_l2_error <= v.norm_limit)) {
        std::fprintf(stderr, "%s: VERIFICATION FAILED: %s %s %s %s: ||d - ref|| / ||ref|| = %.3g > %.3g over %d "
                     "elements (algorithm %d, %s)\n", kProgram, s.label.c_str(), p.name, rec.nhwc ? "nhwc" : "nchw",
                     pass_name(rec.pass), v.rel_l2_error, v.norm_limit, v.checked, rec.algo, rec.algo_math.c_str());
        std::exit(kExitVerifyFailed);
    }
    return v;
}

// ---- Report ------------------------------------------------------------------------------------------------

#define ROOFPLAN_STRINGIFY_(x) #x
#define ROOFPLAN_STRINGIFY(x) ROOFPLAN_STRINGIFY_(x)
std::pair<std::string, std::string> git_sha(const Options& o) {
    if (o.git_sha) return {*o.git_sha, "command line"};
#ifdef ROOFPLAN_GIT_SHA
    std::string compiled = ROOFPLAN_STRINGIFY(ROOFPLAN_GIT_SHA);
    if (compiled.size() >= 2 && compiled.front() == '"' && compiled.back() == '"')
        compiled = compiled.substr(1, compiled.size() - 2);
    if (compiled.size() >= 4 && compiled.compare(0, 2, "\\\"") == 0) compiled = compiled.substr(2, compiled.size() - 4);
    if (!compiled.empty()) return {compiled, "compile definition"};
#endif
    if (const char* env = std::getenv("ROOFPLAN_GIT_SHA"); env && *env) return {env, "environment"};
    return {"unknown", "none"};
}

std::optional<int> attribute(cudaDeviceAttr a, int dev) {
    int v = 0;
    if (cudaDeviceGetAttribute(&v, a, dev) != cudaSuccess) {
        (void)cudaGetLastError();
        return std::nullopt;
    }
    return v > 0 ? std::optional<int>(v) : std::nullopt;
}

std::string report(const Options& o, int argc, char** argv, std::uint64_t seed, const std::vector<Record>& recs,
                   bool complete) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, o.device));
    int driver = 0, runtime = 0;
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    char bus[64] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, int(sizeof bus), o.device));
    const auto [sha, sha_source] = git_sha(o);
    const std::size_t cudnn = cudnnGetVersion();
    std::string cmd = "[";
    for (int i = 0; i < argc; ++i) cmd += (i ? ", " : "") + json_string(argv[i]);
    cmd += "]";
    std::string env = "{";
    for (const char* name : {"NVIDIA_TF32_OVERRIDE", "CUDNN_LOGLEVEL_DBG", "CUDA_VISIBLE_DEVICES", "CUDA_MODULE_LOADING"})
        if (const char* v = std::getenv(name))
            env += std::string(env.size() > 1 ? ", " : "") + json_string(name) + ": " + json_string(v);
    env += "}";
    std::string j = "{\n  \"tool\": \"roofplan-conv\",\n  \"schema_version\": 1,\n  \"complete\": " + json_bool(complete) +
                    ",\n  \"provenance\": {\n";
    j += "    \"program\": " + json_string(kProgram) + ",\n    \"version\": " + json_string(kVersion) + ",\n";
    j += "    \"date_utc\": " + json_string(utc_now_iso8601()) + ",\n    \"command_line\": " + cmd + ",\n";
    j += "    \"git_sha\": " + json_string(sha) + ",\n    \"git_sha_source\": " + json_string(sha_source) + ",\n";
    j += "    \"driver_version\": " + json_string(version_string(driver)) + ",\n";
    j += "    \"runtime_version\": " + json_string(version_string(runtime)) + ",\n";
    j += "    \"cudnn_version\": " + json_string(std::to_string(cudnn / 10000) + "." + std::to_string(cudnn / 100 % 100) +
                                                 "." + std::to_string(cudnn % 100)) + ",\n";
    j += "    \"cudnn_version_code\": " + json_number(std::uint64_t(cudnn)) + ",\n";
    j += "    \"cudnn_header_version\": " + json_string(std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) +
                                                        "." + std::to_string(CUDNN_PATCHLEVEL)) + ",\n";
    j += "    \"compiler\": " + json_string("nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." +
                                            std::to_string(__CUDACC_VER_MINOR__) + "." +
                                            std::to_string(__CUDACC_VER_BUILD__)) + ",\n";
    j += "    \"environment\": " + env + ",\n";
    j += "    \"device\": {\"index\": " + json_number(o.device) + ", \"name\": " + json_string(prop.name) +
         ", \"pci_bus_id\": " + json_string(bus) + ", \"compute_capability\": " +
         json_string(std::to_string(prop.major) + "." + std::to_string(prop.minor)) +
         ", \"sm_count\": " + json_number(prop.multiProcessorCount) +
         ", \"clock_rate_khz\": " + json_optional(attribute(cudaDevAttrClockRate, o.device)) +
         ", \"memory_clock_rate_khz\": " + json_optional(attribute(cudaDevAttrMemoryClockRate, o.device)) +
         ", \"memory_bus_width_bits\": " + json_optional(attribute(cudaDevAttrGlobalMemoryBusWidth, o.device)) +
         ", \"l2_cache_bytes\": " + json_optional(attribute(cudaDevAttrL2CacheSize, o.device)) +
         ", \"global_memory_bytes\": " + json_number(std::uint64_t(prop.totalGlobalMem)) +
         ", \"ecc_enabled\": " + json_bool(prop.ECCEnabled != 0) + "}\n  },\n";
    j += "  \"config\": {\"algo_search\": " + json_string(o.find ? "find" : "heuristic") +
         ", \"workspace_limit_bytes\": " + json_number(std::uint64_t(o.workspace_mib) * kMiB) +
         ", \"warmup\": " + json_number(o.warmup) + ", \"warmup_ms\": " + json_number(o.warmup_ms) +
         ", \"repeats\": " + json_number(o.repeats) + ", \"seed\": " + json_number(seed) +
         ", \"samples\": " + json_number(o.samples) + ", \"shapes_file\": " + json_string(o.shapes_file) +
         ", \"filter\": " + json_string(o.filter) +
         ", \"rate\": \"tflops = 2 n k p q c r s / time_s_median / 1e12 (MACs of the pass; bias not included)\"" +
         ", \"timing\": \"CUDA events between back-to-back runs behind a lead kernel; inputs rotate through "
         "input_sets copies so that (input_sets - 1) x (|in1| + |in2|) >= 2 x L2 where memory allows\"}," +
         "\n  \"results\": [\n";
    bool first = true;
    std::string skipped;
    for (const Record& r : recs) {
        const Shape& s = *r.shape;
        std::string head = "{\"label\": " + json_string(s.label) + ", \"pass\": " + json_string(pass_name(r.pass)) +
                           ", \"precision\": " + json_string(r.prec->name) + ", \"layout\": " +
                           json_string(r.nhwc ? "nhwc" : "nchw") + ", \"n\": " + json_number(s.n) +
                           ", \"c\": " + json_number(s.c) + ", \"h\": " + json_number(s.h) + ", \"w\": " +
                           json_number(s.w) + ", \"k\": " + json_number(s.k) + ", \"r\": " + json_number(s.r) +
                           ", \"s\": " + json_number(s.s) + ", \"stride\": " + json_number(s.stride) + ", \"pad\": " +
                           json_number(s.pad) + ", \"dilation\": " + json_number(s.dilation) + ", \"p\": " +
                           json_number(s.p()) + ", \"q\": " + json_number(s.q());
        if (!r.skip_reason.empty()) {
            skipped += (skipped.empty() ? "    " : ",\n    ") + head + ", \"reason\": " + json_string(r.skip_reason) + "}";
            continue;
        }
        j += (first ? "    " : ",\n    ") + head + ", \"macs\": " + json_number(s.macs()) +
             ", \"time_s_median\": " + json_number(r.t.median_s) + ", \"time_s_min\": " + json_number(r.t.min_s) +
             ", \"time_s_max\": " + json_number(r.t.max_s) + ", \"tflops\": " + json_number(r.tflops) +
             ", \"algo\": " + json_number(r.algo) + ", \"algo_math_type\": " + json_string(r.algo_math) +
             ", \"requested_math_type\": " + json_string(r.prec->math_name) +
             ", \"workspace_bytes\": " + json_number(std::uint64_t(r.workspace)) +
             ", \"algos_offered\": " + json_number(r.algos_offered) + ", \"input_sets\": " + json_number(r.input_sets) +
             ", \"warm_runs\": " + json_number(r.t.warm_runs) + ", \"lead_s\": " + json_number(r.t.lead_s) +
             ", \"host_enqueue_s\": " + json_number(r.t.host_enqueue_s) + ", \"host_kept_ahead\": " +
             json_bool(r.t.host_kept_ahead) + ", \"verified\": true, \"all_elements_written\": true" +
             ", \"checked_elements\": " + json_number(r.v.checked) + ", \"terms_per_element\": " +
             json_number(r.v.terms) + ", \"max_rel_error\": " + json_number(r.v.max_rel_error) +
             ", \"rel_l2_error\": " + json_number(r.v.rel_l2_error) + ", \"element_bound\": " +
             json_number(r.v.element_bound) + ", \"norm_limit\": " + json_number(r.v.norm_limit) + "}";
        first = false;
    }
    j += "\n  ],\n  \"skipped\": [\n" + skipped + "\n  ]\n}\n";
    return j;
}

void write_report(const Options& o, const std::string& text) {
    if (o.json_path.empty()) return;
    const std::string tmp = o.json_path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f << text;
        if (!f) {
            std::fprintf(stderr, "%s: cannot write %s\n", kProgram, tmp.c_str());
            std::exit(kExitCudaError);
        }
    }
    if (std::rename(tmp.c_str(), o.json_path.c_str()) != 0) {
        std::fprintf(stderr, "%s: cannot rename %s to %s\n", kProgram, tmp.c_str(), o.json_path.c_str());
        std::exit(kExitCudaError);
    }
}

std::uint64_t round_up(std::uint64_t x) { return (x + 255) / 256 * 256; }

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    const std::vector<Shape> shapes = read_shapes(o);
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::fprintf(stderr, "%s: no CUDA device\n", kProgram);
        return kExitNoDevice;
    }
    if (o.device >= devices) usage_error("--device " + std::to_string(o.device) + ": only " + std::to_string(devices) +
                                         " device(s)");
    CUDA_CHECK(cudaSetDevice(o.device));
    const std::uint64_t seed = o.seed ? *o.seed
                                      : std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count());
    Context ctx;
    CUDNN_CHECK(cudnnCreate(&ctx.handle));
    CUDA_CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    CUDNN_CHECK(cudnnSetStream(ctx.handle, ctx.stream));
    CUDA_CHECK(cudaMalloc(&ctx.d_bad, sizeof(unsigned long long)));
    ctx.l2_bytes = std::uint64_t(attribute(cudaDevAttrL2CacheSize, o.device).value_or(50 << 20));
    const std::size_t ws_limit = std::size_t(o.workspace_mib) * kMiB;

    std::vector<Record> recs;
    const std::size_t total = shapes.size() * o.precisions.size() * o.layouts.size() * o.passes.size();
    std::size_t index = 0;
    const auto t0 = std::chrono::steady_clock::now();
    std::uint64_t case_seed = seed;
    for (const Shape& s : shapes)
        for (const Prec prec : o.precisions)
            for (const bool nhwc : o.layouts)
                for (const Pass pass : o.passes) {
                    ++index;
                    const PrecSpec& p = kPrecs[int(prec)];
                    Record rec;
                    rec.shape = &s;
                    rec.prec = &p;
                    rec.nhwc = nhwc;
                    rec.pass = pass;
                    const Dims4 x{s.n, s.c, s.h, s.w, nhwc}, w{s.k, s.c, s.r, s.s, nhwc},
                        y{s.n, s.k, s.p(), s.q(), nhwc};
                    // Inputs and output of the pass: forward x,w -> y; bwd-data dy,w -> dx; bwd-filter x,dy -> dw.
                    const Dims4 in1 = pass == Pass::bwd_data ? y : x;
                    const Dims4 in2 = pass == Pass::forward ? w : pass == Pass::bwd_data ? w : y;
                    const Dims4 out = pass == Pass::forward ? y : pass == Pass::bwd_data ? x : w;
                    const Seeds seeds{mix64(case_seed += 0x9E3779B97F4A7C15ull), mix64(case_seed += 0x9E3779B97F4A7C15ull),
                                      mix64(case_seed += 0x9E3779B97F4A7C15ull)};
                    const std::uint64_t seed1 = pass == Pass::bwd_data ? seeds.dy : seeds.x;
                    const std::uint64_t seed2 = pass == Pass::bwd_filter ? seeds.dy : seeds.w;
                    const std::size_t eb = element_bytes(p.fmt);
                    const std::uint64_t b1 = round_up(std::uint64_t(in1.count()) * eb),
                                        b2 = round_up(std::uint64_t(in2.count()) * eb),
                                        bo = round_up(std::uint64_t(out.count()) * eb);
                    std::size_t free_b = 0, total_b = 0;
                    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
                    const std::uint64_t reserve = bo + ws_limit + 512 * kMiB;
                    if (free_b < reserve + b1 + b2) {
                        rec.skip_reason = "does not fit in device memory";
                        recs.push_back(rec);
                        continue;
                    }
                    const std::uint64_t wanted = 1 + (2 * ctx.l2_bytes + b1 + b2 - 1) / (b1 + b2);
                    const std::uint64_t fit = (free_b - reserve) / (b1 + b2);
                    const int sets = int(std::max<std::uint64_t>(1, std::min<std::uint64_t>({wanted, fit,
                                                                                              std::uint64_t(kMaxInputSets)})));
                    rec.input_sets = sets;
                    Buffers b;
                    for (int i = 0; i < sets; ++i) {
                        void* a1 = nullptr;
                        void* a2 = nullptr;
                        CUDA_CHECK(cudaMalloc(&a1, b1));
                        CUDA_CHECK(cudaMalloc(&a2, b2));
                        fill(a1, p.fmt, in1, seed1, ctx.stream);
                        fill(a2, p.fmt, in2, seed2, ctx.stream);
                        b.in1.push_back(a1);
                        b.in2.push_back(a2);
                    }
                    CUDA_CHECK(cudaMalloc(&b.out, bo));
                    if (ws_limit) CUDA_CHECK(cudaMalloc(&b.workspace, ws_limit));
                    Descriptors d;
                    describe(d, s, p, nhwc);
                    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
                    const Choice c = choose(ctx, d, pass, b, ws_limit, o.find);
                    if (!c.ok) {
                        rec.skip_reason = c.reason;
                    } else {
                        rec.algo = c.algo;
                        rec.algo_math = math_type_name(c.math);
                        rec.workspace = c.workspace;
                        rec.algos_offered = c.offered;
                        CUDA_CHECK(cudaMemsetAsync(b.out, 0xFF, bo, ctx.stream));
                        const cudnnStatus_t st = enqueue(ctx, d, pass, c, b, 0);
                        if (st != CUDNN_STATUS_SUCCESS) {
                            rec.skip_reason = std::string("the chosen algorithm failed: ") + cudnnGetErrorString(st);
                        } else {
                            CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
                            rec.v = verify(ctx, rec, s, seeds, b, out, mix64(seed ^ index), o.samples);
                            rec.t = time_case(ctx, d, pass, c, b, o);
                            rec.tflops = 2.0 * s.macs() / rec.t.median_s / 1e12;
                        }
                    }
                    for (void* q : b.in1) CUDA_CHECK(cudaFree(q));
                    for (void* q : b.in2) CUDA_CHECK(cudaFree(q));
                    CUDA_CHECK(cudaFree(b.out));
                    if (b.workspace) CUDA_CHECK(cudaFree(b.workspace));
                    recs.push_back(rec);
                    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                    if (rec.skip_reason.empty())
                        std::fprintf(stderr, "[%4zu/%zu %6.1fs] %-40s %s %s %-10s %9.1f us %7.1f TFLOPS algo %d %s\n",
                                     index, total, elapsed, s.label.c_str(), p.name, nhwc ? "nhwc" : "nchw",
                                     pass_name(pass), rec.t.median_s * 1e6, rec.tflops, rec.algo,
                                     rec.algo_math == "CUDNN_FMA_MATH" ? "fma" : rec.algo_math == "CUDNN_DEFAULT_MATH"
                                                                                     ? "default" : "tensor-op");
                    else
                        std::fprintf(stderr, "[%4zu/%zu %6.1fs] %-40s %s %s %-10s skipped: %s\n", index, total, elapsed,
                                     s.label.c_str(), p.name, nhwc ? "nhwc" : "nchw", pass_name(pass),
                                     rec.skip_reason.c_str());
                    write_report(o, report(o, argc, argv, seed, recs, false));
                }
    const std::string text = report(o, argc, argv, seed, recs, true);
    if (o.json_path.empty()) std::fputs(text.c_str(), stdout);
    else write_report(o, text);
    CUDA_CHECK(cudaFree(ctx.d_bad));
    CUDNN_CHECK(cudnnDestroy(ctx.handle));
    CUDA_CHECK(cudaStreamDestroy(ctx.stream));
    return 0;
}
