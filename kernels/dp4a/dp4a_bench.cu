// kernels/dp4a/dp4a_bench.cu — roofplan-dp4a: the chip's DP4A (int8 dot-product instruction) rate, and an int8
// matrix product (GEMM) built on it, as a fraction of that rate.
//
// --test issue-rate: 16 independent non-linear chains acc = __dp4a(acc, b, acc) per thread, 4 waves of the
// occupancy limit; TOPS counts a DP4A as 8 operations.  Checked exactly (modulo 2^32) at every thread of a short
// launch, and at sampled threads of the last timed one.  --test gemm: C (int32) = A (int8, M x K) . B^T (B N x K),
// this program's own kernel (128 x 128 block tiles, 8 x 8 micro-tiles, two shared-memory buffers, 16-byte loads
// when K % 16 == 0); C poisoned, every element written, elements compared bit-exactly with int64 dot products (all
// of them up to 1024^3).  The method, the disassembly and what it shows: docs/kernels.md.

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>

#include "../common/harness.hpp"
#include "../common/gemm_shapes.hpp"

namespace {

using namespace roofplan::bench;
namespace tool = roofplan::io::schema::tool;

constexpr std::int64_t kMaxK = 131072;   // 127^2 K stays below the poison 0x7f7f7f7f and inside int32

// ---- Device code: the DP4A issue-rate kernel -------------------------------------------------------------

constexpr int kIssueChains = 16;        // independent accumulators per thread
constexpr int kIssueThreads = 256;      // threads per block
constexpr int kIssueWaves = 4;          // grid = waves x (resident blocks per SM) x SMs
constexpr int kIssueVerifyIters = 11;   // one unrolled pass of 8 and a remainder of 3

// A 32-bit mixing function (Wellons' "lowbias32"), the same on host and device.
__host__ __device__ inline std::uint32_t mix32(std::uint32_t x) {
    x = (x ^ (x >> 16)) * 0x7feb352du;
    x = (x ^ (x >> 15)) * 0x846ca68bu;
    return x ^ (x >> 16);
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

// The epilogue: a thread's 8 x 8 micro-tile (rows m + 0..3 and m + 64 + 0..3, columns n + 0..3 and n + 64 + 0..3)
// with 16-byte stores (N is a multiple of 4, so a group of 4 columns is all inside or all outside).
__device__ __forceinline__ void store_micro_tile(const int (&acc)[8][8], std::int32_t* __restrict__ c, int m, int n,
                                                 int m_rows, int n_cols) {
#pragma unroll
    for (int i = 0; i < 8; ++i) {
        const int row_index = m + (i < 4 ? i : 64 + i - 4);
        if (row_index >= m_rows) continue;
        std::int32_t* row = c + std::size_t(row_index) * std::size_t(n_cols);
        if (n < n_cols) *reinterpret_cast<int4*>(row + n) = make_int4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
        if (n + 64 < n_cols)
            *reinterpret_cast<int4*>(row + n + 64) = make_int4(acc[i][4], acc[i][5], acc[i][6], acc[i][7]);
    }
}

// C = A . B^T: A is M x K int8 row-major, B is N x K int8 row-major, C is M x N int32 row-major.  M, N, K are
// multiples of 4.  Grid: (ceil(N / 128), ceil(M / 128)); 256 threads.
template <bool kVec16>
__global__ void __launch_bounds__(kGemmThreads, 2)
    dp4a_gemm_kernel(const std::int8_t* __restrict__ a, const std::int8_t* __restrict__ b,
                     std::int32_t* __restrict__ c, int m_rows, int n_cols, int k_bytes) {
    __shared__ __align__(16) int as[2][kBKW][kLd], bs[2][kBKW][kLd];

    const int tid = int(threadIdx.x);
    const int tx = tid % 16, ty = tid / 16;
    const int m0 = int(blockIdx.y) * kBM, n0 = int(blockIdx.x) * kBN;
    const int kw_total = k_bytes / 4, tiles = (kw_total + kBKW - 1) / kBKW;

    // Loader: thread tid brings row tid / 2 of each tile, 16-byte chunks 2i + (tid & 1) for i = 0, 1 (a warp
    // covers 16 rows x 32 contiguous bytes per i).
    const int load_row = tid >> 1, load_cc = tid & 1;
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

    int acc[8][8] = {};

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

    store_micro_tile(acc, c, m0 + ty * 4, n0 + tx * 4, m_rows, n_cols);
}

// ---- Host data -----------------------------------------------------------------------------------------

// Random int8 values in [-127, 127] without 0, eight from each 64-bit draw.
std::vector<std::int8_t> random_int8(std::size_t n, SplitMix64& rng) {
    std::vector<std::int8_t> out(n);
    for (std::size_t i = 0; i < n; i += 8) {
        std::uint64_t r = rng.next();
        for (std::size_t k = 0; k < 8 && i + k < n; ++k, r >>= 8) {
            const int v = int(((r & 0xFFu) * 254u) >> 8);  // 0..253
            out[i + k] = static_cast<std::int8_t>(v < 127 ? v - 127 : v - 126);
        }
    }
    return out;
}

// The host's DP4A: signed bytes, sum modulo 2^32.
std::uint32_t host_dp4a(std::uint32_t a, std::uint32_t b, std::uint32_t c) {
    for (int i = 0; i < 4; ++i) c += std::uint32_t(int(std::int8_t(a >> (8 * i))) * int(std::int8_t(b >> (8 * i))));
    return c;
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

// ---- Command line ------------------------------------------------------------------------------------

enum class Test { issue_rate, gemm, all };
constexpr const char* kTestNames[] = {"issue-rate", "gemm", "all"};  // by Test

// Largest M or N: the grid's y extent (65535 blocks of 128 rows); N is bounded the same way for simplicity.
constexpr std::int64_t kMaxMN = std::int64_t{65535} * kBM;

struct Options {
    RunOptions run;
    Test test = Test::all;
    std::vector<GemmShape> shapes;
    int issue_iters = 8192, samples = 4096;
};

// M, N and K multiples of 4 (DP4A reads K in 4-byte words, C is stored in groups of 4) and within the limits.
void check_shape(const GemmShape& s) {
    const std::pair<const char*, std::int64_t> dims[] = {{"M", s.m}, {"N", s.n}, {"K", s.k}};
    for (const auto& [what, v] : dims) {
        const std::int64_t hi = *what == 'K' ? kMaxK : kMaxMN;
        if (v % 4 != 0)
            usage_error(s.origin + ": " + what + " must be a multiple of 4 (DP4A reads K in 4-byte words and C is "
                        "stored in groups of 4), got " + std::to_string(v));
        if (v > hi)
            usage_error(s.origin + ": " + what + " " + std::to_string(v) + " is larger than " + std::to_string(hi) +
                        ", the largest this program takes");
    }
}

Options parse_args(int argc, char** argv) {
    Options o;
    Cli cli(tool::dp4a.data(), "The GPU's DP4A (int8 dot product, int32 accumulate) instruction rate, and an int8 GEMM "
                               "built on DP4A\nreported as a fraction of it.  Everything is checked against a CPU "
                               "reference before it is timed.");
    cli.option("--test", "NAME", "issue-rate, gemm or all (default all)", [&o](std::string_view v) {
        const auto at = std::find(std::begin(kTestNames), std::end(kTestNames), v);
        if (at == std::end(kTestNames))
            usage_error("unknown test '" + std::string(v) + "' in --test; accepted: issue-rate, gemm, all");
        o.test = Test(at - std::begin(kTestNames));
    });
    add_shape_options(cli, o.shapes, false);
    cli.number("--issue-iters", "DP4A steps per chain in the timed issue-rate launches", o.issue_iters, 1, 1u << 24);
    cli.number("--samples", "random GEMM elements checked for sizes over 1024, plus corners", o.samples, 1, 1000000);
    cli.common(o.run).footer("GEMM layout: C (int32, M x N) = A (int8, M x K, row-major) . B^T with B stored N x K "
                             "row-major (TN);\nM, N and K multiples of 4, K at most 131072.\n");
    cli.parse(argc, argv);
    if (!o.shapes.empty() && o.test == Test::issue_rate)
        usage_error("--sizes and --shape are GEMM options; they do nothing with --test issue-rate");
    default_shapes(o.shapes);
    for (const GemmShape& s : o.shapes) check_shape(s);
    return o;
}

// ---- Part 1: the issue rate ----------------------------------------------------------------------------

struct IssueResult {
    bool run = false;
    int blocks_per_sm = 0, grid = 0, registers = 0;
    std::uint64_t threads = 0, dp4a = 0;  // dp4a: DP4A thread-instructions per launch
    std::uint64_t verified_threads = 0;   // every thread of the verification launch
    std::uint64_t sampled_threads = 0;    // threads of the last timed launch checked afterwards
    Timing t;
    double tops = 0;
    std::optional<double> dp4a_per_sm_per_clock;
    std::uint32_t* d_out = nullptr;       // one word per thread
};

[[noreturn]] void issue_failed(std::uint32_t thread, std::uint32_t got, std::uint32_t expected, int iters,
                               const char* when) {
    std::fprintf(stderr,
                 "%s: verification FAILED for the issue-rate kernel (%s, %d steps): thread %u wrote 0x%08x, the host "
                 "recomputation gives 0x%08x [exact match required]. Nothing more was timed.\n",
                 g_program, when, iters, thread, got, expected);
    std::exit(kExitVerifyFailed);
}

// The launch shape (4 waves of the occupancy limit on every SM), then every thread of a short launch checked
// against the host.
void verify_issue(IssueResult& r, const DeviceInfo& dev, std::uint32_t seed, cudaStream_t stream) {
    r.run = true;
    cudaFuncAttributes attr{};
    CHECK(cudaFuncGetAttributes(&attr, dp4a_issue_kernel));
    r.registers = attr.numRegs;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, dp4a_issue_kernel, kIssueThreads, 0));
    if (r.blocks_per_sm < 1) {
        std::fprintf(stderr, "%s: error: the issue-rate kernel cannot be resident on this device\n", g_program);
        std::exit(kExitCudaError);
    }
    r.grid = r.blocks_per_sm * dev.sm_count * kIssueWaves;
    r.threads = std::uint64_t(r.grid) * kIssueThreads;
    CHECK(cudaMalloc(&r.d_out, r.threads * sizeof(std::uint32_t)));
    std::vector<std::uint32_t> h(r.threads);
    CHECK(cudaMemsetAsync(r.d_out, 0x7f, r.threads * sizeof(std::uint32_t), stream));
    dp4a_issue_kernel<<<r.grid, kIssueThreads, 0, stream>>>(seed, kIssueVerifyIters, r.d_out);
    CHECK_LAUNCH("dp4a_issue_kernel");
    CHECK(cudaMemcpyAsync(h.data(), r.d_out, r.threads * sizeof(std::uint32_t), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    CHECK(cudaGetLastError());
    for (std::uint64_t t = 0; t < r.threads; ++t) {
        const std::uint32_t expected = host_issue_result(seed, std::uint32_t(t), kIssueVerifyIters);
        if (h[t] != expected) issue_failed(std::uint32_t(t), h[t], expected, kIssueVerifyIters, "verification launch");
    }
    r.verified_threads = r.threads;
}

void measure_issue(IssueResult& r, const DeviceInfo& dev, const Options& o, std::uint32_t seed, cudaStream_t stream) {
    const int iters = o.issue_iters;
    CHECK(cudaMemsetAsync(r.d_out, 0x7f, r.threads * sizeof(std::uint32_t), stream));
    r.t = time_runs(stream, [&](std::size_t) {
        dp4a_issue_kernel<<<r.grid, kIssueThreads, 0, stream>>>(seed, iters, r.d_out);
        CHECK_LAUNCH("dp4a_issue_kernel");
    }, o.run.timing);
    r.dp4a = r.threads * std::uint64_t(iters) * kIssueChains;
    r.tops = 8.0 * double(r.dp4a) / r.t.median_s / 1e12;
    if (dev.clock_khz)
        r.dp4a_per_sm_per_clock = double(r.dp4a) / (r.t.median_s * double(dev.sm_count) * double(*dev.clock_khz) * 1e3);

    // The last timed launch's output, at sampled threads (host work bounded to about 2e8 DP4A).
    std::vector<std::uint32_t> h(r.threads);
    CHECK(cudaMemcpy(h.data(), r.d_out, r.threads * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(r.d_out));
    const std::uint64_t budget = std::max<std::uint64_t>(2, std::uint64_t(2e8) / (std::uint64_t(iters) * kIssueChains));
    const std::uint64_t n = std::min<std::uint64_t>({64, budget, r.threads});
    SplitMix64 rng{std::uint64_t(seed) ^ 0xA0761D6478BD642Full};
    for (std::uint64_t s = 0; s < n; ++s) {
        const std::uint32_t t = s == 0   ? 0u
                                : s == 1 ? std::uint32_t(r.threads - 1)
                                         : std::uint32_t(rng.next() % r.threads);
        const std::uint32_t expected = host_issue_result(seed, t, iters);
        if (h[t] != expected) issue_failed(t, h[t], expected, iters, "last timed launch");
    }
    r.sampled_threads = n;
}

// ---- Part 2: the GEMM ----------------------------------------------------------------------------------

struct GemmCase {
    std::size_t index = 0;
    GemmShape shape;
    std::uint64_t bytes_a = 0, bytes_b = 0, bytes_c = 0;
    bool vec16 = false, full_check = false;  // vec16: K % 16 == 0, the 16-byte load path
    std::uint64_t checked = 0;
    int input_sets = 1;
    Timing t;
    double tops = 0;
    std::optional<double> fraction;  // of the issue-rate kernel's TOPS, when measured in this run
};

void launch_gemm(const GemmCase& c, const void* a, const void* b, void* d, cudaStream_t stream) {
    const dim3 grid(unsigned((c.shape.n + kBN - 1) / kBN), unsigned((c.shape.m + kBM - 1) / kBM));
    const auto kernel = c.vec16 ? dp4a_gemm_kernel<true> : dp4a_gemm_kernel<false>;
    kernel<<<grid, kGemmThreads, 0, stream>>>(static_cast<const std::int8_t*>(a), static_cast<const std::int8_t*>(b),
                                              static_cast<std::int32_t*>(d), int(c.shape.m), int(c.shape.n),
                                              int(c.shape.k));
    check(cudaGetLastError(), c.vec16 ? "launch of dp4a_gemm_kernel<16-byte loads>"
                                      : "launch of dp4a_gemm_kernel<4-byte loads>", __FILE__, __LINE__);
}

// A and B of the case, drawn from its own seed: the timing pass draws again what the verification pass checked.
std::pair<std::vector<std::int8_t>, std::vector<std::int8_t>> gemm_inputs(const GemmCase& c, std::uint64_t seed) {
    SplitMix64 rng{case_seed(seed, c.index)};
    std::vector<std::int8_t> a = random_int8(std::size_t(c.bytes_a), rng);
    return {std::move(a), random_int8(std::size_t(c.bytes_b), rng)};
}

// Runs the case once on fresh inputs with a poisoned C (docs/kernels.md) and compares C (every element written; the
// checked ones exact) with int64 dot products; exits 1 on a mismatch.
void verify_gemm(GemmCase& c, std::uint64_t seed, int samples, cudaStream_t stream) {
    const auto [ha, hb] = gemm_inputs(c, seed);
    const std::vector<unsigned char> bytes =
        run_checked({{ha.data(), c.bytes_a}, {hb.data(), c.bytes_b}}, c.bytes_c, 0x7f, stream,
                    [&](std::span<void* const> in, void* d) { launch_gemm(c, in[0], in[1], d, stream); });
    std::vector<std::int32_t> hc(bytes.size() / 4);
    std::memcpy(hc.data(), bytes.data(), bytes.size());
    const std::size_t m = std::size_t(c.shape.m), n = std::size_t(c.shape.n), k = std::size_t(c.shape.k);
    auto failed = [&](std::size_t e, const std::string& what) {
        std::fprintf(stderr, "%s: verification FAILED for the GEMM %s: C(%zu, %zu)%s. Nothing was timed.\n", g_program,
                     shape_text(c.shape).c_str(), e / n, e % n, what.c_str());
        std::exit(kExitVerifyFailed);
    };
    for (std::size_t e = 0; e < hc.size(); ++e)
        if (hc[e] == kPoisonI32) failed(e, " was not written (it still holds the poison 0x7f7f7f7f)");
    const bool all = c.shape.m <= 1024 && c.shape.n <= 1024 && c.shape.k <= 1024;
    const std::uint64_t count = all ? std::uint64_t(m * n) : std::uint64_t(samples) + 4;
    const std::vector<std::uint64_t> pos = sample_positions(m * n, {0, n - 1, (m - 1) * n, m * n - 1}, count,
                                                            SplitMix64{case_seed(seed, c.index) ^ 0x5DEECE66Dull});
    for (const std::uint64_t e : pos) {
        const std::size_t i = std::size_t(e / n), j = std::size_t(e % n);
        std::int64_t ref = 0;
        for (std::size_t kk = 0; kk < k; ++kk) ref += std::int64_t(ha[i * k + kk]) * std::int64_t(hb[j * k + kk]);
        if (std::int64_t(hc[e]) != ref)
            failed(e, " is " + std::to_string(hc[e]) + ", expected " + std::to_string(ref) + " [exact match required]");
    }
    c.checked = pos.size();
    c.full_check = c.checked == std::uint64_t(m * n);
}

void measure_gemm(GemmCase& c, const DeviceInfo& dev, const Options& o, std::uint64_t seed, cudaStream_t stream) {
    const auto [ha, hb] = gemm_inputs(c, seed);
    c.t = time_rotated({{ha.data(), c.bytes_a}, {hb.data(), c.bytes_b}}, c.bytes_c, dev.l2_or_64mib(), stream,
                       o.run.timing, c.input_sets,
                       [&](std::span<void* const> in, void* d) { launch_gemm(c, in[0], in[1], d, stream); });
    c.tops = 2.0 * double(c.shape.m) * double(c.shape.n) * double(c.shape.k) / c.t.median_s / 1e12;
}

// ---- Report ------------------------------------------------------------------------------------------

Json issue_record(const IssueResult& r, const Options& o, const DeviceInfo& dev) {
    Json j;
    j.set(field::test, "issue-rate").set(field::tops, r.tops);
    j.set(field::dp4a_per_sm_per_clock, r.dp4a_per_sm_per_clock).set(field::clock_rate_khz_used, dev.clock_khz);
    j.merge(timing_json(r.t));
    j.set(field::dp4a_per_launch, r.dp4a).set(field::ops_per_launch, 8.0 * double(r.dp4a));
    j.set(field::grid_blocks, r.grid).set(field::threads_per_block, kIssueThreads);
    j.set(field::blocks_per_sm, r.blocks_per_sm).set(field::waves, kIssueWaves);
    j.set(field::registers_per_thread, r.registers).set(field::chains_per_thread, kIssueChains);
    j.set(field::iters, o.issue_iters).set(field::verified, true).set(field::verify_iters, kIssueVerifyIters);
    j.set(field::verified_threads, r.verified_threads);
    return j.set(field::timed_output_sampled_threads, r.sampled_threads);
}

Json gemm_record(const GemmCase& c) {
    Json j;
    j.set(field::test, "gemm").set(field::m, c.shape.m).set(field::n, c.shape.n).set(field::k, c.shape.k);
    j.merge(timing_json(c.t)).set(field::tops, c.tops).set(field::fraction_of_measured_peak, c.fraction);
    j.set(field::verified, true).set(field::checked_elements, c.checked).set(field::full_check, c.full_check);
    j.set(field::all_elements_written, true).set(field::load_width_bytes, c.vec16 ? 16 : 4);
    j.set(field::input_sets, c.input_sets).set(field::bytes_a, c.bytes_a).set(field::bytes_b, c.bytes_b);
    return j.set(field::bytes_c, c.bytes_c);
}

// The table on stderr and the JSON report: the same rows.
int report(const Options& o, const DeviceInfo& dev, std::uint64_t seed, const IssueResult& issue,
           const std::vector<GemmCase>& cases) {
    std::vector<Json> results;
    if (issue.run) results.push_back(issue_record(issue, o, dev));
    for (const GemmCase& c : cases) results.push_back(gemm_record(c));
    print_device_line(dev);
    std::fprintf(stderr, "; %d ms + %d warm-up runs, %d timed runs per case; seed %llu\n  everything verified before "
                 "timing (exact, against the CPU)\n", o.run.timing.warmup_ms, o.run.timing.warmup, o.run.timing.repeats,
                 static_cast<unsigned long long>(seed));
    if (issue.run)
        std::fprintf(stderr, "  issue rate: %d blocks x %d threads x %d chains x %d steps (%d blocks/SM, %d regs)\n",
                     issue.grid, kIssueThreads, kIssueChains, o.issue_iters, issue.blocks_per_sm, issue.registers);
    print_rows(results, {{field::test, "test", -10}, {field::m, "M", 6, "%.0f"}, {field::n, "N", 6, "%.0f"},
                     {field::k, "K", 6, "%.0f"}, {field::time_s_median, "median us", 11, "%.2f", 1e6},
                     {field::time_s_min, "min us", 11, "%.2f", 1e6}, {field::time_s_max, "max us", 11, "%.2f", 1e6},
                     {field::tops, "TOPS", 8}, {field::dp4a_per_sm_per_clock, "dp4a/SM/clk", 11, "%.1f"},
                     {field::fraction_of_measured_peak, "of peak", 7, "%.3f"}, {field::input_sets, "sets", 4, "%.0f"},
                     {field::checked_elements, "checked", 10, "%.0f"}, {field::host_kept_ahead, "ahead", 5}});
    Json config;
    config.set(field::test, kTestNames[int(o.test)]).set(field::warmup, o.run.timing.warmup);
    config.set(field::warmup_ms, o.run.timing.warmup_ms).set(field::repeats, o.run.timing.repeats);
    config.set(field::seed, seed).set(field::samples, o.samples).set(field::issue_iters, o.issue_iters);
    config.set(field::issue_chains_per_thread, kIssueChains);
    for (const auto& [k, text] : roofplan::io::schema::conventions::dp4a) config.set(k, text);
    const Json prov = provenance(o.run, environment({"CUDA_VISIBLE_DEVICES", "CUDA_MODULE_LOADING"}));
    return write_report(o.run.json_path,
                        report_head(tool::dp4a, prov, dev, config).records(key::results, results).text(0) + "\n");
}

// ---- The run -----------------------------------------------------------------------------------------

// The GEMM cases; exits when one does not fit in the free device memory.
std::vector<GemmCase> make_cases(const Options& o, const DeviceInfo& dev) {
    std::vector<GemmCase> cases;
    if (o.test == Test::issue_rate) return cases;
    std::vector<std::string> too_big;
    for (const GemmShape& s : o.shapes) {
        GemmCase c;
        c.index = cases.size();
        c.shape = s;
        c.bytes_a = std::uint64_t(s.m) * std::uint64_t(s.k);
        c.bytes_b = std::uint64_t(s.n) * std::uint64_t(s.k);
        c.bytes_c = std::uint64_t(s.m) * std::uint64_t(s.n) * 4;
        c.vec16 = s.k % 16 == 0;
        const std::uint64_t need = round_up_256(c.bytes_a) + round_up_256(c.bytes_b) + round_up_256(c.bytes_c);
        if (need > dev.free_memory_bytes_at_start)
            too_big.push_back("GEMM " + shape_text(s) + " (from " + s.origin + ") needs " +
                              std::to_string(need / kMiB) + " MiB of device memory, but only " +
                              std::to_string(dev.free_memory_bytes_at_start / kMiB) + " MiB are free on device " +
                              std::to_string(dev.index));
        cases.push_back(c);
    }
    for (const std::string& t : too_big) std::fprintf(stderr, "%s: error: %s\n", g_program, t.c_str());
    if (!too_big.empty()) usage_error("choose smaller shapes (nothing was run)");
    return cases;
}

int run(const Options& o, const DeviceInfo& dev) {
    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreate(&stream));
    std::vector<GemmCase> cases = make_cases(o, dev);
    const std::uint64_t seed = seed_or_clock(o.run.seed);
    const std::uint32_t issue_seed = std::uint32_t(seed ^ (seed >> 32));
    IssueResult issue;
    if (o.test != Test::gemm) {  // pass 1: verify everything
        verify_issue(issue, dev, issue_seed, stream);
        std::fprintf(stderr, "%s: verified the issue-rate kernel: all %llu threads (%d steps of %d chains) exact\n",
                     g_program, static_cast<unsigned long long>(issue.verified_threads), kIssueVerifyIters,
                     kIssueChains);
    }
    for (GemmCase& c : cases) {
        verify_gemm(c, seed, o.samples, stream);
        std::fprintf(stderr, "%s: verified GEMM %s: %llu elements checked%s, all written\n", g_program,
                     shape_text(c.shape).c_str(), static_cast<unsigned long long>(c.checked),
                     c.full_check ? " (all)" : " (sampled + corners)");
    }
    if (issue.run) {  // pass 2: time everything
        measure_issue(issue, dev, o, issue_seed, stream);
        std::fprintf(stderr, "%s: timed the issue-rate kernel: median %.2f us, %.2f TOPS%s\n", g_program,
                     issue.t.median_s * 1e6, issue.tops, fell_behind(issue.t.host_kept_ahead));
    }
    for (GemmCase& c : cases) {
        measure_gemm(c, dev, o, seed, stream);
        if (issue.run && issue.tops > 0) c.fraction = c.tops / issue.tops;
        std::fprintf(stderr, "%s: timed GEMM %s: median %.2f us, %.2f TOPS%s\n", g_program, shape_text(c.shape).c_str(),
                     c.t.median_s * 1e6, c.tops, fell_behind(c.t.host_kept_ahead));
    }
    CHECK(cudaStreamDestroy(stream));
    return report(o, dev, seed, issue, cases);
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_args(argc, argv);
    const DeviceInfo dev = open_device(o.run.device);
    return run_guarded("the host keeps one case's A, B and C", [&] { return run(o, dev); });
}
