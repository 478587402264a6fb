// kernels/gemm/gemm_bench.cu — roofplan-gemm: dense matrix-product (GEMM) throughput through cuBLASLt.
//
// Method.  Each case is one precision and one shape M x N x K with a batch `count` (count independent products
// of the same shape, cuBLASLt's strided batch; roofplan's GemmShape::count: groups, heads).  Every case is one
// cublasLtMatmul call computing D = A'B with alpha = 1, beta = 0 and C = D:
//
//   precision  A, B      D        compute type                    scale  what the matrix units do
//   fp32       fp32      fp32     CUBLAS_COMPUTE_32F              fp32   plain FP32 (no TF32: default math)
//   tf32       fp32      fp32     CUBLAS_COMPUTE_32F_FAST_TF32    fp32   inputs rounded to TF32, FP32 accumulate
//   fp16       fp16      fp16     CUBLAS_COMPUTE_32F              fp32   FP32 accumulate
//   bf16       bf16      bf16     CUBLAS_COMPUTE_32F              fp32   FP32 accumulate
//   int8       int8      int32    CUBLAS_COMPUTE_32I              int32  INT32 accumulate (IMMA)
//
// Layout: "TN", the same for every precision: op(A) = transpose, op(B) = none, column-major storage
// (CUBLASLT_ORDER_COL).  A is stored K x M (lda = K), so each row of op(A) is contiguous; B is stored K x N
// (ldb = K); D is M x N (ldd = M); batches follow each other (strides M*K, N*K, M*N elements).  In row-major
// terms this is D^T = A_rm x B_rm^T, PyTorch's Linear.  TN is the only regular-order layout cuBLASLt's IMMA
// (int8) kernels accept, and it needs M and K (hence lda, ldb, ldd) to be multiples of 4: int8 cases whose M or
// K is not are skipped and listed as such.  The algorithm is the first of cublasLtMatmulAlgoGetHeuristic's
// answers (asked for up to 32) with a 32 MiB workspace; how many it returned, and the chosen algorithm's id,
// tile, stages and split-K, are reported.
//
// Correctness comes before timing, for every case before any case is timed.  Inputs are fresh random values
// from a seeded host generator (SplitMix64; --seed, else the clock; each case draws from its own seed derived
// from it): floating-point values are +-(1 + f) 2^-e with e in 1..4 and f a random fraction with as many bits
// as the input format holds (23 for fp32 and tf32, 10 for fp16, 7 for bf16), so they lie in [-1, 1), are never
// zero or tiny, and are exact in the input format; int8 values are integers in [-8, 8] without 0.  D is poisoned
// before the checked run (all-ones bytes, a NaN in fp32, fp16 and bf16; 0x7f7f7f7f for int32).  After the run
// every element of D must have been written (no poison, nothing non-finite), and --samples (default 2048)
// random (batch, i, j) positions plus the corners of the first and last matrices (every element, when there
// are few more) are compared with full dot products computed on the CPU: in int64 and bit-exact for int8; in
// double for the rest, where each element must satisfy   |d - ref| <= bound * sum_k |a_k b_k|   with a bound
// that no correct evaluation order can exceed:
//   fp32   (K + 2) 2^-24                     FP32 rounding of K products and sums (gamma_K)
//   tf32   2^-9 + (K + 2) 2^-22              inputs rounded or truncated to TF32; matrix-unit accumulation
//   fp16   2^-10 + (K + 2) 2^-22             output rounding (twice, should split-K partials be fp16) + accumulation
//   bf16   2^-7 + (K + 2) 2^-22              the same with bf16's coarser rounding
// ((K + 2) 2^-22 allows the matrix units' accumulation four times FP32's rounding error.)  Those bounds grow
// with K and would let a wrong layout slip through at large K, so the checked elements must also satisfy a
// norm-wise test, ||d - ref||_2 / ||ref||_2 <= limit, at several times what each precision's rounding gives on
// random data: fp32 max(1e-6, 8 * 2^-24 sqrt(K)) (below the ~3e-4 that TF32 rounding gives, for K up to about
// 2^17, so TF32 cannot pose as fp32), tf32 4e-3, fp16 2e-3, bf16 1.6e-2.  A failed check names the case, the
// element and both values, and exits with status 1 before anything is timed.  The reported max_rel_error is
// max |d - ref| / sum_k |a_k b_k| over the checked elements; rel_l2_error is the norm-wise error.
//
// Timing.  The inputs of consecutive runs must not be sitting in L2 from the run before (METHOD.md: "rotate
// among several input sets"), so each case allocates S copies of A and B, with (S - 1)(|A| + |B|) >= 2 x L2
// (S = 1 + ceil(2 L2 / (|A| + |B|)), at most 64 and as many as fit in memory), and run r reads copy r mod S;
// rotation was preferred to flushing L2 between runs because a flush is extra work between the timed runs
// that the events would count or that would need a gap.  D is one buffer.  Before timing, the case runs back
// to back for --warmup-ms (default 100 ms of wall time) so that the GPU clocks have ramped up.  Then a lead
// kernel spins on the GPU for 2 ms or more while the host queues --warmup runs (default 5) and --repeats runs
// (default 20) on one stream with a CUDA event between consecutive runs; each repeat is the time between two
// events.  The lead kernel keeps the GPU busy until everything is queued, so even a 1024^3 product of a few
// microseconds runs back to back with the next, not behind cuBLASLt's host overhead; if the host took longer
// to queue than the lead kernel lasted, the case is flagged (host_kept_ahead = false).  The median, min and
// max are reported; TFLOPS (TOPS for int8) = 2 M N K count / median / 1e12.
//
// Output: progress and a table on stderr, a JSON document (provenance, configuration, one record per case,
// the skipped cases) on stdout or in --json PATH.  Exit status: 0 success, 1 verification failed, 2 bad
// command line (including a case that cannot fit in device memory), 3 CUDA, cuBLAS or I/O error, 77 no CUDA
// device (the conventional "skipped" status; CTest's SKIP_RETURN_CODE).

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "../common/report.hpp"

namespace {

using namespace roofplan::bench;

constexpr const char* kProgram = "roofplan-gemm";
constexpr const char* kVersion = "0.1.0";  // roofplan's version (include/roofplan/version.hpp); keep in step
constexpr int kExitVerifyFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCudaError = 3;
constexpr int kExitNoDevice = 77;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::size_t kWorkspaceBytes = 32 * kMiB;  // cuBLASLt workspace, offered to the heuristic and the runs
constexpr int kHeuristicRequest = 32;               // answers asked of cublasLtMatmulAlgoGetHeuristic
constexpr int kMaxInputSets = 64;                   // copies of A and B rotated through while timing
constexpr std::int64_t kMaxDim = std::numeric_limits<std::int32_t>::max();  // cuBLASLt: "usually" int32 sizes

// ---- Error checking ----------------------------------------------------------------------------------

[[noreturn]] void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: CUDA error: %s: %s (%s)\n", file, line, call, cudaGetErrorString(err),
                 cudaGetErrorName(err));
    std::exit(kExitCudaError);
}

[[noreturn]] void cublas_fail(cublasStatus_t status, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: cuBLAS error: %s: %s (%s)\n", file, line, call, cublasGetStatusString(status),
                 cublasGetStatusName(status));
    std::exit(kExitCudaError);
}

