// kernels/dp4a/dp4a_bench.cu — roofplan-dp4a: the chip's DP4A (int8 dot-product instruction) rate, and an int8
// matrix product (GEMM) built on it, as a fraction of that rate.
//
// What DP4A is.  __dp4a(a, b, c) (PTX dp4a.s32.s32, SASS IDP4A; sm_61 and newer) splits the 32-bit words a and b
// into four signed bytes each, multiplies them pairwise and adds the four products to the 32-bit c; the sum wraps
// modulo 2^32 (there is no saturation).  One instruction per thread is 4 int8 multiply-adds, counted here as
// 8 operations, the convention of int8 TOPS figures.  It runs on the SM's ordinary integer pipes, not on the
// tensor cores (IMMA/QGMMA), so its rate is far under the chip's int8 tensor rate; the CUDA Programming Guide's
// table of arithmetic-instruction throughputs gives no row for it, so this program measures it.
//
// Part 1, --test issue-rate: the peak DP4A rate.  Each thread keeps kIssueChains (16) independent 32-bit
// accumulators; one step of chain j is  acc_j = __dp4a(acc_j, b_j, acc_j)  (the accumulator also is the first
// operand, so the chain is non-linear and no compiler can fold or hoist it).  b_j and the initial acc_j come from
// a hash of (runtime seed, global thread index, j); every byte of b_j is odd, hence non-zero.  The loop over
// --issue-iters steps is unrolled 8 times, so the loop counter and branch are 2 or 3 instructions per 128 IDP4A.
// At the end each thread writes the (wrapping) sum of its accumulators to global memory, so nothing is dead.
// The grid is 4 waves of the occupancy limit (cudaOccupancyMaxActiveBlocksPerMultiprocessor blocks of 256
// threads on every SM), all blocks doing the same work.  Rates:
//   TOPS                 = 8 x (number of DP4A instructions executed by threads) / median time / 1e12
//   dp4a per SM per clock = (DP4A thread-instructions) / (median time x SMs x clock), the clock being
//                           cudaDevAttrClockRate (the highest SM clock the device reports; CUDA 13 keeps the
//                           attribute, though it dropped cudaDeviceProp::clockRate).  If the clock ran below that,
//                           this understates the per-clock figure; it is null when the attribute is not reported.
// Checked: a verification launch of 11 steps per chain (one pass of the unrolled loop and a remainder of 3)
// compares every thread's output with a host recomputation of its 16 chains (exact, modulo 2^32); after timing,
// the output of the last timed launch is checked the same way at sampled threads (the first, the last and up to
// 62 others).  The disassembly must show the DP4A steps as IDP4A instructions, which cuobjdump (CUDA 13) prints
// as IDP.4A.S8.S8; this counts them per kernel in the Hopper code:
//   cuobjdump -sass -arch sm_90 roofplan-dp4a | awk '/Function :/{f=$3} /IDP\.4A/{n[f]++} END{for (k in n) print n[k], k}'
// Seen with nvcc 13.0 for sm_90 (and the same counts for sm_75): the issue-rate kernel's main loop is 128
// IDP.4A.S8.S8 plus UIADD3, ISETP and BRA (131 instructions; 144 IDP.4A in all with the remainder loop), 39
// registers; each GEMM kernel holds 1024 IDP.4A (16 k-words x 64, fully unrolled), see part 2.
//
// Part 2, --test gemm: C (int32, M x N, row-major) = A (int8, M x K, row-major) . B^T, with B stored N x K
// row-major ("TN": both operands are read along K, 4 bytes = one DP4A operand at a time), int32 accumulation,
// one launch of this program's own kernel:
//   - a 128 x 128 tile of C per block of 256 threads (16 x 16), each thread an 8 x 8 micro-tile of registers
//     (rows ty*4 + 0..3 and 64 + ty*4 + 0..3, columns tx*4 + 0..3 and 64 + tx*4 + 0..3): per 4-byte k-word a
//     thread reads 2 x 16 bytes of A and 2 x 16 bytes of B from shared memory (4 LDS.128) and issues 64 IDP4A;
//   - K advances 64 bytes (16 k-words) per tile.  Global loads are 16-byte (int4) when K is a multiple of 16
//     (else 4-byte words), each warp reading 16 rows x 32 contiguous bytes; tiles are stored in shared memory
//     transposed, k-word-major ([k-word][row], rows padded from 128 to 132 words), so that a thread's 4 rows are
//     one 16-byte read; the padding makes the transposing stores conflict-free (the two k-halves of a warp land
//     16 banks apart) and the micro-tile reads are broadcasts (A) or 256 contiguous bytes (B);
//   - two shared-memory buffers: the next tile's global loads are issued into registers before the current tile
//     is computed and stored to the other buffer after it, one __syncthreads per tile;
//   - __launch_bounds__(256, 2): up to 128 registers a thread, two blocks (16 warps) an SM.  Seen with nvcc 13.0
//     for sm_90: 128 registers (16-byte path) and 127 (4-byte path), no spills, 33792 bytes of shared memory; the
//     main loop per 64-byte tile is 1024 IDP.4A.S8.S8, 64 LDS.128, 16 STS, 4 LDG.E.128.CONSTANT and about 60
//     others (addresses, guards, branches, the barrier): IDP.4A is 87.5% of the instructions issued.
// Rows and columns past M or N, and k-words past K, are loaded as zeros and not stored: any M, N, K that are
// multiples of 4 work (checked on the command line, with K <= 131072 so that |C| <= 127^2 K stays below the
// poison value and inside int32).
//   TOPS = 2 M N K / median time / 1e12;  fraction_of_measured_peak = GEMM TOPS / issue-rate TOPS of this run.
// What to expect (reasoned from the disassembly, not yet measured): if IDP4A issues at half the warp-instruction
// rate (64 lanes per SM per clock) the other 12.5% of the instructions fit into free issue slots and the GEMM
// should come within 10-20% of the issue-rate kernel; if it issues at the full rate, issue slots cap it near 87%.
// Global traffic at 8192^3 is 1 KiB per 16384 DP4A per block, well under L2 bandwidth.  The project's target is
// >= 70% of the measured peak at 8192^3 on an H200.
//
// Correctness comes before timing, for every case before any case is timed (and for the issue-rate kernel before
// it is timed).  GEMM inputs are fresh random int8 values in [-127, 127] without 0 from a seeded host generator
// (SplitMix64; --seed, else the clock; each case its own seed derived from it); C is poisoned with 0x7f7f7f7f
// before the checked run, every element must then differ from the poison, and elements are compared bit-exactly
// with int64 dot products on the CPU: all of them when M, N and K are all <= 1024, else --samples (4096) seeded
// random elements plus the four corners.  A failed check names the element and both values and exits with
// status 1 before anything is timed.
//
// Timing (as roofplan-gemm): the GEMM's inputs rotate through S copies of A and B with (S - 1)(|A| + |B|) >= 2 x L2
// (at most 64, as memory allows), so that consecutive runs do not find their inputs in L2.  Each measurement
// first runs back to back for --warmup-ms (100 ms) so that the clocks ramp up, then a lead kernel spins on the GPU
// while the host queues --warmup (5) and --repeats (20) launches on one stream with a CUDA event between
// consecutive launches; each repeat is the time between two events; median, min and max are reported.
//
// Output: progress and a table on stderr, a JSON document (provenance, configuration, one record per test) on
// stdout or in --json PATH.  Exit status: 0 success, 1 verification failed, 2 bad command line (including a case
// that cannot fit in device memory), 3 CUDA or I/O error, 77 no CUDA device (CTest's SKIP_RETURN_CODE).
//
// Build: part of `roofplan_kernels` (target roofplan-dp4a), or on its own:
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90,code=sm_90 kernels/dp4a/dp4a_bench.cu -o build-dev/roofplan-dp4a
// (-DROOFPLAN_GIT_SHA=<sha> records the source revision; --git-sha overrides it at run time).