// Checks the cudaError_t returned by a runtime call; on failure prints file:line, the call and the error.
#define CUDA_CHECK(call)                                                  \
    do {                                                                  \
        const cudaError_t roofplan_err_ = (call);                         \
        if (roofplan_err_ != cudaSuccess)                                 \
            cuda_fail(roofplan_err_, #call, __FILE__, __LINE__);          \
    } while (0)

// Checks the cublasStatus_t returned by a cuBLAS or cuBLASLt call.
#define CUBLAS_CHECK(call)                                                \
    do {                                                                  \
        const cublasStatus_t roofplan_st_ = (call);                       \
        if (roofplan_st_ != CUBLAS_STATUS_SUCCESS)                        \
            cublas_fail(roofplan_st_, #call, __FILE__, __LINE__);         \
    } while (0)

// Checks a kernel launch (bad configuration, missing kernel image, ...) through cudaGetLastError.
#define CUDA_CHECK_LAUNCH(kernel_name)                                                        \
    do {                                                                                      \
        const cudaError_t roofplan_err_ = cudaGetLastError();                                 \
        if (roofplan_err_ != cudaSuccess) {                                                   \
            const std::string roofplan_what_ = std::string("launch of ") + (kernel_name);     \
            cuda_fail(roofplan_err_, roofplan_what_.c_str(), __FILE__, __LINE__);            \
        }                                                                                     \
    } while (0)

// ---- Device code: the lead kernel ----------------------------------------------------------------------

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One thread that spins for `ns` nanoseconds of the GPU's global timer: it holds the stream while the host
// queues the timed runs behind it.
__global__ void lead_kernel(unsigned long long ns) {
    const unsigned long long start = global_timer_ns();
    while (global_timer_ns() - start < ns) {
    }
}

// ---- Precisions --------------------------------------------------------------------------------------

enum class Prec { fp32, tf32, fp16, bf16, int8 };
enum class InFmt { f32, f16, bf16, i8 };
enum class OutFmt { f32, f16, bf16, i32 };

struct PrecSpec {
    Prec prec;
    const char* name;
    cudaDataType_t ab_type, d_type, scale_type;
    cublasComputeType_t compute;
    const char *ab_type_name, *d_type_name, *scale_type_name, *compute_name;
    InFmt in;
    OutFmt out;
    unsigned ab_bytes, d_bytes;
    int mantissa_bits;  // fraction bits of the generated floating-point inputs
    int exponent_bias;  // of the input format
    const char* rate_unit;
};

const PrecSpec kSpecs[] = {
    {Prec::fp32, "fp32", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "CUDA_R_32F", "CUDA_R_32F",
     "CUDA_R_32F", "CUBLAS_COMPUTE_32F", InFmt::f32, OutFmt::f32, 4, 4, 23, 127, "TFLOPS"},
    {Prec::tf32, "tf32", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, "CUDA_R_32F",
     "CUDA_R_32F", "CUDA_R_32F", "CUBLAS_COMPUTE_32F_FAST_TF32", InFmt::f32, OutFmt::f32, 4, 4, 23, 127, "TFLOPS"},
    {Prec::fp16, "fp16", CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, "CUDA_R_16F", "CUDA_R_16F",
     "CUDA_R_32F", "CUBLAS_COMPUTE_32F", InFmt::f16, OutFmt::f16, 2, 2, 10, 15, "TFLOPS"},
    {Prec::bf16, "bf16", CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, "CUDA_R_16BF", "CUDA_R_16BF",
     "CUDA_R_32F", "CUBLAS_COMPUTE_32F", InFmt::bf16, OutFmt::bf16, 2, 2, 7, 127, "TFLOPS"},
    {Prec::int8, "int8", CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, "CUDA_R_8I", "CUDA_R_32I",
     "CUDA_R_32I", "CUBLAS_COMPUTE_32I", InFmt::i8, OutFmt::i32, 1, 4, 0, 0, "TOPS"},
};

const PrecSpec& spec_of(Prec p) {
    for (const PrecSpec& s : kSpecs)
        if (s.prec == p) return s;
    std::abort();  // unreachable: kSpecs lists every Prec
}

// Per-element bound on |d - ref| / sum_k |a_k b_k| (see the top of the file); 0 means exact.
double element_bound(Prec p, std::int64_t k) {
    const double kd = double(k) + 2.0;
    switch (p) {
        case Prec::fp32: return kd * std::ldexp(1.0, -24);
        case Prec::tf32: return std::ldexp(1.0, -9) + kd * std::ldexp(1.0, -22);
        case Prec::fp16: return std::ldexp(1.0, -10) + kd * std::ldexp(1.0, -22);
        case Prec::bf16: return std::ldexp(1.0, -7) + kd * std::ldexp(1.0, -22);
        case Prec::int8: return 0.0;
    }
    return 0.0;
}

// Limit on ||d - ref||_2 / ||ref||_2 over the checked elements (see the top of the file); 0 means exact.
double norm_limit(Prec p, std::int64_t k) {
    switch (p) {
        case Prec::fp32: return std::max(1e-6, 8.0 * std::ldexp(1.0, -24) * std::sqrt(double(k)));
        case Prec::tf32: return 4e-3;
        case Prec::fp16: return 2e-3;
        case Prec::bf16: return 1.6e-2;
        case Prec::int8: return 0.0;
    }
    return 0.0;
}

// ---- Host data -----------------------------------------------------------------------------------------

// SplitMix64 (Steele, Lea, Flood 2014): small, fast, and the same sequence on every platform.
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() {
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

// The seed of case `index`: one SplitMix64 step away from the run's seed, so cases draw unrelated data and
// the timing pass can regenerate exactly the inputs the verification pass checked.
std::uint64_t case_seed(std::uint64_t seed, std::size_t index) {
    SplitMix64 g{seed ^ (0xD1B54A32D192ED03ull * (std::uint64_t(index) + 1))};
    return g.next();
}

// Fills `out` with `elements` random inputs in the format's bytes (see the top of the file).
void fill_inputs(std::vector<unsigned char>& out, std::size_t elements, const PrecSpec& s, SplitMix64& rng) {
    out.resize(elements * s.ab_bytes);
    unsigned char* p = out.data();
    if (s.in == InFmt::i8) {
        for (std::size_t i = 0; i < elements; ++i) {
            const int v = int(rng.next() >> 60);  // 0..15
            p[i] = static_cast<unsigned char>(static_cast<std::int8_t>(v < 8 ? v - 8 : v - 7));  // -8..-1, 1..8
        }
        return;
    }
    const int mbits = s.mantissa_bits;
    const int width = s.ab_bytes == 4 ? 32 : 16;
    for (std::size_t i = 0; i < elements; ++i) {
        const std::uint64_t r = rng.next();
        const std::uint32_t sign = std::uint32_t(r >> 63);
        const std::uint32_t e = 1 + std::uint32_t((r >> 61) & 3u);                      // 1..4
        const std::uint32_t frac = std::uint32_t(r & ((std::uint64_t{1} << mbits) - 1));  // mbits random bits
        std::uint32_t bits = 0;
        if (s.in == InFmt::f32) {
            bits = (sign << 31) | ((127u - e) << 23) | frac;
        } else {  // fp16 (5-bit exponent, 10 fraction bits) or bf16 (8-bit exponent, 7 fraction bits)
            bits = (sign << 15) | ((std::uint32_t(s.exponent_bias) - e) << mbits) | frac;
        }
        if (width == 32) std::memcpy(p + 4 * i, &bits, 4);
        else {
            const std::uint16_t h = std::uint16_t(bits);
            std::memcpy(p + 2 * i, &h, 2);
        }
    }
}

float bits_to_float(std::uint32_t bits) {
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// IEEE binary16 to float (every fp16 value is exact in float).
float half_to_float(std::uint16_t h) {
    const int sign = h >> 15, exp = (h >> 10) & 0x1F, man = h & 0x3FF;
    double v;
    if (exp == 0) v = std::ldexp(double(man), -24);  // zero or subnormal
    else if (exp == 31) v = man ? std::numeric_limits<double>::quiet_NaN() : std::numeric_limits<double>::infinity();
    else v = std::ldexp(double(1024 + man), exp - 25);
    return float(sign ? -v : v);
}

float bf16_to_float(std::uint16_t h) { return bits_to_float(std::uint32_t(h) << 16); }

template <class T>
T load(const unsigned char* base, std::size_t index) {
    T v;
    std::memcpy(&v, base + index * sizeof(T), sizeof(T));
    return v;
}

float input_value(const unsigned char* base, std::size_t index, InFmt f) {
    switch (f) {
        case InFmt::f32: return load<float>(base, index);
        case InFmt::f16: return half_to_float(load<std::uint16_t>(base, index));
        case InFmt::bf16: return bf16_to_float(load<std::uint16_t>(base, index));
        case InFmt::i8: return float(load<std::int8_t>(base, index));
    }
    return 0.0f;
}

double output_value(const unsigned char* base, std::size_t index, OutFmt f) {
    switch (f) {
        case OutFmt::f32: return load<float>(base, index);
        case OutFmt::f16: return half_to_float(load<std::uint16_t>(base, index));
        case OutFmt::bf16: return bf16_to_float(load<std::uint16_t>(base, index));
        case OutFmt::i32: return double(load<std::int32_t>(base, index));
    }
    return 0.0;
}

constexpr std::int32_t kPoisonI32 = 0x7f7f7f7f;  // cudaMemset byte 0x7f

// ---- Shapes and cases ----------------------------------------------------------------------------------

struct Shape {
    std::int64_t m = 0, n = 0, k = 0, count = 1;
    std::string label;
    std::string origin;  // where it came from, for messages: "--sizes", "--shape", "FILE:LINE", "default"
};

std::string shape_text(const Shape& s) {
    std::string t = std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
    if (s.count != 1) t += " (count " + std::to_string(s.count) + ")";
    return t;
}

// The cuBLASLt objects of one case, built once (verification pass) and reused by the timing pass.
struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    int heuristics = 0;  // answers returned by cublasLtMatmulAlgoGetHeuristic (of kHeuristicRequest asked)
    std::size_t algo_workspace = 0;
    float waves = 0;
    // The chosen algorithm's configuration (cublasLtMatmulAlgoConfigAttributes_t); -1 where unreadable.
    long long algo_id = -1, tile_id = -1, stages_id = -1, splitk = -1, reduction_scheme = -1, cluster_shape_id = -1;
};

struct Verification {
    std::uint64_t checked = 0;        // elements compared with the CPU reference
    double max_rel_error = 0;         // max |d - ref| / sum |a b|
    double rel_l2_error = 0;          // ||d - ref|| / ||ref|| over the checked elements
    double element_bound = 0, norm_limit = 0;
};

struct Timing {
    double median_s = 0, min_s = 0, max_s = 0;
    int warm_runs = 0;               // runs of the --warmup-ms phase
    double lead_s = 0;               // how long the lead kernel spun
    double host_enqueue_s = 0;       // host time to queue the warm-up and timed runs behind it
    bool host_kept_ahead = true;     // host_enqueue_s < lead_s
};

struct Case {
    std::size_t index = 0;
    const PrecSpec* spec = nullptr;
    Shape shape;
    std::uint64_t elems_a = 0, elems_b = 0, elems_d = 0;
    std::uint64_t bytes_a = 0, bytes_b = 0, bytes_d = 0;
    std::string skip_reason;  // non-empty: not run
    Plan plan;
    Verification v;
    Timing t;
    int input_sets = 1;
    double rate = 0;  // TFLOPS or TOPS
    std::string note;
};

bool mul_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) { return __builtin_mul_overflow(a, b, &out); }

// ---- Command line ------------------------------------------------------------------------------------

struct Options {
    std::vector<Prec> precisions;
    std::vector<Shape> shapes;
    int repeats = 20;
    int warmup = 5;
    int warmup_ms = 100;
    int samples = 2048;
    std::optional<std::uint64_t> seed;
    std::string json_path;  // empty: stdout
    int device = 0;
    std::optional<std::string> git_sha;
};

void print_help() {
    std::printf(
        "Usage: %s [options]\n"
        "Dense matrix-product (GEMM) throughput through cuBLASLt, for fp32, tf32, fp16, bf16 and int8.\n"
        "Every case is checked against a CPU reference before any case is timed.\n"
        "\n"
        "Options:\n"
        "  --precision LIST   comma-separated fp32, tf32, fp16, bf16, int8, or all (default all)\n"
        "  --sizes LIST       square sizes M = N = K, comma-separated (e.g. 1024,2048,4096,8192)\n"
        "  --shape SPEC       one shape MxNxK or MxNxKxCOUNT (COUNT products of that shape: a strided\n"
        "                     batch); repeatable\n"
        "  --shapes-file FILE shapes, one a line: M N K [COUNT] [LABEL]; '#' starts a comment\n"
        "                     With none of these three: --sizes 1024,2048,4096,8192.\n"
        "  --repeats N        timed runs per case (default 20); median, min and max are reported\n"
        "  --warmup N         untimed runs per case just before the timed ones (default 5)\n"
        "  --warmup-ms N      milliseconds of back-to-back runs per case first, for the clocks (default 100)\n"
        "  --samples N        random output elements checked per case, plus corners (default 2048)\n"
        "  --seed N           seed of the input data (default: from the clock; printed and in the JSON)\n"
        "  --json PATH        write the JSON report to PATH instead of stdout\n"
        "  --device N         CUDA device index (default 0)\n"
        "  --git-sha SHA      source revision for the report (default: the ROOFPLAN_GIT_SHA compile\n"
        "                     definition, else $ROOFPLAN_GIT_SHA, else \"unknown\")\n"
        "  -h, --help         show this help\n"
        "\n"
        "Layout: TN column-major (A stored K x M and transposed, B stored K x N), cuBLASLt's heuristic\n"
        "algorithm with a 32 MiB workspace.  int8 needs M and K to be multiples of 4 (other int8 cases are\n"
        "skipped).  Progress and the table go to stderr, the JSON report to stdout (or --json PATH).\n"
        "Exit status: 0 ok, 1 verification failed, 2 bad command line, 3 CUDA or I/O error, 77 no CUDA device.\n",
        kProgram);
}

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\nRun '%s --help' for usage.\n", kProgram, message.c_str(), kProgram);
    std::exit(kExitUsage);
}

std::optional<std::uint64_t> to_unsigned(std::string_view text) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec != std::errc() || ptr != end) return std::nullopt;
    return value;
}

std::uint64_t parse_unsigned(std::string_view flag, std::string_view text, std::uint64_t lo, std::uint64_t hi) {
    std::uint64_t value = 0;
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, value);
    if (text.empty() || ec == std::errc::invalid_argument || ptr != end)
        usage_error(std::string(flag) + " expects a non-negative integer, got '" + std::string(text) + "'");
    if (ec == std::errc::result_out_of_range || value < lo || value > hi)
        usage_error(std::string(flag) + " must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                    ", got '" + std::string(text) + "'");
    return value;
}

// A matrix dimension or batch count: a positive integer that cuBLASLt can take (at most 2^31 - 1).
std::int64_t parse_dim(std::string_view what, std::string_view text, const std::string& where) {
    const std::string_view t = text;
    if (!t.empty() && t.front() == '-')
        usage_error(where + ": " + std::string(what) + " must be a positive integer, got '" + std::string(t) + "'");
    const auto v = to_unsigned(t);
    if (!v) usage_error(where + ": " + std::string(what) + " must be a positive integer, got '" + std::string(t) + "'");
    if (*v == 0) usage_error(where + ": " + std::string(what) + " must be positive, got 0");
    if (*v > std::uint64_t(kMaxDim))
        usage_error(where + ": " + std::string(what) + " " + std::string(t) + " is larger than " +
                    std::to_string(kMaxDim) + ", the largest size cuBLASLt takes");
    return std::int64_t(*v);
}

std::vector<std::string_view> split(std::string_view s, char sep) {
    std::vector<std::string_view> parts;
    std::size_t start = 0;
    while (true) {
        const std::size_t pos = s.find(sep, start);
        parts.push_back(s.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return parts;
}

void add_precisions(Options& o, std::string_view list) {
    for (const std::string_view name : split(list, ',')) {
        std::vector<Prec> add;
        if (name == "all") add = {Prec::fp32, Prec::tf32, Prec::fp16, Prec::bf16, Prec::int8};
        else {
            bool found = false;
            for (const PrecSpec& s : kSpecs)
                if (name == s.name) add.push_back(s.prec), found = true;
            if (!found)
                usage_error("unknown precision '" + std::string(name) +
                            "' in --precision; accepted: fp32, tf32, fp16, bf16, int8, all");
        }
        for (const Prec p : add)
            if (std::find(o.precisions.begin(), o.precisions.end(), p) == o.precisions.end()) o.precisions.push_back(p);
    }
}

Shape parse_shape_spec(std::string_view spec) {
    std::string norm(spec);
    std::replace(norm.begin(), norm.end(), 'X', 'x');
    const auto parts = split(norm, 'x');
    const std::string where = "--shape '" + std::string(spec) + "'";
    if (parts.size() != 3 && parts.size() != 4)
        usage_error(where + ": expected MxNxK or MxNxKxCOUNT (positive integers separated by 'x')");
    Shape s;
    s.m = parse_dim("M", parts[0], where);
    s.n = parse_dim("N", parts[1], where);
    s.k = parse_dim("K", parts[2], where);
    if (parts.size() == 4) s.count = parse_dim("COUNT", parts[3], where);
    s.origin = "--shape";
    return s;
}

// Reads "M N K [COUNT] [LABEL]" lines; '#' starts a comment, blank lines are skipped.  A fourth field that is
// not a number starts the label (COUNT is then 1); the label is the rest of the line.
void read_shapes_file(Options& o, const std::string& path) {
    std::ifstream in(path);
    if (!in) usage_error("cannot open --shapes-file '" + path + "': " + std::strerror(errno));
    std::string line;
    int line_no = 0, added = 0;
    while (std::getline(in, line)) {
        ++line_no;
        const std::string where = path + ":" + std::to_string(line_no);
        if (const auto hash = line.find('#'); hash != std::string::npos) line.erase(hash);
        std::vector<std::string> tok;
        std::size_t i = 0;
        std::vector<std::size_t> starts;
        while (i < line.size()) {
            while (i < line.size() && std::isspace(static_cast<unsigned char>(line[i]))) ++i;
            if (i >= line.size()) break;
            const std::size_t j0 = i;
            while (i < line.size() && !std::isspace(static_cast<unsigned char>(line[i]))) ++i;
            tok.push_back(line.substr(j0, i - j0));
            starts.push_back(j0);
        }
        if (tok.empty()) continue;
        if (tok.size() < 3) usage_error(where + ": expected 'M N K [COUNT] [LABEL]', got '" + line + "'");
        Shape s;
        s.m = parse_dim("M", tok[0], where);
        s.n = parse_dim("N", tok[1], where);
        s.k = parse_dim("K", tok[2], where);
        std::size_t label_tok = 3;
        if (tok.size() > 3 && (to_unsigned(tok[3]) || tok[3].front() == '-')) {
            s.count = parse_dim("COUNT", tok[3], where);
            label_tok = 4;
        }
        if (tok.size() > label_tok) {
            std::string label = line.substr(starts[label_tok]);
            while (!label.empty() && std::isspace(static_cast<unsigned char>(label.back()))) label.pop_back();
            s.label = label;
        }
        s.origin = where;
        o.shapes.push_back(s);
        ++added;
    }
    if (in.bad()) usage_error("error reading --shapes-file '" + path + "'");
    if (added == 0) usage_error("--shapes-file '" + path + "' holds no shapes");
}

Options parse_args(int argc, char** argv) {
    Options o;
    bool precision_given = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            print_help();
            std::exit(0);
        }
        if (arg.substr(0, 2) != "--") usage_error("unexpected argument '" + std::string(arg) + "'");
        // Accept both "--flag value" and "--flag=value".
        std::string_view flag = arg, value;
        bool has_value = false;
        if (const auto eq = arg.find('='); eq != std::string_view::npos) {
            flag = arg.substr(0, eq);
            value = arg.substr(eq + 1);
            has_value = true;
        }
        auto take_value = [&]() -> std::string_view {
            if (has_value) return value;
            if (i + 1 >= argc) usage_error(std::string(flag) + " needs a value");
            return argv[++i];
        };
        if (flag == "--precision") {
            add_precisions(o, take_value());
            precision_given = true;
        } else if (flag == "--sizes") {
            const std::string_view v = take_value();
            for (const std::string_view t : split(v, ',')) {
                Shape s;
                s.m = s.n = s.k = parse_dim("size", t, "--sizes '" + std::string(v) + "'");
                s.origin = "--sizes";
                o.shapes.push_back(s);
            }
        } else if (flag == "--shape") {
            o.shapes.push_back(parse_shape_spec(take_value()));
        } else if (flag == "--shapes-file") {
            const std::string_view v = take_value();
            if (v.empty()) usage_error("--shapes-file needs a non-empty path");
            read_shapes_file(o, std::string(v));
        } else if (flag == "--repeats") {
            o.repeats = int(parse_unsigned(flag, take_value(), 1, 100000));
        } else if (flag == "--warmup") {
            o.warmup = int(parse_unsigned(flag, take_value(), 0, 100000));
        } else if (flag == "--warmup-ms") {
            o.warmup_ms = int(parse_unsigned(flag, take_value(), 0, 600000));
        } else if (flag == "--samples") {
            o.samples = int(parse_unsigned(flag, take_value(), 1, 1000000));
        } else if (flag == "--seed") {
            o.seed = parse_unsigned(flag, take_value(), 0, std::numeric_limits<std::uint64_t>::max());
        } else if (flag == "--json") {
            const std::string_view v = take_value();
            if (v.empty()) usage_error("--json needs a non-empty path");
            o.json_path = std::string(v);
        } else if (flag == "--device") {
            o.device = int(parse_unsigned(flag, take_value(), 0, 1023));
        } else if (flag == "--git-sha") {
            o.git_sha = std::string(take_value());
        } else {
            usage_error("unknown option '" + std::string(flag) + "'");
        }
    }
    if (!precision_given) add_precisions(o, "all");
    if (o.shapes.empty())
        for (const std::int64_t s : {1024, 2048, 4096, 8192}) {
            Shape sh;
            sh.m = sh.n = sh.k = s;
            sh.origin = "default";
            o.shapes.push_back(sh);
        }
    return o;
}