#include <cuda_runtime.h>

#include <algorithm>
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

constexpr const char* kProgram = "roofplan-dp4a";
constexpr const char* kVersion = "0.1.0";  // roofplan's version (include/roofplan/version.hpp); keep in step
constexpr int kExitVerifyFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCudaError = 3;
constexpr int kExitNoDevice = 77;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr int kMaxInputSets = 64;        // copies of A and B rotated through while timing a GEMM
constexpr std::int64_t kMaxK = 131072;   // 127^2 K stays below the poison 0x7f7f7f7f and inside int32
constexpr std::int32_t kPoisonI32 = 0x7f7f7f7f;  // cudaMemset byte 0x7f

// ---- Error checking ----------------------------------------------------------------------------------

[[noreturn]] void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: CUDA error: %s: %s (%s)\n", file, line, call, cudaGetErrorString(err),
                 cudaGetErrorName(err));
    std::exit(kExitCudaError);
}

// Checks the cudaError_t returned by a runtime call; on failure prints file:line, the call and the error.
#define CUDA_CHECK(call)                                                  \
    do {                                                                  \
        const cudaError_t roofplan_err_ = (call);                         \
        if (roofplan_err_ != cudaSuccess)                                 \
            cuda_fail(roofplan_err_, #call, __FILE__, __LINE__);          \
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

// ---- Device code: the DP4A issue-rate kernel -------------------------------------------------------------

constexpr int kIssueChains = 16;        // independent accumulators per thread
constexpr int kIssueThreads = 256;      // threads per block
constexpr int kIssueWaves = 4;          // grid = waves x (resident blocks per SM) x SMs
constexpr int kIssueVerifyIters = 11;   // one unrolled pass of 8 and a remainder of 3

// A 32-bit mixing function (Wellons' "lowbias32"), the same on host and device.
__host__ __device__ inline std::uint32_t mix32(std::uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

// Chain j of global thread t: its constant operand (every byte odd, hence non-zero) and its initial value.
__host__ __device__ inline std::uint32_t issue_operand(std::uint32_t seed, std::uint32_t t, int j) {
    return mix32(seed ^ mix32(t * 0x9E3779B9u + std::uint32_t(j) * 0x85EBCA6Bu + 0x632BE5ABu)) | 0x01010101u;
}
__host__ __device__ inline std::uint32_t issue_initial(std::uint32_t seed, std::uint32_t t, int j) {
    return mix32(~seed ^ mix32(t * 0xC2B2AE35u + std::uint32_t(j) * 0x27D4EB2Fu + 0x165667B1u));
}

// Every thread runs kIssueChains independent chains acc = dp4a(acc, b, acc) for `iters` steps and writes the
// wrapping sum of its accumulators to out[global thread index].
__global__ void __launch_bounds__(kIssueThreads) dp4a_issue_kernel(std::uint32_t seed, int iters,
                                                                    std::uint32_t* __restrict__ out) {
    const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
    int acc[kIssueChains], b[kIssueChains];
#pragma unroll
    for (int j = 0; j < kIssueChains; ++j) {
        b[j] = int(issue_operand(seed, t, j));
        acc[j] = int(issue_initial(seed, t, j));
    }
#pragma unroll 8
    for (int i = 0; i < iters; ++i) {
#pragma unroll
        for (int j = 0; j < kIssueChains; ++j) acc[j] = __dp4a(acc[j], b[j], acc[j]);
    }
    std::uint32_t sum = 0;
#pragma unroll
    for (int j = 0; j < kIssueChains; ++j) sum += std::uint32_t(acc[j]);
    out[t] = sum;
}

// ---- Device code: the int8 GEMM on DP4A ------------------------------------------------------------------

constexpr int kBM = 128;               // rows of C per block
constexpr int kBN = 128;               // columns of C per block
constexpr int kBKW = 16;               // k-words (4 bytes of K each) per shared-memory tile: 64 bytes of K
constexpr int kGemmThreads = 256;      // 16 x 16 threads, each an 8 x 8 micro-tile
constexpr int kLd = kBM + 4;           // padded length, in words, of a transposed tile's rows
static_assert(kBM == kBN, "the loader below assumes square block tiles");
static_assert(kLd % 4 == 0, "rows of the shared tiles must stay 16-byte aligned for the int4 reads");

// Four consecutive k-words (16 bytes of K), words kw .. kw + 3, of row `row` of an int8 matrix with `rows` rows
// of K bytes; zeros for a row past the end and for words past K.  With kVec16 (K a multiple of 16) the four
// words are all inside or all outside K and the row starts 16-byte aligned: one 16-byte load.
template <bool kVec16>
__device__ __forceinline__ int4 load_chunk(const std::int8_t* __restrict__ base, int rows, int row, int k_bytes,
                                           int kw_total, int kw) {
    int4 v = make_int4(0, 0, 0, 0);
    if (row < rows) {
        const int* p = reinterpret_cast<const int*>(base + std::size_t(row) * std::size_t(k_bytes)) + kw;
        if (kVec16) {
            if (kw < kw_total) v = __ldg(reinterpret_cast<const int4*>(p));
        } else {
            if (kw < kw_total) v.x = __ldg(p);
            if (kw + 1 < kw_total) v.y = __ldg(p + 1);
            if (kw + 2 < kw_total) v.z = __ldg(p + 2);
            if (kw + 3 < kw_total) v.w = __ldg(p + 3);
        }
    }
    return v;
}

// C = A . B^T: A is M x K int8 row-major, B is N x K int8 row-major, C is M x N int32 row-major.  M, N, K are
// multiples of 4.  Grid: (ceil(N / 128), ceil(M / 128)); 256 threads.
template <bool kVec16>
__global__ void __launch_bounds__(kGemmThreads, 2)
    dp4a_gemm_kernel(const std::int8_t* __restrict__ a, const std::int8_t* __restrict__ b,
                     std::int32_t* __restrict__ c, int m_rows, int n_cols, int k_bytes) {
    __shared__ __align__(16) int as[2][kBKW][kLd];
    __shared__ __align__(16) int bs[2][kBKW][kLd];

    const int tid = int(threadIdx.x);
    const int tx = tid % 16, ty = tid / 16;
    const int m0 = int(blockIdx.y) * kBM, n0 = int(blockIdx.x) * kBN;
    const int kw_total = k_bytes / 4;
    const int tiles = (kw_total + kBKW - 1) / kBKW;

    // Loader: thread tid brings row tid / 2 of each tile, 16-byte chunks 2i + (tid & 1) for i = 0, 1 (a warp
    // covers 16 rows x 32 contiguous bytes per i).
    const int load_row = tid >> 1;
    const int load_cc = tid & 1;
    const std::int8_t* a_base = a + std::size_t(m0) * std::size_t(k_bytes);
    const std::int8_t* b_base = b + std::size_t(n0) * std::size_t(k_bytes);
    const int a_rows = m_rows - m0, b_rows = n_cols - n0;

    int4 pa[2], pb[2];
    auto load_tile = [&](int tile) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int kw = tile * kBKW + 4 * (2 * i + load_cc);
            pa[i] = load_chunk<kVec16>(a_base, a_rows, load_row, k_bytes, kw_total, kw);
            pb[i] = load_chunk<kVec16>(b_base, b_rows, load_row, k_bytes, kw_total, kw);
        }
    };
    auto store_tile = [&](int buf) {
#pragma unroll
        for (int i = 0; i < 2; ++i) {
            const int w = 4 * (2 * i + load_cc);
            as[buf][w + 0][load_row] = pa[i].x;
            as[buf][w + 1][load_row] = pa[i].y;
            as[buf][w + 2][load_row] = pa[i].z;
            as[buf][w + 3][load_row] = pa[i].w;
            bs[buf][w + 0][load_row] = pb[i].x;
            bs[buf][w + 1][load_row] = pb[i].y;
            bs[buf][w + 2][load_row] = pb[i].z;
            bs[buf][w + 3][load_row] = pb[i].w;
        }
    };

    int acc[8][8];
#pragma unroll
    for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] = 0;

    load_tile(0);
    store_tile(0);
    __syncthreads();

    for (int tile = 0; tile < tiles; ++tile) {
        const int buf = tile & 1;
        const bool more = tile + 1 < tiles;
        if (more) load_tile(tile + 1);  // global loads in flight while this tile is computed
#pragma unroll
        for (int kw = 0; kw < kBKW; ++kw) {
            const int4 a_lo = *reinterpret_cast<const int4*>(&as[buf][kw][ty * 4]);
            const int4 a_hi = *reinterpret_cast<const int4*>(&as[buf][kw][64 + ty * 4]);
            const int4 b_lo = *reinterpret_cast<const int4*>(&bs[buf][kw][tx * 4]);
            const int4 b_hi = *reinterpret_cast<const int4*>(&bs[buf][kw][64 + tx * 4]);
            const int av[8] = {a_lo.x, a_lo.y, a_lo.z, a_lo.w, a_hi.x, a_hi.y, a_hi.z, a_hi.w};
            const int bv[8] = {b_lo.x, b_lo.y, b_lo.z, b_lo.w, b_hi.x, b_hi.y, b_hi.z, b_hi.w};
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = __dp4a(av[i], bv[j], acc[i][j]);
        }
        if (more) store_tile(buf ^ 1);  // the other buffer: nobody reads it since the last barrier
        __syncthreads();
    }

    // Epilogue: 16-byte stores (N is a multiple of 4, so a group of 4 columns is all inside or all outside).
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int m = m0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + (i - 4));
        if (m < m_rows) {
            std::int32_t* row = c + std::size_t(m) * std::size_t(n_cols);
            const int n_lo = n0 + tx * 4, n_hi = n0 + 64 + tx * 4;
            if (n_lo < n_cols)
                *reinterpret_cast<int4*>(row + n_lo) = make_int4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
            if (n_hi < n_cols)
                *reinterpret_cast<int4*>(row + n_hi) = make_int4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
        }
    }
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