// ---- JSON (written by hand: no dependency) -----------------------------------------------------------



// ---- Device provenance -------------------------------------------------------------------------------

struct DeviceInfo {
    int index = 0;
    std::string name, pci_bus_id;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    std::optional<int> clock_khz, memory_clock_khz, memory_bus_width_bits, l2_bytes;
    std::size_t global_memory_bytes = 0;
    bool ecc = false;
    int driver_version = 0, runtime_version = 0;
};

// cudaDeviceGetAttribute, with "not reported" (an error the driver uses for that, or a zero) as empty.
// CUDA 13 removed cudaDeviceProp::clockRate and ::memoryClockRate; the attributes remain.
std::optional<int> device_attribute(cudaDeviceAttr attr, int device, const char* what) {
    int value = 0;
    const cudaError_t err = cudaDeviceGetAttribute(&value, attr, device);
    if (err == cudaErrorInvalidValue || err == cudaErrorNotSupported) {
        (void)cudaGetLastError();  // reset the runtime's last error; the value is simply absent
        return std::nullopt;
    }
    if (err != cudaSuccess) cuda_fail(err, what, __FILE__, __LINE__);
    if (value <= 0) return std::nullopt;
    return value;
}


std::string cublas_version_string(std::size_t v) {  // cuBLAS: 10000 * major + 100 * minor + patch
    return std::to_string(v / 10000) + "." + std::to_string((v % 10000) / 100) + "." + std::to_string(v % 100);
}

DeviceInfo query_device(int device) {
    DeviceInfo info;
    info.index = device;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    info.name = prop.name;
    info.cc_major = prop.major;
    info.cc_minor = prop.minor;
    info.global_memory_bytes = prop.totalGlobalMem;
    info.ecc = prop.ECCEnabled != 0;
    char bus[64] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, int(sizeof bus), device));
    info.pci_bus_id = bus;
    CUDA_CHECK(cudaDeviceGetAttribute(&info.sm_count, cudaDevAttrMultiProcessorCount, device));
    info.clock_khz = device_attribute(cudaDevAttrClockRate, device, "cudaDeviceGetAttribute(ClockRate)");
    info.memory_clock_khz =
        device_attribute(cudaDevAttrMemoryClockRate, device, "cudaDeviceGetAttribute(MemoryClockRate)");
    info.memory_bus_width_bits =
        device_attribute(cudaDevAttrGlobalMemoryBusWidth, device, "cudaDeviceGetAttribute(GlobalMemoryBusWidth)");
    info.l2_bytes = device_attribute(cudaDevAttrL2CacheSize, device, "cudaDeviceGetAttribute(L2CacheSize)");
    CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
    return info;
}


// The source revision: --git-sha, else the ROOFPLAN_GIT_SHA compile definition (-DROOFPLAN_GIT_SHA=abc123,
// quoted or not), else the ROOFPLAN_GIT_SHA environment variable, else "unknown".
#define ROOFPLAN_STRINGIFY_(x) #x
#define ROOFPLAN_STRINGIFY(x) ROOFPLAN_STRINGIFY_(x)
std::pair<std::string, std::string> git_sha_and_source(const Options& opt) {
    if (opt.git_sha) return {*opt.git_sha, "command line"};
#ifdef ROOFPLAN_GIT_SHA
    std::string compiled = ROOFPLAN_STRINGIFY(ROOFPLAN_GIT_SHA);
    if (compiled.size() >= 2 && compiled.front() == '"' && compiled.back() == '"')
        compiled = compiled.substr(1, compiled.size() - 2);
    // A quoted definition arrives with escaped quotes (\"abc\"); drop those too.
    if (compiled.size() >= 4 && compiled.compare(0, 2, "\\\"") == 0) compiled = compiled.substr(2, compiled.size() - 4);
    if (!compiled.empty()) return {compiled, "compile definition"};
#endif
    if (const char* env = std::getenv("ROOFPLAN_GIT_SHA"); env != nullptr && *env != '\0')
        return {env, "environment"};
    return {"unknown", "none"};
}

// Environment variables that change what cuBLAS(Lt) does; recorded when set.
constexpr const char* kRelevantEnv[] = {"NVIDIA_TF32_OVERRIDE", "CUBLAS_EMULATION_STRATEGY", "CUBLASLT_LOG_LEVEL",
                                        "CUBLASLT_LOG_MASK", "CUBLAS_WORKSPACE_CONFIG", "CUDA_MODULE_LOADING",
                                        "CUDA_VISIBLE_DEVICES"};

// ---- cuBLASLt plan -------------------------------------------------------------------------------------

struct Context {
    cublasLtHandle_t lt = nullptr;
    cudaStream_t stream = nullptr;
    void* workspace = nullptr;
};

template <class T>
void desc_set(cublasLtMatmulDesc_t d, cublasLtMatmulDescAttributes_t attr, T value, const char* what) {
    const cublasStatus_t st = cublasLtMatmulDescSetAttribute(d, attr, &value, sizeof value);
    if (st != CUBLAS_STATUS_SUCCESS) cublas_fail(st, what, __FILE__, __LINE__);
}

template <class T>
void layout_set(cublasLtMatrixLayout_t l, cublasLtMatrixLayoutAttribute_t attr, T value, const char* what) {
    const cublasStatus_t st = cublasLtMatrixLayoutSetAttribute(l, attr, &value, sizeof value);
    if (st != CUBLAS_STATUS_SUCCESS) cublas_fail(st, what, __FILE__, __LINE__);
}

template <class T>
long long algo_config(const cublasLtMatmulAlgo_t& algo, cublasLtMatmulAlgoConfigAttributes_t attr) {
    T value{};
    std::size_t written = 0;
    if (cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, &value, sizeof value, &written) != CUBLAS_STATUS_SUCCESS ||
        written != sizeof value)
        return -1;
    return static_cast<long long>(value);
}

cublasLtMatrixLayout_t make_layout(cudaDataType_t type, std::int64_t rows, std::int64_t cols, std::int64_t ld,
                                   std::int64_t count) {
    cublasLtMatrixLayout_t l = nullptr;
    CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&l, type, std::uint64_t(rows), std::uint64_t(cols), ld));
    if (count > 1) {
        layout_set(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, std::int32_t(count), "BATCH_COUNT");
        layout_set(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, std::int64_t(rows * cols), "STRIDED_BATCH_OFFSET");
    }
    return l;
}

void destroy_plan(Plan& p) {
    if (p.a) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p.a));
    if (p.b) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p.b));
    if (p.d) CUBLAS_CHECK(cublasLtMatrixLayoutDestroy(p.d));
    if (p.desc) CUBLAS_CHECK(cublasLtMatmulDescDestroy(p.desc));
    p.a = p.b = p.d = nullptr;
    p.desc = nullptr;
}

// Builds the descriptors and asks the heuristic.  Returns false (with the reason) when cuBLASLt has no
// algorithm for the case; any other failure exits.
bool make_plan(Case& c, const Context& ctx) {
    const PrecSpec& s = *c.spec;
    const Shape& sh = c.shape;
    Plan& p = c.plan;
    CUBLAS_CHECK(cublasLtMatmulDescCreate(&p.desc, s.compute, s.scale_type));
    desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, std::int32_t(CUBLAS_OP_T), "TRANSA");
    desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, std::int32_t(CUBLAS_OP_N), "TRANSB");
    p.a = make_layout(s.ab_type, sh.k, sh.m, sh.k, sh.count);  // stored K x M, used transposed
    p.b = make_layout(s.ab_type, sh.k, sh.n, sh.k, sh.count);  // stored K x N
    p.d = make_layout(s.d_type, sh.m, sh.n, sh.m, sh.count);   // M x N

    cublasLtMatmulPreference_t pref = nullptr;
    CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = kWorkspaceBytes;
    CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    std::vector<cublasLtMatmulHeuristicResult_t> results(kHeuristicRequest);
    int returned = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(ctx.lt, p.desc, p.a, p.b, p.d, p.d, pref,
                                                             kHeuristicRequest, results.data(), &returned);
    CUBLAS_CHECK(cublasLtMatmulPreferenceDestroy(pref));
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && returned == 0)) {
        c.skip_reason = std::string("cuBLASLt has no algorithm for it (cublasLtMatmulAlgoGetHeuristic: ") +
                        (st == CUBLAS_STATUS_SUCCESS ? "0 results" : cublasGetStatusName(st)) + ")";
        destroy_plan(p);
        return false;
    }
    if (st != CUBLAS_STATUS_SUCCESS) cublas_fail(st, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
    if (results[0].state != CUBLAS_STATUS_SUCCESS)
        cublas_fail(results[0].state, "cublasLtMatmulAlgoGetHeuristic (first result's state)", __FILE__, __LINE__);
    p.heuristics = returned;
    p.algo = results[0].algo;
    p.algo_workspace = results[0].workspaceSize;
    p.waves = results[0].wavesCount;
    p.algo_id = algo_config<std::int32_t>(p.algo, CUBLASLT_ALGO_CONFIG_ID);
    p.tile_id = algo_config<std::uint32_t>(p.algo, CUBLASLT_ALGO_CONFIG_TILE_ID);
    p.stages_id = algo_config<std::uint32_t>(p.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID);
    p.splitk = algo_config<std::int32_t>(p.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM);
    p.reduction_scheme = algo_config<std::uint32_t>(p.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME);
    p.cluster_shape_id = algo_config<std::uint16_t>(p.algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID);
    return true;
}

// Queues one product D = op(A) op(B) on ctx.stream.
void enqueue_matmul(const Case& c, const Context& ctx, const void* a, const void* b, void* d) {
    const float one_f = 1.0f, zero_f = 0.0f;
    const std::int32_t one_i = 1, zero_i = 0;
    const bool int_scale = c.spec->scale_type == CUDA_R_32I;
    const void* alpha = int_scale ? static_cast<const void*>(&one_i) : static_cast<const void*>(&one_f);
    const void* beta = int_scale ? static_cast<const void*>(&zero_i) : static_cast<const void*>(&zero_f);
    CUBLAS_CHECK(cublasLtMatmul(ctx.lt, c.plan.desc, alpha, a, c.plan.a, b, c.plan.b, beta, d, c.plan.d, d, c.plan.d,
                                &c.plan.algo, ctx.workspace, kWorkspaceBytes, ctx.stream));
}

// ---- Verification ------------------------------------------------------------------------------------

void generate_case_inputs(const Case& c, std::uint64_t seed, std::vector<unsigned char>& ha,
                          std::vector<unsigned char>& hb) {
    SplitMix64 rng{case_seed(seed, c.index)};
    fill_inputs(ha, std::size_t(c.elems_a), *c.spec, rng);
    fill_inputs(hb, std::size_t(c.elems_b), *c.spec, rng);
}

[[noreturn]] void verification_failed(const Case& c, const std::string& what) {
    std::fprintf(stderr, "%s: verification FAILED for %s %s%s%s: %s. Nothing was timed.\n", kProgram, c.spec->name,
                 shape_text(c.shape).c_str(), c.shape.label.empty() ? "" : " ", c.shape.label.c_str(), what.c_str());
    std::exit(kExitVerifyFailed);
}

std::string position_text(const Case& c, std::uint64_t linear) {
    const std::uint64_t mn = std::uint64_t(c.shape.m) * std::uint64_t(c.shape.n);
    const std::uint64_t batch = linear / mn, rest = linear % mn;
    const std::uint64_t j = rest / std::uint64_t(c.shape.m), i = rest % std::uint64_t(c.shape.m);
    std::string t = "D(" + std::to_string(i) + ", " + std::to_string(j) + ")";
    if (c.shape.count > 1) t += " of batch " + std::to_string(batch);
    return t;
}

// The checked positions: `samples` random elements plus the corners of the first and last matrices, or
// every element when there are not many more than that.  Linear indices into D, sorted, without repeats.
std::vector<std::uint64_t> sample_positions(const Case& c, std::uint64_t seed, int samples) {
    const std::uint64_t total = c.elems_d;
    std::vector<std::uint64_t> pos;
    if (total <= std::uint64_t(samples) + 8) {
        pos.resize(std::size_t(total));
        for (std::uint64_t i = 0; i < total; ++i) pos[std::size_t(i)] = i;
        return pos;
    }
    const std::uint64_t m = std::uint64_t(c.shape.m), mn = m * std::uint64_t(c.shape.n);
    for (const std::uint64_t batch : {std::uint64_t{0}, std::uint64_t(c.shape.count - 1)}) {
        const std::uint64_t base = batch * mn;
        pos.push_back(base);                   // (0, 0)
        pos.push_back(base + m - 1);           // (M-1, 0)
        pos.push_back(base + mn - m);          // (0, N-1)
        pos.push_back(base + mn - 1);          // (M-1, N-1)
    }
    SplitMix64 rng{case_seed(seed, c.index) ^ 0x5DEECE66Dull};
    for (int s = 0; s < samples; ++s) pos.push_back(rng.next() % total);  // modulo bias is irrelevant here
    std::sort(pos.begin(), pos.end());
    pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
    return pos;
}

// Checks a product's output `hd` against inputs `ha`, `hb` (see the top of the file): every element written
// and finite, the sampled elements within the per-element bound, the norm-wise error within its limit.  Fills
// c.v (and c.note); returns an empty string when the output passes, else what is wrong.
std::string check_output(Case& c, const std::vector<unsigned char>& ha, const std::vector<unsigned char>& hb,
                         const std::vector<unsigned char>& hd, std::uint64_t seed, int samples) {
    const PrecSpec& s = *c.spec;

    // Every element written, nothing non-finite.
    for (std::uint64_t i = 0; i < c.elems_d; ++i) {
        if (s.out == OutFmt::i32) {
            if (load<std::int32_t>(hd.data(), std::size_t(i)) == kPoisonI32)
                return position_text(c, i) + " was not written (it still holds the poison 0x7f7f7f7f)";
        } else if (const double v = output_value(hd.data(), std::size_t(i), s.out); !std::isfinite(v)) {
            return position_text(c, i) +
                   (std::isnan(v) ? " is NaN (not written? the output was poisoned with NaN)" : " is infinite");
        }
    }

    // Sampled elements against full dot products.
    const std::vector<std::uint64_t> pos = sample_positions(c, seed, samples);
    const std::uint64_t m = std::uint64_t(c.shape.m), n = std::uint64_t(c.shape.n), k = std::uint64_t(c.shape.k);
    const std::uint64_t mn = m * n;
    const double bound = element_bound(s.prec, c.shape.k);
    double max_rel = 0, err2 = 0, ref2 = 0;
    for (const std::uint64_t lin : pos) {
        const std::uint64_t batch = lin / mn, rest = lin % mn, j = rest / m, i = rest % m;
        const std::size_t a0 = std::size_t(batch * m * k + i * k), b0 = std::size_t(batch * n * k + j * k);
        if (s.in == InFmt::i8) {
            std::int64_t ref = 0;
            for (std::uint64_t kk = 0; kk < k; ++kk)
                ref += std::int64_t(load<std::int8_t>(ha.data(), a0 + kk)) * load<std::int8_t>(hb.data(), b0 + kk);
            const std::int32_t got = load<std::int32_t>(hd.data(), std::size_t(lin));
            if (std::int64_t(got) != ref)
                return position_text(c, lin) + " is " + std::to_string(got) + ", expected " + std::to_string(ref) +
                       " [exact match required]";
            continue;
        }
        double ref = 0, abs_sum = 0;
        for (std::uint64_t kk = 0; kk < k; ++kk) {
            const double prod = double(input_value(ha.data(), a0 + kk, s.in)) * input_value(hb.data(), b0 + kk, s.in);
            ref += prod;
            abs_sum += std::fabs(prod);
        }
        const double got = output_value(hd.data(), std::size_t(lin), s.out);
        const double err = std::fabs(got - ref);
        const double rel = err / abs_sum;  // abs_sum > 0: the inputs are never zero
        if (!(rel <= bound)) {
            char buf[320];
            std::snprintf(buf, sizeof buf,
                          " is %.9g, expected %.17g: |error| %.3g is %.3g x sum|a b| (%.6g), over the bound %.3g "
                          "[relative tolerance exceeded]",
                          got, ref, err, rel, abs_sum, bound);
            return position_text(c, lin) + buf;
        }
        max_rel = std::max(max_rel, rel);
        err2 += err * err;
        ref2 += ref * ref;
    }
    c.v.checked = pos.size();
    c.v.element_bound = bound;
    c.v.norm_limit = norm_limit(s.prec, c.shape.k);
    c.v.max_rel_error = max_rel;
    c.v.rel_l2_error = ref2 > 0 ? std::sqrt(err2 / ref2) : 0.0;
    if (s.in != InFmt::i8 && !(c.v.rel_l2_error <= c.v.norm_limit)) {
        char buf[256];
        std::snprintf(buf, sizeof buf,
                      "the norm-wise error ||d - ref|| / ||ref|| over %zu checked elements is %.3g, over the limit "
                      "%.3g%s",
                      pos.size(), c.v.rel_l2_error, c.v.norm_limit,
                      s.prec == Prec::fp32 ? " (TF32 rounding gives about 3e-4)" : "");
        return buf;
    }
    if (s.prec == Prec::tf32 && c.v.rel_l2_error < 2e-5 && c.shape.k < (1 << 20))
        c.note = "the error is FP32-sized: the product shows no sign of TF32 rounding";
    return {};
}