// The seed of case `index`: one SplitMix64 step away from the run's seed, so cases draw unrelated data.
std::uint64_t case_seed(std::uint64_t seed, std::size_t index) {
    SplitMix64 g{seed ^ (0xD1B54A32D192ED03ull * (std::uint64_t(index) + 1))};
    return g.next();
}

// Random int8 values in [-127, 127] without 0, eight from each 64-bit draw.
void fill_int8(std::vector<std::int8_t>& out, std::size_t n, SplitMix64& rng) {
    out.resize(n);
    for (std::size_t i = 0; i < n; i += 8) {
        std::uint64_t r = rng.next();
        for (std::size_t k = 0; k < 8 && i + k < n; ++k, r >>= 8) {
            const int v = int(((r & 0xFFu) * 254u) >> 8);  // 0..253
            out[i + k] = static_cast<std::int8_t>(v < 127 ? v - 127 : v - 126);
        }
    }
}

// The host's DP4A: signed bytes, sum modulo 2^32.
std::uint32_t host_dp4a(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    std::uint32_t s = c;
    for (int i = 0; i < 4; ++i) {
        const int x = static_cast<std::int8_t>((a >> (8 * i)) & 0xFFu);
        const int y = static_cast<std::int8_t>((b >> (8 * i)) & 0xFFu);
        s += std::uint32_t(x * y);
    }
    return s;
}

// What dp4a_issue_kernel writes for global thread t.
std::uint32_t host_issue_result(std::uint32_t seed, std::uint32_t t, int iters) {
    std::uint32_t sum = 0;
    for (int j = 0; j < kIssueChains; ++j) {
        const std::uint32_t b = issue_operand(seed, t, j);
        std::uint32_t acc = issue_initial(seed, t, j);
        for (int i = 0; i < iters; ++i) acc = host_dp4a(acc, b, acc);
        sum += acc;
    }
    return sum;
}

// ---- Shapes, options -----------------------------------------------------------------------------------

enum class Test { issue_rate, gemm, all };

struct Shape {
    std::int64_t m = 0, n = 0, k = 0;
    std::string origin;  // "--sizes", "--shape", "default"
};