// Runs the case once on fresh random inputs with a poisoned output and checks it (see the top of the file).
void verify_case(Case& c, const Context& ctx, std::uint64_t seed, int samples) {
    const PrecSpec& s = *c.spec;
    std::vector<unsigned char> ha, hb;
    generate_case_inputs(c, seed, ha, hb);

    void *da = nullptr, *db = nullptr, *dd = nullptr;
    CUDA_CHECK(cudaMalloc(&da, c.bytes_a));
    CUDA_CHECK(cudaMalloc(&db, c.bytes_b));
    CUDA_CHECK(cudaMalloc(&dd, c.bytes_d));
    CUDA_CHECK(cudaMemcpyAsync(da, ha.data(), c.bytes_a, cudaMemcpyHostToDevice, ctx.stream));
    CUDA_CHECK(cudaMemcpyAsync(db, hb.data(), c.bytes_b, cudaMemcpyHostToDevice, ctx.stream));
    // Poison: all-ones bytes are a NaN in fp32, fp16 and bf16; int32 gets 0x7f7f7f7f, which no int8 product
    // of these inputs can reach (|d| <= 64 K <= 2^30).
    CUDA_CHECK(cudaMemsetAsync(dd, s.out == OutFmt::i32 ? 0x7f : 0xFF, c.bytes_d, ctx.stream));
    enqueue_matmul(c, ctx, da, db, dd);
    std::vector<unsigned char> hd(std::size_t(c.bytes_d));
    CUDA_CHECK(cudaMemcpyAsync(hd.data(), dd, c.bytes_d, cudaMemcpyDeviceToHost, ctx.stream));
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));  // surfaces faults raised while the product ran
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaFree(da));
    CUDA_CHECK(cudaFree(db));
    CUDA_CHECK(cudaFree(dd));

    if (const std::string what = check_output(c, ha, hb, hd, seed, samples); !what.empty())
        verification_failed(c, what);
}

// ---- Timing ------------------------------------------------------------------------------------------

struct InputSets {
    std::vector<void*> a, b;
    void* d = nullptr;
};

// Runs the case back to back for warmup_ms of wall time, with at most a few runs queued ahead of the GPU (an
// event after each run; the host waits for the one two runs back), so the phase ends soon after warmup_ms.
int warm_clocks(const Case& c, const Context& ctx, const InputSets& sets, int warmup_ms) {
    if (warmup_ms <= 0) return 0;
    constexpr int kDepth = 4;
    cudaEvent_t ev[kDepth];
    for (cudaEvent_t& e : ev) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    const auto start = std::chrono::steady_clock::now();
    const auto limit = std::chrono::milliseconds(warmup_ms);
    int runs = 0;
    while (std::chrono::steady_clock::now() - start < limit) {
        const std::size_t s = std::size_t(runs) % sets.a.size();
        enqueue_matmul(c, ctx, sets.a[s], sets.b[s], sets.d);
        CUDA_CHECK(cudaEventRecord(ev[runs % kDepth], ctx.stream));
        ++runs;
        if (runs >= kDepth - 1) CUDA_CHECK(cudaEventSynchronize(ev[(runs + 1) % kDepth]));
    }
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    for (cudaEvent_t e : ev) CUDA_CHECK(cudaEventDestroy(e));
    return runs;
}

Timing time_case(const Case& c, const Context& ctx, const InputSets& sets, int warmup, int repeats, int warmup_ms) {
    Timing t;
    // events[r] is recorded just before timed run r and events[r + 1] just after it.
    std::vector<cudaEvent_t> events(std::size_t(repeats) + 1);
    for (cudaEvent_t& e : events) CUDA_CHECK(cudaEventCreate(&e));
    t.warm_runs = warm_clocks(c, ctx, sets, warmup_ms);

    // The lead kernel holds the stream while the host queues everything behind it: 2 ms, plus 100 us per run
    // queued, at most 250 ms.
    const double lead_s = std::min(0.25, 2e-3 + 1e-4 * double(warmup + repeats));
    t.lead_s = lead_s;
    lead_kernel<<<1, 1, 0, ctx.stream>>>(static_cast<unsigned long long>(lead_s * 1e9));
    CUDA_CHECK_LAUNCH("lead_kernel");
    const auto queue_start = std::chrono::steady_clock::now();
    std::size_t run = 0;
    for (int i = 0; i < warmup; ++i, ++run)
        enqueue_matmul(c, ctx, sets.a[run % sets.a.size()], sets.b[run % sets.b.size()], sets.d);
    for (int r = 0; r < repeats; ++r, ++run) {
        CUDA_CHECK(cudaEventRecord(events[std::size_t(r)], ctx.stream));
        enqueue_matmul(c, ctx, sets.a[run % sets.a.size()], sets.b[run % sets.b.size()], sets.d);
    }
    CUDA_CHECK(cudaEventRecord(events.back(), ctx.stream));
    t.host_enqueue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - queue_start).count();
    t.host_kept_ahead = t.host_enqueue_s < lead_s;
    CUDA_CHECK(cudaEventSynchronize(events.back()));
    CUDA_CHECK(cudaGetLastError());

    std::vector<double> seconds;
    seconds.reserve(std::size_t(repeats));
    for (std::size_t r = 0; r + 1 < events.size(); ++r) {
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, events[r], events[r + 1]));
        seconds.push_back(double(ms) * 1e-3);
    }
    for (cudaEvent_t e : events) CUDA_CHECK(cudaEventDestroy(e));

    std::sort(seconds.begin(), seconds.end());
    const std::size_t m = seconds.size();
    t.median_s = m % 2 ? seconds[m / 2] : 0.5 * (seconds[m / 2 - 1] + seconds[m / 2]);
    t.min_s = seconds.front();
    t.max_s = seconds.back();
    return t;
}

std::uint64_t round_up_256(std::uint64_t x) { return (x + 255) / 256 * 256; }

// Copies of A and B so that (sets - 1)(|A| + |B|) >= 2 x L2, within kMaxInputSets and the free memory.
int input_sets_for(const Case& c, std::uint64_t l2_bytes, std::uint64_t free_bytes) {
    const std::uint64_t per_set = round_up_256(c.bytes_a) + round_up_256(c.bytes_b);
    const std::uint64_t wanted = 1 + (2 * l2_bytes + per_set - 1) / per_set;
    const std::uint64_t reserve = round_up_256(c.bytes_d) + 256 * kMiB;  // D and some slack for cuBLASLt
    const std::uint64_t fit = free_bytes > reserve ? (free_bytes - reserve) / per_set : 0;
    return int(std::max<std::uint64_t>(1, std::min<std::uint64_t>({wanted, fit, std::uint64_t(kMaxInputSets)})));
}

void measure_case(Case& c, const Context& ctx, const DeviceInfo& dev, const Options& opt, std::uint64_t seed) {
    std::vector<unsigned char> ha, hb;
    generate_case_inputs(c, seed, ha, hb);  // the inputs the verification pass checked
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // With no L2 size reported, assume 64 MiB (more than any current GPU has).
    const std::uint64_t l2 = std::uint64_t(dev.l2_bytes.value_or(int(64 * kMiB)));
    c.input_sets = input_sets_for(c, l2, free_bytes);

    InputSets sets;
    sets.a.resize(std::size_t(c.input_sets));
    sets.b.resize(std::size_t(c.input_sets));
    for (int s = 0; s < c.input_sets; ++s) {
        CUDA_CHECK(cudaMalloc(&sets.a[std::size_t(s)], c.bytes_a));
        CUDA_CHECK(cudaMalloc(&sets.b[std::size_t(s)], c.bytes_b));
    }
    CUDA_CHECK(cudaMalloc(&sets.d, c.bytes_d));
    CUDA_CHECK(cudaMemcpyAsync(sets.a[0], ha.data(), c.bytes_a, cudaMemcpyHostToDevice, ctx.stream));
    CUDA_CHECK(cudaMemcpyAsync(sets.b[0], hb.data(), c.bytes_b, cudaMemcpyHostToDevice, ctx.stream));
    for (int s = 1; s < c.input_sets; ++s) {  // the same values at other addresses
        CUDA_CHECK(cudaMemcpyAsync(sets.a[std::size_t(s)], sets.a[0], c.bytes_a, cudaMemcpyDeviceToDevice, ctx.stream));
        CUDA_CHECK(cudaMemcpyAsync(sets.b[std::size_t(s)], sets.b[0], c.bytes_b, cudaMemcpyDeviceToDevice, ctx.stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    ha.clear();
    ha.shrink_to_fit();
    hb.clear();
    hb.shrink_to_fit();

    c.t = time_case(c, ctx, sets, opt.warmup, opt.repeats, opt.warmup_ms);
    const double ops = 2.0 * double(c.shape.m) * double(c.shape.n) * double(c.shape.k) * double(c.shape.count);
    c.rate = ops / c.t.median_s / 1e12;

    for (void* p : sets.a) CUDA_CHECK(cudaFree(p));
    for (void* p : sets.b) CUDA_CHECK(cudaFree(p));
    CUDA_CHECK(cudaFree(sets.d));
}

// ---- Report ------------------------------------------------------------------------------------------

std::string precision_list(const Options& opt) {
    std::string t;
    for (const Prec p : opt.precisions) t += std::string(t.empty() ? "" : ",") + spec_of(p).name;
    return t;
}

std::string build_json(const Options& opt, const DeviceInfo& dev, int argc, char** argv, std::uint64_t seed,
                       const std::vector<Case>& cases) {
    const auto [git_sha, git_source] = git_sha_and_source(opt);
    std::string cmd = "[";
    for (int i = 0; i < argc; ++i) cmd += (i ? ", " : "") + json_string(argv[i]);
    cmd += "]";
    const std::string nvcc_version = std::to_string(__CUDACC_VER_MAJOR__) + "." +
                                     std::to_string(__CUDACC_VER_MINOR__) + "." +
                                     std::to_string(__CUDACC_VER_BUILD__);
    std::string env = "{";
    for (const char* name : kRelevantEnv)
        if (const char* v = std::getenv(name); v != nullptr)
            env += std::string(env.size() > 1 ? ", " : "") + json_string(name) + ": " + json_string(v);
    env += "}";

    std::string j;
    j += "{\n";
    j += "  \"tool\": \"roofplan-gemm\",\n";
    j += "  \"schema_version\": 1,\n";
    j += "  \"provenance\": {\n";
    j += "    \"program\": " + json_string(kProgram) + ",\n";
    j += "    \"version\": " + json_string(kVersion) + ",\n";
    j += "    \"date_utc\": " + json_string(utc_now_iso8601()) + ",\n";
    j += "    \"command_line\": " + cmd + ",\n";
    j += "    \"git_sha\": " + json_string(git_sha) + ",\n";
    j += "    \"git_sha_source\": " + json_string(git_source) + ",\n";
    j += "    \"driver_version\": " + json_string(version_string(dev.driver_version)) + ",\n";
    j += "    \"driver_version_code\": " + json_number(dev.driver_version) + ",\n";
    j += "    \"runtime_version\": " + json_string(version_string(dev.runtime_version)) + ",\n";
    j += "    \"runtime_version_code\": " + json_number(dev.runtime_version) + ",\n";
    j += "    \"cublaslt_version\": " + json_string(cublas_version_string(cublasLtGetVersion())) + ",\n";
    j += "    \"cublaslt_version_code\": " + json_number(std::uint64_t(cublasLtGetVersion())) + ",\n";
    j += "    \"cublas_header_version\": " + json_string(cublas_version_string(CUBLAS_VERSION)) + ",\n";
    j += "    \"compiler\": " + json_string("nvcc " + nvcc_version) + ",\n";
    j += "    \"environment\": " + env + ",\n";
    j += "    \"device\": {\n";
    j += "      \"index\": " + json_number(dev.index) + ",\n";
    j += "      \"name\": " + json_string(dev.name) + ",\n";
    j += "      \"pci_bus_id\": " + json_string(dev.pci_bus_id) + ",\n";
    j += "      \"compute_capability\": " +
         json_string(std::to_string(dev.cc_major) + "." + std::to_string(dev.cc_minor)) + ",\n";
    j += "      \"sm_count\": " + json_number(dev.sm_count) + ",\n";
    j += "      \"clock_rate_khz\": " + json_optional(dev.clock_khz) + ",\n";
    j += "      \"memory_clock_rate_khz\": " + json_optional(dev.memory_clock_khz) + ",\n";
    j += "      \"memory_bus_width_bits\": " + json_optional(dev.memory_bus_width_bits) + ",\n";
    j += "      \"l2_cache_bytes\": " + json_optional(dev.l2_bytes) + ",\n";
    j += "      \"global_memory_bytes\": " + json_number(std::uint64_t{dev.global_memory_bytes}) + ",\n";
    j += "      \"ecc_enabled\": " + json_bool(dev.ecc) + "\n";
    j += "    }\n";
    j += "  },\n";
    j += "  \"config\": {\n";
    j += "    \"precisions\": " + json_string(precision_list(opt)) + ",\n";
    j += "    \"warmup\": " + json_number(opt.warmup) + ",\n";
    j += "    \"warmup_ms\": " + json_number(opt.warmup_ms) + ",\n";
    j += "    \"repeats\": " + json_number(opt.repeats) + ",\n";
    j += "    \"seed\": " + json_number(seed) + ",\n";
    j += "    \"samples\": " + json_number(opt.samples) + ",\n";
    j += "    \"workspace_bytes\": " + json_number(std::uint64_t{kWorkspaceBytes}) + ",\n";
    j += "    \"heuristic_results_requested\": " + json_number(kHeuristicRequest) + ",\n";
    j += "    \"algo_index_used\": 0,\n";
    j += "    \"layout\": \"TN, CUBLASLT_ORDER_COL: A stored K x M (lda = K) with op(A) = T, B stored K x N (ldb = K), "
         "D M x N (ldd = M); alpha = 1, beta = 0, C = D; strided batch of count\",\n";
    j += "    \"timing\": \"CUDA events between back-to-back runs on one stream behind a lead kernel; inputs rotate "
         "through input_sets copies of A and B so that (input_sets - 1)(|A| + |B|) >= 2 x L2 where memory allows\",\n";
    j += "    \"rate\": \"tflops = 2 m n k count / time_s_median / 1e12 (tera-operations for int8: TOPS)\",\n";
    j += "    \"error_measure\": \"max_rel_error = max |d - ref| / sum_k |a_k b_k| over the checked elements; "
         "rel_l2_error = ||d - ref||_2 / ||ref||_2 over them; int8 exact\"\n";
    j += "  },\n";
    j += "  \"results\": [\n";
    bool first = true;
    for (const Case& c : cases) {
        if (!c.skip_reason.empty()) continue;
        const Plan& p = c.plan;
        j += first ? "" : ",\n";
        first = false;
        j += "    {\"precision\": " + json_string(c.spec->name) + ", \"m\": " + json_number(c.shape.m) +
             ", \"n\": " + json_number(c.shape.n) + ", \"k\": " + json_number(c.shape.k) +
             ", \"count\": " + json_number(c.shape.count) + ", \"label\": " + json_string(c.shape.label) +
             ", \"time_s_median\": " + json_number(c.t.median_s) + ", \"time_s_min\": " + json_number(c.t.min_s) +
             ", \"time_s_max\": " + json_number(c.t.max_s) + ", \"tflops\": " + json_number(c.rate) +
             ", \"rate_unit\": " + json_string(c.spec->rate_unit) + ", \"verified\": true" +
             ", \"checked_elements\": " + json_number(c.v.checked) +
             ", \"all_elements_written\": true" +
             ", \"max_rel_error\": " + json_number(c.v.max_rel_error) +
             ", \"rel_l2_error\": " + json_number(c.v.rel_l2_error) +
             ", \"element_bound\": " + json_number(c.v.element_bound) +
             ", \"norm_limit\": " + json_number(c.v.norm_limit) +
             ", \"algo_heuristics\": " + json_number(p.heuristics) +
             ", \"algo_index\": 0, \"algo_id\": " + json_number(p.algo_id) +
             ", \"tile_id\": " + json_number(p.tile_id) + ", \"stages_id\": " + json_number(p.stages_id) +
             ", \"splitk\": " + json_number(p.splitk) + ", \"reduction_scheme\": " + json_number(p.reduction_scheme) +
             ", \"cluster_shape_id\": " + json_number(p.cluster_shape_id) +
             ", \"algo_workspace_bytes\": " + json_number(std::uint64_t{p.algo_workspace}) +
             ", \"waves\": " + json_number(double(p.waves)) +
             ", \"input_sets\": " + json_number(c.input_sets) +
             ", \"bytes_a\": " + json_number(c.bytes_a) + ", \"bytes_b\": " + json_number(c.bytes_b) +
             ", \"bytes_d\": " + json_number(c.bytes_d) +
             ", \"warm_runs\": " + json_number(c.t.warm_runs) + ", \"lead_s\": " + json_number(c.t.lead_s) +
             ", \"host_enqueue_s\": " + json_number(c.t.host_enqueue_s) +
             ", \"host_kept_ahead\": " + json_bool(c.t.host_kept_ahead) +
             ", \"compute_type\": " + json_string(c.spec->compute_name) +
             ", \"ab_type\": " + json_string(c.spec->ab_type_name) +
             ", \"d_type\": " + json_string(c.spec->d_type_name) +
             ", \"scale_type\": " + json_string(c.spec->scale_type_name) +
             ", \"note\": " + (c.note.empty() ? std::string("null") : json_string(c.note)) + "}";
    }
    j += first ? "" : "\n";
    j += "  ],\n";
    j += "  \"skipped\": [\n";
    first = true;
    for (const Case& c : cases) {
        if (c.skip_reason.empty()) continue;
        j += first ? "" : ",\n";
        first = false;
        j += "    {\"precision\": " + json_string(c.spec->name) + ", \"m\": " + json_number(c.shape.m) +
             ", \"n\": " + json_number(c.shape.n) + ", \"k\": " + json_number(c.shape.k) +
             ", \"count\": " + json_number(c.shape.count) + ", \"label\": " + json_string(c.shape.label) +
             ", \"reason\": " + json_string(c.skip_reason) + "}";
    }
    j += first ? "" : "\n";
    j += "  ]\n";
    j += "}\n";
    return j;
}

void print_table(const DeviceInfo& dev, const Options& opt, std::uint64_t seed, const std::vector<Case>& cases) {
    std::fprintf(stderr, "\n%s: %s [device %d, %s], sm_%d%d, %d SMs", kProgram, dev.name.c_str(), dev.index,
                 dev.pci_bus_id.c_str(), dev.cc_major, dev.cc_minor, dev.sm_count);
    if (dev.l2_bytes) std::fprintf(stderr, ", L2 %.1f MiB", double(*dev.l2_bytes) / double(kMiB));
    std::fprintf(stderr, "\n  driver %s, runtime %s, cuBLASLt %s\n", version_string(dev.driver_version).c_str(),
                 version_string(dev.runtime_version).c_str(), cublas_version_string(cublasLtGetVersion()).c_str());
    std::fprintf(stderr,
                 "  TN layout, heuristic algorithm #0, 32 MiB workspace; %d ms + %d warm-up runs, %d timed runs per "
                 "case; seed %llu\n",
                 opt.warmup_ms, opt.warmup, opt.repeats, static_cast<unsigned long long>(seed));
    std::fprintf(stderr, "  every case verified before timing (all elements written; sampled elements vs CPU)\n\n");
    std::fprintf(stderr, "  %-5s %-26s %-12s %4s %11s %11s %11s %9s %9s %9s %5s %5s %5s\n", "prec", "M x N x K (count)",
                 "label", "sets", "median us", "min us", "max us", "T(FL)OPS", "max rel", "rel l2", "algos", "id",
                 "tile");
    for (const Case& c : cases) {
        const std::string label = c.shape.label.size() > 12 ? c.shape.label.substr(0, 11) + "~" : c.shape.label;
        if (!c.skip_reason.empty()) {
            std::fprintf(stderr, "  %-5s %-26s %-12s skipped: %s\n", c.spec->name, shape_text(c.shape).c_str(),
                         label.c_str(), c.skip_reason.c_str());
            continue;
        }
        std::fprintf(stderr, "  %-5s %-26s %-12s %4d %11.2f %11.2f %11.2f %9.1f %9.2e %9.2e %5d %5lld %5lld%s%s\n",
                     c.spec->name, shape_text(c.shape).c_str(), label.c_str(), c.input_sets, c.t.median_s * 1e6,
                     c.t.min_s * 1e6, c.t.max_s * 1e6, c.rate, c.v.max_rel_error, c.v.rel_l2_error, c.plan.heuristics,
                     c.plan.algo_id, c.plan.tile_id, c.t.host_kept_ahead ? "" : "  [host fell behind]",
                     c.note.empty() ? "" : "  [note]");
    }
    for (const Case& c : cases)
        if (!c.note.empty())
            std::fprintf(stderr, "  note, %s %s: %s\n", c.spec->name, shape_text(c.shape).c_str(), c.note.c_str());
}

// ---- The run -----------------------------------------------------------------------------------------

int run(const Options& opt, const DeviceInfo& dev, int argc, char** argv) {
    // The cases: precision by precision, shapes in command-line order.
    std::vector<Case> cases;
    for (const Prec p : opt.precisions)
        for (const Shape& sh : opt.shapes) {
            Case c;
            c.index = cases.size();
            c.spec = &spec_of(p);
            c.shape = sh;
            cases.push_back(c);
        }

    Context ctx;
    CUBLAS_CHECK(cublasLtCreate(&ctx.lt));
    CUDA_CHECK(cudaStreamCreate(&ctx.stream));
    CUDA_CHECK(cudaMalloc(&ctx.workspace, kWorkspaceBytes));
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));

    // Sizes, int8's layout rules, and whether one set of A, B and D fits in the free device memory.
    std::vector<std::string> too_big;
    for (Case& c : cases) {
        const Shape& s = c.shape;
        const std::uint64_t m = std::uint64_t(s.m), n = std::uint64_t(s.n), k = std::uint64_t(s.k),
                            cnt = std::uint64_t(s.count);
        bool overflow = mul_overflows(m, k, c.elems_a) || mul_overflows(c.elems_a, cnt, c.elems_a) ||
                        mul_overflows(n, k, c.elems_b) || mul_overflows(c.elems_b, cnt, c.elems_b) ||
                        mul_overflows(m, n, c.elems_d) || mul_overflows(c.elems_d, cnt, c.elems_d) ||
                        mul_overflows(c.elems_a, c.spec->ab_bytes, c.bytes_a) ||
                        mul_overflows(c.elems_b, c.spec->ab_bytes, c.bytes_b) ||
                        mul_overflows(c.elems_d, c.spec->d_bytes, c.bytes_d);
        std::uint64_t need = 0;
        if (!overflow)
            overflow = __builtin_add_overflow(round_up_256(c.bytes_a), round_up_256(c.bytes_b), &need) ||
                       __builtin_add_overflow(need, round_up_256(c.bytes_d), &need) ||
                       need > (std::uint64_t{1} << 62);
        if (c.spec->prec == Prec::int8) {
            if (s.m % 4 != 0 || s.k % 4 != 0)
                c.skip_reason = "int8 (cuBLASLt IMMA, TN column-major) needs M and K to be multiples of 4";
            else if (s.k > (std::int64_t{1} << 24))
                c.skip_reason = "int8 with K > 2^24: the int32 result of these inputs could reach the poison value";
        }
        if (c.skip_reason.empty() && (overflow || need > free_bytes)) {
            char buf[512];
            if (overflow)
                std::snprintf(buf, sizeof buf, "%s %s (from %s): its matrices are too large to count in bytes",
                              c.spec->name, shape_text(s).c_str(), s.origin.c_str());
            else
                std::snprintf(buf, sizeof buf,
                              "%s %s (from %s) needs %.1f MiB of device memory (A %.1f, B %.1f, D %.1f MiB), but only "
                              "%.1f MiB are free on device %d after the 32 MiB workspace",
                              c.spec->name, shape_text(s).c_str(), s.origin.c_str(), double(need) / double(kMiB),
                              double(c.bytes_a) / double(kMiB), double(c.bytes_b) / double(kMiB),
                              double(c.bytes_d) / double(kMiB), double(free_bytes) / double(kMiB), dev.index);
            too_big.push_back(buf);
        }
    }
    if (!too_big.empty()) {
        for (const std::string& t : too_big) std::fprintf(stderr, "%s: error: %s\n", kProgram, t.c_str());
        usage_error("choose smaller shapes (nothing was run)");
    }
    for (const Case& c : cases)
        if (!c.skip_reason.empty())
            std::fprintf(stderr, "%s: warning: skipping %s %s: %s\n", kProgram, c.spec->name,
                         shape_text(c.shape).c_str(), c.skip_reason.c_str());
    if (std::all_of(cases.begin(), cases.end(), [](const Case& c) { return !c.skip_reason.empty(); }))
        usage_error("every requested case is skipped; nothing to run");
    if (const char* o = std::getenv("NVIDIA_TF32_OVERRIDE");
        o != nullptr && std::string_view(o) == "0" &&
        std::find(opt.precisions.begin(), opt.precisions.end(), Prec::tf32) != opt.precisions.end())
        std::fprintf(stderr, "%s: warning: NVIDIA_TF32_OVERRIDE=0 is set, which turns TF32 off: the tf32 cases will "
                     "run in plain FP32\n", kProgram);

    // Default seed from the clock, kept below 2^53 so that it survives a round trip through a JSON double.
    const std::uint64_t seed =
        opt.seed ? *opt.seed
                 : std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) & ((1ull << 53) - 1);

    // Pass 1: verify every case.
    for (Case& c : cases) {
        if (!c.skip_reason.empty()) continue;
        if (!make_plan(c, ctx)) {
            std::fprintf(stderr, "%s: warning: skipping %s %s: %s\n", kProgram, c.spec->name,
                         shape_text(c.shape).c_str(), c.skip_reason.c_str());
            continue;
        }
        verify_case(c, ctx, seed, opt.samples);
        std::fprintf(stderr, "%s: verified %s %s: %llu elements checked, max rel error %.3g, rel l2 error %.3g\n",
                     kProgram, c.spec->name, shape_text(c.shape).c_str(),
                     static_cast<unsigned long long>(c.v.checked), c.v.max_rel_error, c.v.rel_l2_error);
    }
    if (std::all_of(cases.begin(), cases.end(), [](const Case& c) { return !c.skip_reason.empty(); })) {
        std::fprintf(stderr, "%s: error: cuBLASLt offered an algorithm for none of the cases\n", kProgram);
        return kExitCudaError;
    }

    // Pass 2: time every case.
    for (Case& c : cases) {
        if (!c.skip_reason.empty()) continue;
        measure_case(c, ctx, dev, opt, seed);
        std::fprintf(stderr, "%s: timed %s %s: median %.2f us, %.1f %s%s\n", kProgram, c.spec->name,
                     shape_text(c.shape).c_str(), c.t.median_s * 1e6, c.rate, c.spec->rate_unit,
                     c.t.host_kept_ahead ? "" : " (the host fell behind the lead kernel: launch gaps possible)");
    }

    for (Case& c : cases) destroy_plan(c.plan);
    CUDA_CHECK(cudaFree(ctx.workspace));
    CUDA_CHECK(cudaStreamDestroy(ctx.stream));
    CUBLAS_CHECK(cublasLtDestroy(ctx.lt));

    print_table(dev, opt, seed, cases);
    const std::string json = build_json(opt, dev, argc, argv, seed, cases);
    if (opt.json_path.empty()) {
        std::fputs(json.c_str(), stdout);
        if (std::fflush(stdout) != 0) {
            std::perror("roofplan-gemm: error: writing the JSON report to stdout");
            return kExitCudaError;
        }
        return 0;
    }
    std::FILE* f = std::fopen(opt.json_path.c_str(), "w");
    const bool written = f != nullptr && std::fputs(json.c_str(), f) >= 0;
    if (f == nullptr || std::fclose(f) != 0 || !written) {
        std::fprintf(stderr, "%s: error: cannot write the JSON report to '%s'; here it is on stdout instead\n",
                     kProgram, opt.json_path.c_str());
        std::fputs(json.c_str(), stdout);
        return kExitCudaError;
    }
    std::fprintf(stderr, "\n  JSON report written to %s\n", opt.json_path.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse_args(argc, argv);

    int device_count = 0;
    const cudaError_t err = cudaGetDeviceCount(&device_count);
    if (err != cudaSuccess || device_count == 0) {
        if (err == cudaSuccess)
            std::fprintf(stderr, "%s: no CUDA device available (the driver reports 0 devices)\n", kProgram);
        else
            std::fprintf(stderr, "%s: no CUDA device available: cudaGetDeviceCount failed with %s (%s)%s\n",
                         kProgram, cudaGetErrorName(err), cudaGetErrorString(err),
                         err == cudaErrorInsufficientDriver
                             ? "; the runtime also says this when no NVIDIA driver is installed"
                             : "");
        return kExitNoDevice;
    }
    if (opt.device >= device_count)
        usage_error("--device " + std::to_string(opt.device) + " does not exist; this machine has " +
                    std::to_string(device_count) + " CUDA device(s)");
    CUDA_CHECK(cudaSetDevice(opt.device));

    const DeviceInfo dev = query_device(opt.device);
    try {
        return run(opt, dev, argc, argv);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: error: out of host memory (the host keeps one case's A, B and D)\n", kProgram);
        return kExitCudaError;
    }
}