std::string shape_text(const Shape& s) {
    return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

struct Options {
    Test test = Test::all;
    std::vector<Shape> shapes;
    int repeats = 20;
    int warmup = 5;
    int warmup_ms = 100;
    int issue_iters = 8192;
    int samples = 4096;
    std::optional<std::uint64_t> seed;
    std::string json_path;  // empty: stdout
    int device = 0;
    std::optional<std::string> git_sha;
};

const char* test_name(Test t) {
    switch (t) {
        case Test::issue_rate: return "issue-rate";
        case Test::gemm: return "gemm";
        case Test::all: return "all";
    }
    return "?";
}

void print_help() {
    std::printf(
        "Usage: %s [options]\n"
        "The GPU's DP4A (int8 dot product, int32 accumulate) instruction rate, and an int8 GEMM built on DP4A\n"
        "reported as a fraction of it.  Everything is checked against a CPU reference before it is timed.\n"
        "\n"
        "Options:\n"
        "  --test NAME         issue-rate, gemm or all (default all)\n"
        "  --sizes LIST        square GEMM sizes M = N = K, comma-separated (default 1024,2048,4096,8192)\n"
        "  --shape MxNxK       one GEMM shape; repeatable (replaces the default sizes)\n"
        "                      M, N and K must be multiples of 4, K at most %lld\n"
        "  --issue-iters N     DP4A steps per chain in the timed issue-rate launches (default 8192)\n"
        "  --repeats N         timed runs per case (default 20); median, min and max are reported\n"
        "  --warmup N          untimed runs per case just before the timed ones (default 5)\n"
        "  --warmup-ms N       milliseconds of back-to-back runs per case first, for the clocks (default 100)\n"
        "  --samples N         random GEMM elements checked for sizes over 1024, plus corners (default 4096)\n"
        "  --seed N            seed of the input data (default: from the clock; printed and in the JSON)\n"
        "  --json PATH         write the JSON report to PATH instead of stdout\n"
        "  --device N          CUDA device index (default 0)\n"
        "  --git-sha SHA       source revision for the report (default: the ROOFPLAN_GIT_SHA compile\n"
        "                      definition, else $ROOFPLAN_GIT_SHA, else \"unknown\")\n"
        "  -h, --help          show this help\n"
        "\n"
        "GEMM layout: C (int32, M x N) = A (int8, M x K, row-major) . B^T with B stored N x K row-major (TN).\n"
        "Progress and the table go to stderr, the JSON report to stdout (or --json PATH).\n"
        "Exit status: 0 ok, 1 verification failed, 2 bad command line, 3 CUDA or I/O error, 77 no CUDA device.\n",
        kProgram, static_cast<long long>(kMaxK));
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

// A GEMM dimension: a positive multiple of 4, at most `hi`.
std::int64_t parse_dim(std::string_view what, std::string_view text, const std::string& where, std::int64_t hi) {
    const auto v = to_unsigned(text);
    if (!v) usage_error(where + ": " + std::string(what) + " must be a positive integer, got '" + std::string(text) + "'");
    if (*v == 0) usage_error(where + ": " + std::string(what) + " must be positive, got 0");
    if (*v % 4 != 0)
        usage_error(where + ": " + std::string(what) + " must be a multiple of 4 (DP4A reads K in 4-byte words and "
                    "C is stored in groups of 4), got " + std::string(text));
    if (*v > std::uint64_t(hi))
        usage_error(where + ": " + std::string(what) + " " + std::string(text) + " is larger than " +
                    std::to_string(hi) + ", the largest this program takes");
    return std::int64_t(*v);
}

// Largest M or N: the grid's y extent (65535 blocks of 128 rows); N is bounded the same way for simplicity.
constexpr std::int64_t kMaxMN = std::int64_t{65535} * kBM;

Shape make_shape(std::int64_t m, std::int64_t n, std::int64_t k, const char* origin) {
    Shape s;
    s.m = m;
    s.n = n;
    s.k = k;
    s.origin = origin;
    return s;
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

Options parse_args(int argc, char** argv) {
    Options o;
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
        if (flag == "--test") {
            const std::string_view v = take_value();
            if (v == "issue-rate") o.test = Test::issue_rate;
            else if (v == "gemm") o.test = Test::gemm;
            else if (v == "all") o.test = Test::all;
            else usage_error("unknown test '" + std::string(v) + "' in --test; accepted: issue-rate, gemm, all");
        } else if (flag == "--sizes") {
            const std::string_view v = take_value();
            const std::string where = "--sizes '" + std::string(v) + "'";
            for (const std::string_view t : split(v, ',')) {
                const std::int64_t s = parse_dim("size", t, where, kMaxK);
                o.shapes.push_back(make_shape(s, s, s, "--sizes"));
            }
        } else if (flag == "--shape") {
            const std::string_view v = take_value();
            std::string norm(v);
            std::replace(norm.begin(), norm.end(), 'X', 'x');
            const auto parts = split(norm, 'x');
            const std::string where = "--shape '" + std::string(v) + "'";
            if (parts.size() != 3) usage_error(where + ": expected MxNxK (positive integers separated by 'x')");
            o.shapes.push_back(make_shape(parse_dim("M", parts[0], where, kMaxMN), parse_dim("N", parts[1], where, kMaxMN),
                                          parse_dim("K", parts[2], where, kMaxK), "--shape"));
        } else if (flag == "--issue-iters") {
            o.issue_iters = int(parse_unsigned(flag, take_value(), 1, 1u << 24));
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
    if (o.shapes.empty())
        for (const std::int64_t s : {1024, 2048, 4096, 8192}) o.shapes.push_back(make_shape(s, s, s, "default"));
    else if (o.test == Test::issue_rate)
        usage_error("--sizes and --shape are GEMM options; they do nothing with --test issue-rate");
    return o;
}

// ---- JSON (written by hand: no dependency) -----------------------------------------------------------



// ---- Device provenance -------------------------------------------------------------------------------

struct DeviceInfo {
    int index = 0;
    std::string name, pci_bus_id;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    std::optional<int> clock_khz, l2_bytes;
    std::size_t global_memory_bytes = 0;
    bool ecc = false;
    int driver_version = 0, runtime_version = 0;
};

// cudaDeviceGetAttribute, with "not reported" (an error the driver uses for that, or a zero) as empty.
// CUDA 13 removed cudaDeviceProp::clockRate; the attribute remains.
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

// ---- Timing ------------------------------------------------------------------------------------------

struct Timing {
    double median_s = 0, min_s = 0, max_s = 0;
    int warm_runs = 0;               // runs of the --warmup-ms phase
    double lead_s = 0;               // how long the lead kernel spun
    double host_enqueue_s = 0;       // host time to queue the warm-up and timed runs behind it
    bool host_kept_ahead = true;     // host_enqueue_s < lead_s
};

// Times `enqueue(run)` (which queues one run on `stream` and checks the launch): --warmup-ms of back-to-back
// runs for the clocks, then a lead kernel, `warmup` untimed and `repeats` timed runs with an event between
// consecutive runs.  `run` counts every run queued, so that the caller can rotate through input sets.
template <class Enqueue>
Timing time_runs(cudaStream_t stream, Enqueue&& enqueue, int warmup, int repeats, int warmup_ms) {
    Timing t;
    std::size_t run = 0;

    // Clock warm-up: at most a few runs queued ahead of the GPU, so the phase ends soon after warmup_ms.
    if (warmup_ms > 0) {
        constexpr int kDepth = 4;
        cudaEvent_t ev[kDepth];
        for (cudaEvent_t& e : ev) CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
        const auto start = std::chrono::steady_clock::now();
        const auto limit = std::chrono::milliseconds(warmup_ms);
        int runs = 0;
        while (std::chrono::steady_clock::now() - start < limit) {
            enqueue(run++);
            CUDA_CHECK(cudaEventRecord(ev[runs % kDepth], stream));
            ++runs;
            if (runs >= kDepth - 1) CUDA_CHECK(cudaEventSynchronize(ev[(runs + 1) % kDepth]));
        }
        CUDA_CHECK(cudaStreamSynchronize(stream));
        for (cudaEvent_t e : ev) CUDA_CHECK(cudaEventDestroy(e));
        t.warm_runs = runs;
    }

    // events[r] is recorded just before timed run r and events[r + 1] just after it.
    std::vector<cudaEvent_t> events(std::size_t(repeats) + 1);
    for (cudaEvent_t& e : events) CUDA_CHECK(cudaEventCreate(&e));
    // The lead kernel holds the stream while the host queues everything behind it: 2 ms, plus 100 us per run
    // queued, at most 250 ms.
    const double lead_s = std::min(0.25, 2e-3 + 1e-4 * double(warmup + repeats));
    t.lead_s = lead_s;
    lead_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(lead_s * 1e9));
    CUDA_CHECK_LAUNCH("lead_kernel");
    const auto queue_start = std::chrono::steady_clock::now();
    for (int i = 0; i < warmup; ++i) enqueue(run++);
    for (int r = 0; r < repeats; ++r) {
        CUDA_CHECK(cudaEventRecord(events[std::size_t(r)], stream));
        enqueue(run++);
    }
    CUDA_CHECK(cudaEventRecord(events.back(), stream));
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

// ---- Part 1: the issue rate ----------------------------------------------------------------------------

struct IssueResult {
    bool run = false;
    int blocks_per_sm = 0;
    int grid = 0;
    int registers = 0;
    std::uint64_t threads = 0;
    std::uint64_t dp4a = 0;          // DP4A thread-instructions per launch
    std::uint64_t verified_threads = 0;   // every thread of the verification launch
    std::uint64_t sampled_threads = 0;    // threads of the last timed launch checked afterwards
    Timing t;
    double tops = 0;
    std::optional<double> dp4a_per_sm_per_clock;
};

[[noreturn]] void issue_failed(std::uint32_t thread, std::uint32_t got, std::uint32_t expected, int iters,
                               const char* when) {
    std::fprintf(stderr,
                 "%s: verification FAILED for the issue-rate kernel (%s, %d steps): thread %u wrote 0x%08x, the host "
                 "recomputation gives 0x%08x [exact match required]. Nothing more was timed.\n",
                 kProgram, when, iters, thread, got, expected);
    std::exit(kExitVerifyFailed);
}

// Sets up the launch shape and checks every thread of a short launch against the host.
void verify_issue(IssueResult& r, std::uint32_t seed, cudaStream_t stream, std::uint32_t* d_out) {
    std::vector<std::uint32_t> h(r.threads);
    CUDA_CHECK(cudaMemsetAsync(d_out, 0x7f, r.threads * sizeof(std::uint32_t), stream));
    dp4a_issue_kernel<<<r.grid, kIssueThreads, 0, stream>>>(seed, kIssueVerifyIters, d_out);
    CUDA_CHECK_LAUNCH("dp4a_issue_kernel");
    CUDA_CHECK(cudaMemcpyAsync(h.data(), d_out, r.threads * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaGetLastError());
    for (std::uint64_t t = 0; t < r.threads; ++t) {
        const std::uint32_t expected = host_issue_result(seed, std::uint32_t(t), kIssueVerifyIters);
        if (h[t] != expected) issue_failed(std::uint32_t(t), h[t], expected, kIssueVerifyIters, "verification launch");
    }
    r.verified_threads = r.threads;
}

void measure_issue(IssueResult& r, const DeviceInfo& dev, const Options& opt, std::uint32_t seed,
                   cudaStream_t stream, std::uint32_t* d_out) {
    const int iters = opt.issue_iters;
    auto enqueue = [&](std::size_t) {
        dp4a_issue_kernel<<<r.grid, kIssueThreads, 0, stream>>>(seed, iters, d_out);
        CUDA_CHECK_LAUNCH("dp4a_issue_kernel");
    };
    CUDA_CHECK(cudaMemsetAsync(d_out, 0x7f, r.threads * sizeof(std::uint32_t), stream));
    r.t = time_runs(stream, enqueue, opt.warmup, opt.repeats, opt.warmup_ms);
    r.dp4a = r.threads * std::uint64_t(iters) * kIssueChains;
    r.tops = 8.0 * double(r.dp4a) / r.t.median_s / 1e12;
    if (dev.clock_khz)
        r.dp4a_per_sm_per_clock = double(r.dp4a) / (r.t.median_s * double(dev.sm_count) * double(*dev.clock_khz) * 1e3);

    // The last timed launch's output, at sampled threads (host work bounded to about 2e8 DP4A).
    std::vector<std::uint32_t> h(r.threads);
    CUDA_CHECK(cudaMemcpy(h.data(), d_out, r.threads * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    const std::uint64_t per_thread = std::uint64_t(iters) * kIssueChains;
    const std::uint64_t budget = std::max<std::uint64_t>(2, std::uint64_t(2e8) / per_thread);
    const std::uint64_t n = std::min<std::uint64_t>({64, budget, r.threads});
    SplitMix64 rng{std::uint64_t(seed) ^ 0xA0761D6478BD642Full};
    for (std::uint64_t s = 0; s < n; ++s) {
        const std::uint32_t t = s == 0 ? 0u : s == 1 ? std::uint32_t(r.threads - 1) : std::uint32_t(rng.next() % r.threads);
        const std::uint32_t expected = host_issue_result(seed, t, iters);
        if (h[t] != expected) issue_failed(t, h[t], expected, iters, "last timed launch");
    }
    r.sampled_threads = n;
}

// ---- Part 2: the GEMM ----------------------------------------------------------------------------------

struct GemmCase {
    std::size_t index = 0;
    Shape shape;
    std::uint64_t bytes_a = 0, bytes_b = 0, bytes_c = 0;
    bool vec16 = false;              // K % 16 == 0: the 16-byte load path
    bool full_check = false;
    std::uint64_t checked = 0;
    int input_sets = 1;
    Timing t;
    double tops = 0;
    std::optional<double> fraction;  // of the issue-rate kernel's TOPS, when measured in this run
};

void launch_gemm(const GemmCase& c, const std::int8_t* a, const std::int8_t* b, std::int32_t* d,
                 cudaStream_t stream) {
    const dim3 grid(unsigned((c.shape.n + kBN - 1) / kBN), unsigned((c.shape.m + kBM - 1) / kBM));
    const int m = int(c.shape.m), n = int(c.shape.n), k = int(c.shape.k);
    if (c.vec16) {
        dp4a_gemm_kernel<true><<<grid, kGemmThreads, 0, stream>>>(a, b, d, m, n, k);
        CUDA_CHECK_LAUNCH("dp4a_gemm_kernel<16-byte loads>");
    } else {
        dp4a_gemm_kernel<false><<<grid, kGemmThreads, 0, stream>>>(a, b, d, m, n, k);
        CUDA_CHECK_LAUNCH("dp4a_gemm_kernel<4-byte loads>");
    }
}

void generate_gemm_inputs(const GemmCase& c, std::uint64_t seed, std::vector<std::int8_t>& ha,
                          std::vector<std::int8_t>& hb) {
    SplitMix64 rng{case_seed(seed, c.index)};
    fill_int8(ha, std::size_t(c.bytes_a), rng);
    fill_int8(hb, std::size_t(c.bytes_b), rng);
}

[[noreturn]] void gemm_failed(const GemmCase& c, const std::string& what) {
    std::fprintf(stderr, "%s: verification FAILED for the GEMM %s: %s. Nothing was timed.\n", kProgram,
                 shape_text(c.shape).c_str(), what.c_str());
    std::exit(kExitVerifyFailed);
}

std::int64_t host_dot(const std::int8_t* x, const std::int8_t* y, std::size_t k) {
    std::int64_t s = 0;
    for (std::size_t i = 0; i < k; ++i) s += std::int64_t(x[i]) * std::int64_t(y[i]);
    return s;
}

// Runs the case once on fresh inputs with a poisoned C and checks it (see the top of the file).
void verify_gemm(GemmCase& c, std::uint64_t seed, int samples, cudaStream_t stream) {
    std::vector<std::int8_t> ha, hb;
    generate_gemm_inputs(c, seed, ha, hb);
    std::int8_t *da = nullptr, *db = nullptr;
    std::int32_t* dc = nullptr;
    CUDA_CHECK(cudaMalloc(&da, c.bytes_a));
    CUDA_CHECK(cudaMalloc(&db, c.bytes_b));
    CUDA_CHECK(cudaMalloc(&dc, c.bytes_c));
    CUDA_CHECK(cudaMemcpyAsync(da, ha.data(), c.bytes_a, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(db, hb.data(), c.bytes_b, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemsetAsync(dc, 0x7f, c.bytes_c, stream));
    launch_gemm(c, da, db, dc, stream);
    std::vector<std::int32_t> hc(std::size_t(c.bytes_c / 4));
    CUDA_CHECK(cudaMemcpyAsync(hc.data(), dc, c.bytes_c, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));  // surfaces faults raised while the product ran
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaFree(da));
    CUDA_CHECK(cudaFree(db));
    CUDA_CHECK(cudaFree(dc));

    const std::size_t m = std::size_t(c.shape.m), n = std::size_t(c.shape.n), k = std::size_t(c.shape.k);
    auto where = [&](std::size_t i, std::size_t j) {
        return "C(" + std::to_string(i) + ", " + std::to_string(j) + ")";
    };
    // Every element written.
    for (std::size_t e = 0; e < hc.size(); ++e)
        if (hc[e] == kPoisonI32)
            gemm_failed(c, where(e / n, e % n) + " was not written (it still holds the poison 0x7f7f7f7f)");
    auto check = [&](std::size_t i, std::size_t j) {
        const std::int64_t ref = host_dot(ha.data() + i * k, hb.data() + j * k, k);
        const std::int32_t got = hc[i * n + j];
        if (std::int64_t(got) != ref)
            gemm_failed(c, where(i, j) + " is " + std::to_string(got) + ", expected " + std::to_string(ref) +
                               " [exact match required]");
    };
    c.full_check = c.shape.m <= 1024 && c.shape.n <= 1024 && c.shape.k <= 1024;
    if (c.full_check) {
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < n; ++j) check(i, j);
        c.checked = std::uint64_t(m) * n;
        return;
    }
    std::vector<std::uint64_t> pos = {0, std::uint64_t(n - 1), std::uint64_t((m - 1) * n), std::uint64_t(m * n - 1)};
    SplitMix64 rng{case_seed(seed, c.index) ^ 0x5DEECE66Dull};
    for (int s = 0; s < samples; ++s) pos.push_back(rng.next() % std::uint64_t(m * n));  // modulo bias irrelevant
    std::sort(pos.begin(), pos.end());
    pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
    for (const std::uint64_t p : pos) check(std::size_t(p / n), std::size_t(p % n));
    c.checked = pos.size();
}

// Copies of A and B so that (sets - 1)(|A| + |B|) >= 2 x L2, within kMaxInputSets and the free memory.
int input_sets_for(const GemmCase& c, std::uint64_t l2_bytes, std::uint64_t free_bytes) {
    const std::uint64_t per_set = round_up_256(c.bytes_a) + round_up_256(c.bytes_b);
    const std::uint64_t wanted = 1 + (2 * l2_bytes + per_set - 1) / per_set;
    const std::uint64_t reserve = round_up_256(c.bytes_c) + 256 * kMiB;  // C and some slack
    const std::uint64_t fit = free_bytes > reserve ? (free_bytes - reserve) / per_set : 0;
    return int(std::max<std::uint64_t>(1, std::min<std::uint64_t>({wanted, fit, std::uint64_t(kMaxInputSets)})));
}

void measure_gemm(GemmCase& c, const DeviceInfo& dev, const Options& opt, std::uint64_t seed, cudaStream_t stream) {
    std::vector<std::int8_t> ha, hb;
    generate_gemm_inputs(c, seed, ha, hb);  // the inputs the verification pass checked
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    // With no L2 size reported, assume 64 MiB (more than any current GPU has).
    const std::uint64_t l2 = std::uint64_t(dev.l2_bytes.value_or(int(64 * kMiB)));
    c.input_sets = input_sets_for(c, l2, free_bytes);

    std::vector<std::int8_t*> sa(std::size_t(c.input_sets)), sb(std::size_t(c.input_sets));
    for (int s = 0; s < c.input_sets; ++s) {
        CUDA_CHECK(cudaMalloc(&sa[std::size_t(s)], c.bytes_a));
        CUDA_CHECK(cudaMalloc(&sb[std::size_t(s)], c.bytes_b));
    }
    std::int32_t* dc = nullptr;
    CUDA_CHECK(cudaMalloc(&dc, c.bytes_c));
    CUDA_CHECK(cudaMemcpyAsync(sa[0], ha.data(), c.bytes_a, cudaMemcpyHostToDevice, stream));
    CUDA_CHECK(cudaMemcpyAsync(sb[0], hb.data(), c.bytes_b, cudaMemcpyHostToDevice, stream));
    for (int s = 1; s < c.input_sets; ++s) {  // the same values at other addresses
        CUDA_CHECK(cudaMemcpyAsync(sa[std::size_t(s)], sa[0], c.bytes_a, cudaMemcpyDeviceToDevice, stream));
        CUDA_CHECK(cudaMemcpyAsync(sb[std::size_t(s)], sb[0], c.bytes_b, cudaMemcpyDeviceToDevice, stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));

    auto enqueue = [&](std::size_t run) {
        const std::size_t s = run % sa.size();
        launch_gemm(c, sa[s], sb[s], dc, stream);
    };
    c.t = time_runs(stream, enqueue, opt.warmup, opt.repeats, opt.warmup_ms);
    c.tops = 2.0 * double(c.shape.m) * double(c.shape.n) * double(c.shape.k) / c.t.median_s / 1e12;

    for (std::int8_t* p : sa) CUDA_CHECK(cudaFree(p));
    for (std::int8_t* p : sb) CUDA_CHECK(cudaFree(p));
    CUDA_CHECK(cudaFree(dc));
}

// ---- Report ------------------------------------------------------------------------------------------

std::string timing_json(const Timing& t) {
    return "\"time_s_median\": " + json_number(t.median_s) + ", \"time_s_min\": " + json_number(t.min_s) +
           ", \"time_s_max\": " + json_number(t.max_s) + ", \"warm_runs\": " + json_number(t.warm_runs) +
           ", \"lead_s\": " + json_number(t.lead_s) + ", \"host_enqueue_s\": " + json_number(t.host_enqueue_s) +
           ", \"host_kept_ahead\": " + json_bool(t.host_kept_ahead);
}

std::string build_json(const Options& opt, const DeviceInfo& dev, int argc, char** argv, std::uint64_t seed,
                       const IssueResult& issue, const std::vector<GemmCase>& cases) {
    const auto [git_sha, git_source] = git_sha_and_source(opt);
    std::string cmd = "[";
    for (int i = 0; i < argc; ++i) cmd += (i ? ", " : "") + json_string(argv[i]);
    cmd += "]";
    const std::string nvcc_version = std::to_string(__CUDACC_VER_MAJOR__) + "." +
                                     std::to_string(__CUDACC_VER_MINOR__) + "." +
                                     std::to_string(__CUDACC_VER_BUILD__);
    std::string env = "{";
    for (const char* name : {"CUDA_VISIBLE_DEVICES", "CUDA_MODULE_LOADING"})
        if (const char* v = std::getenv(name); v != nullptr)
            env += std::string(env.size() > 1 ? ", " : "") + json_string(name) + ": " + json_string(v);
    env += "}";

    std::string j;
    j += "{\n";
    j += "  \"tool\": \"roofplan-dp4a\",\n";
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
    j += "      \"l2_cache_bytes\": " + json_optional(dev.l2_bytes) + ",\n";
    j += "      \"global_memory_bytes\": " + json_number(std::uint64_t{dev.global_memory_bytes}) + ",\n";
    j += "      \"ecc_enabled\": " + json_bool(dev.ecc) + "\n";
    j += "    }\n";
    j += "  },\n";
    j += "  \"config\": {\n";
    j += "    \"test\": " + json_string(test_name(opt.test)) + ",\n";
    j += "    \"warmup\": " + json_number(opt.warmup) + ",\n";
    j += "    \"warmup_ms\": " + json_number(opt.warmup_ms) + ",\n";
    j += "    \"repeats\": " + json_number(opt.repeats) + ",\n";
    j += "    \"seed\": " + json_number(seed) + ",\n";
    j += "    \"samples\": " + json_number(opt.samples) + ",\n";
    j += "    \"issue_iters\": " + json_number(opt.issue_iters) + ",\n";
    j += "    \"issue_chains_per_thread\": " + json_number(kIssueChains) + ",\n";
    j += "    \"gemm_layout\": \"C (int32, M x N, row-major) = A (int8, M x K, row-major) . B^T, B stored N x K "
         "row-major (TN)\",\n";
    j += "    \"gemm_kernel\": \"dp4a_gemm_kernel: 128 x 128 block tile, 256 threads, 8 x 8 int32 micro-tile per "
         "thread, 64-byte K step, two shared-memory buffers, 16-byte global loads when K % 16 == 0\",\n";
    j += "    \"ops_convention\": \"one DP4A = 4 int8 multiply-adds = 8 operations; GEMM ops = 2 M N K\",\n";
    j += "    \"timing\": \"CUDA events between back-to-back launches on one stream behind a lead kernel; GEMM "
         "inputs rotate through input_sets copies of A and B so that (input_sets - 1)(|A| + |B|) >= 2 x L2 where "
         "memory allows\"\n";
    j += "  },\n";
    j += "  \"results\": [\n";
    bool first = true;
    if (issue.run) {
        first = false;
        j += "    {\"test\": \"issue-rate\", \"tops\": " + json_number(issue.tops) +
             ", \"dp4a_per_sm_per_clock\": " + json_optional(issue.dp4a_per_sm_per_clock) +
             ", \"clock_rate_khz_used\": " + json_optional(dev.clock_khz) + ", " + timing_json(issue.t) +
             ", \"dp4a_per_launch\": " + json_number(issue.dp4a) +
             ", \"ops_per_launch\": " + json_number(8.0 * double(issue.dp4a)) +
             ", \"grid_blocks\": " + json_number(issue.grid) +
             ", \"threads_per_block\": " + json_number(kIssueThreads) +
             ", \"blocks_per_sm\": " + json_number(issue.blocks_per_sm) +
             ", \"waves\": " + json_number(kIssueWaves) +
             ", \"registers_per_thread\": " + json_number(issue.registers) +
             ", \"chains_per_thread\": " + json_number(kIssueChains) +
             ", \"iters\": " + json_number(opt.issue_iters) + ", \"verified\": true" +
             ", \"verify_iters\": " + json_number(kIssueVerifyIters) +
             ", \"verified_threads\": " + json_number(issue.verified_threads) +
             ", \"timed_output_sampled_threads\": " + json_number(issue.sampled_threads) + "}";
    }
    for (const GemmCase& c : cases) {
        j += first ? "" : ",\n";
        first = false;
        j += "    {\"test\": \"gemm\", \"m\": " + json_number(c.shape.m) + ", \"n\": " + json_number(c.shape.n) +
             ", \"k\": " + json_number(c.shape.k) + ", " + timing_json(c.t) + ", \"tops\": " + json_number(c.tops) +
             ", \"fraction_of_measured_peak\": " + json_optional(c.fraction) +
             ", \"verified\": true, \"checked_elements\": " + json_number(c.checked) +
             ", \"full_check\": " + json_bool(c.full_check) + ", \"all_elements_written\": true" +
             ", \"load_width_bytes\": " + json_number(c.vec16 ? 16 : 4) +
             ", \"input_sets\": " + json_number(c.input_sets) + ", \"bytes_a\": " + json_number(c.bytes_a) +
             ", \"bytes_b\": " + json_number(c.bytes_b) + ", \"bytes_c\": " + json_number(c.bytes_c) + "}";
    }
    j += first ? "" : "\n";
    j += "  ]\n";
    j += "}\n";
    return j;
}

void print_table(const DeviceInfo& dev, const Options& opt, std::uint64_t seed, const IssueResult& issue,
                 const std::vector<GemmCase>& cases) {
    std::fprintf(stderr, "\n%s: %s [device %d, %s], sm_%d%d, %d SMs", kProgram, dev.name.c_str(), dev.index,
                 dev.pci_bus_id.c_str(), dev.cc_major, dev.cc_minor, dev.sm_count);
    if (dev.clock_khz) std::fprintf(stderr, ", clock %d MHz", *dev.clock_khz / 1000);
    if (dev.l2_bytes) std::fprintf(stderr, ", L2 %.1f MiB", double(*dev.l2_bytes) / double(kMiB));
    std::fprintf(stderr, "\n  driver %s, runtime %s; %d ms + %d warm-up runs, %d timed runs per case; seed %llu\n",
                 version_string(dev.driver_version).c_str(), version_string(dev.runtime_version).c_str(),
                 opt.warmup_ms, opt.warmup, opt.repeats, static_cast<unsigned long long>(seed));
    std::fprintf(stderr, "  everything verified before timing (exact, against the CPU)\n\n");
    if (issue.run) {
        std::fprintf(stderr, "  issue rate: %d blocks x %d threads x %d chains x %d steps (%d blocks/SM, %d regs)\n",
                     issue.grid, kIssueThreads, kIssueChains, opt.issue_iters, issue.blocks_per_sm, issue.registers);
        std::fprintf(stderr, "  %-26s %11s %11s %11s %9s %14s\n", "test", "median us", "min us", "max us", "TOPS",
                     "dp4a/SM/clk");
        char per_clock[32] = "n/a";
        if (issue.dp4a_per_sm_per_clock) std::snprintf(per_clock, sizeof per_clock, "%.1f", *issue.dp4a_per_sm_per_clock);
        std::fprintf(stderr, "  %-26s %11.2f %11.2f %11.2f %9.2f %14s%s\n\n", "issue-rate", issue.t.median_s * 1e6,
                     issue.t.min_s * 1e6, issue.t.max_s * 1e6, issue.tops, per_clock,
                     issue.t.host_kept_ahead ? "" : "  [host fell behind]");
    }
    if (!cases.empty()) {
        std::fprintf(stderr, "  %-26s %11s %11s %11s %9s %9s %4s %10s\n", "gemm M x N x K", "median us", "min us",
                     "max us", "TOPS", "of peak", "sets", "checked");
        for (const GemmCase& c : cases) {
            char frac[32] = "n/a";
            if (c.fraction) std::snprintf(frac, sizeof frac, "%.1f%%", 100.0 * *c.fraction);
            std::fprintf(stderr, "  %-26s %11.2f %11.2f %11.2f %9.2f %9s %4d %10llu%s\n", shape_text(c.shape).c_str(),
                         c.t.median_s * 1e6, c.t.min_s * 1e6, c.t.max_s * 1e6, c.tops, frac, c.input_sets,
                         static_cast<unsigned long long>(c.checked), c.t.host_kept_ahead ? "" : "  [host fell behind]");
        }
    }
}

// ---- The run -----------------------------------------------------------------------------------------

int run(const Options& opt, const DeviceInfo& dev, int argc, char** argv) {
    const bool do_issue = opt.test != Test::gemm;
    const bool do_gemm = opt.test != Test::issue_rate;

    cudaStream_t stream = nullptr;
    CUDA_CHECK(cudaStreamCreate(&stream));
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));

    // The GEMM cases, and whether each fits in the free device memory.
    std::vector<GemmCase> cases;
    if (do_gemm) {
        std::vector<std::string> too_big;
        for (const Shape& s : opt.shapes) {
            GemmCase c;
            c.index = cases.size();
            c.shape = s;
            c.bytes_a = std::uint64_t(s.m) * std::uint64_t(s.k);
            c.bytes_b = std::uint64_t(s.n) * std::uint64_t(s.k);
            c.bytes_c = std::uint64_t(s.m) * std::uint64_t(s.n) * 4;
            c.vec16 = s.k % 16 == 0;
            const std::uint64_t need = round_up_256(c.bytes_a) + round_up_256(c.bytes_b) + round_up_256(c.bytes_c);
            if (need > free_bytes) {
                char buf[512];
                std::snprintf(buf, sizeof buf,
                              "GEMM %s (from %s) needs %.1f MiB of device memory, but only %.1f MiB are free on "
                              "device %d",
                              shape_text(s).c_str(), s.origin.c_str(), double(need) / double(kMiB),
                              double(free_bytes) / double(kMiB), dev.index);
                too_big.push_back(buf);
            }
            cases.push_back(c);
        }
        if (!too_big.empty()) {
            for (const std::string& t : too_big) std::fprintf(stderr, "%s: error: %s\n", kProgram, t.c_str());
            usage_error("choose smaller shapes (nothing was run)");
        }
    }

    // Default seed from the clock, kept below 2^53 so that it survives a round trip through a JSON double.
    const std::uint64_t seed =
        opt.seed ? *opt.seed
                 : std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) & ((1ull << 53) - 1);
    const std::uint32_t issue_seed = std::uint32_t(seed ^ (seed >> 32));

    // The issue-rate launch shape.
    IssueResult issue;
    std::uint32_t* d_issue = nullptr;
    if (do_issue) {
        issue.run = true;
        cudaFuncAttributes attr{};
        CUDA_CHECK(cudaFuncGetAttributes(&attr, dp4a_issue_kernel));
        issue.registers = attr.numRegs;
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&issue.blocks_per_sm, dp4a_issue_kernel,
                                                                 kIssueThreads, 0));
        if (issue.blocks_per_sm < 1) {
            std::fprintf(stderr, "%s: error: the issue-rate kernel cannot be resident on this device\n", kProgram);
            return kExitCudaError;
        }
        issue.grid = issue.blocks_per_sm * dev.sm_count * kIssueWaves;
        issue.threads = std::uint64_t(issue.grid) * kIssueThreads;
        CUDA_CHECK(cudaMalloc(&d_issue, issue.threads * sizeof(std::uint32_t)));
    }

    // Pass 1: verify everything.
    if (do_issue) {
        verify_issue(issue, issue_seed, stream, d_issue);
        std::fprintf(stderr, "%s: verified the issue-rate kernel: all %llu threads (%d steps of %d chains) exact\n",
                     kProgram, static_cast<unsigned long long>(issue.verified_threads), kIssueVerifyIters,
                     kIssueChains);
    }
    for (GemmCase& c : cases) {
        verify_gemm(c, seed, opt.samples, stream);
        std::fprintf(stderr, "%s: verified GEMM %s: %llu elements checked%s, all written\n", kProgram,
                     shape_text(c.shape).c_str(), static_cast<unsigned long long>(c.checked),
                     c.full_check ? " (all)" : " (sampled + corners)");
    }

    // Pass 2: time everything.
    if (do_issue) {
        measure_issue(issue, dev, opt, issue_seed, stream, d_issue);
        std::fprintf(stderr, "%s: timed the issue-rate kernel: median %.2f us, %.2f TOPS%s\n", kProgram,
                     issue.t.median_s * 1e6, issue.tops,
                     issue.t.host_kept_ahead ? "" : " (the host fell behind the lead kernel: launch gaps possible)");
        CUDA_CHECK(cudaFree(d_issue));
    }
    for (GemmCase& c : cases) {
        measure_gemm(c, dev, opt, seed, stream);
        if (issue.run && issue.tops > 0) c.fraction = c.tops / issue.tops;
        std::fprintf(stderr, "%s: timed GEMM %s: median %.2f us, %.2f TOPS%s\n", kProgram, shape_text(c.shape).c_str(),
                     c.t.median_s * 1e6, c.tops,
                     c.t.host_kept_ahead ? "" : " (the host fell behind the lead kernel: launch gaps possible)");
    }
    CUDA_CHECK(cudaStreamDestroy(stream));

    print_table(dev, opt, seed, issue, cases);
    const std::string json = build_json(opt, dev, argc, argv, seed, issue, cases);
    if (opt.json_path.empty()) {
        std::fputs(json.c_str(), stdout);
        if (std::fflush(stdout) != 0) {
            std::perror("roofplan-dp4a: error: writing the JSON report to stdout");
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
        std::fprintf(stderr, "%s: error: out of host memory (the host keeps one case's A, B and C)\n", kProgram);
        return kExitCudaError;
    }
}
