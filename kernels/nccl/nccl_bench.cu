// kernels/nccl/nccl_bench.cu — roofplan-nccl: NCCL collective bandwidth, nccl-tests conventions, one process.
//
// Method.  One process drives every visible GPU (or the first --gpus N of them) through one NCCL communicator
// clique made by ncclCommInitAll: rank r is CUDA device r, with its own stream.  Each collective is issued as
// one ncclGroupStart / ncclGroupEnd around the call of every rank.  Data type float32, reduction sum, root 0
// (broadcast, reduce), out-of-place buffers (recvbuff != sendbuff).  The operations and what S, the message
// size in bytes, means (nccl-tests' "size" column), for n ranks and e = S / 4 elements:
//
//   op             NCCL call                          elements per rank (send / recv)   S                  busbw factor
//   allreduce      ncclAllReduce(count = e)           e / e                             e x 4              2(n-1)/n
//   broadcast      ncclBroadcast(count = e, root 0)   e / e                             e x 4              1
//   reduce         ncclReduce(count = e, root 0)      e / e (only the root's recv)      e x 4              1
//   reducescatter  ncclReduceScatter(recvcount = c)   c n / c                           c x n x 4 (total)  (n-1)/n
//   allgather      ncclAllGather(sendcount = c)       c / c n                           c x n x 4 (total)  (n-1)/n
//
// with c = floor(e / n): as nccl-tests does, a size that does not split evenly over the ranks is rounded down to
// a multiple of n elements, and the rounded S is the one reported.  algbw = S / time and busbw = algbw x factor,
// both in GB/s = 1e9 bytes per second; with one rank the factor of allreduce, reducescatter and allgather is 0,
// so their busbw is 0, as nccl-tests reports it.  Sizes: --sweep MIN:MAX doubles from MIN up to MAX, --bytes
// lists sizes; units are binary (1M = 1MB = 1MiB = 1048576 bytes, as nccl-tests' -b 1M -e 1G -f 2); the default
// is 1MiB:1GiB.  Send and receive buffers are allocated once, at the largest size, on every GPU.
//
// Correctness comes before timing, for every operation and size before any of them is timed.  Each rank's
// send buffer is filled on the GPU from a seeded counter-based generator: element i of rank r is m x 2^-k with
// m a random integer in [-8, -1] U [1, 8] and k in 0..3, drawn from the SplitMix64 sequence of a seed derived
// from --seed (else the clock), the case and the rank.  Those values are multiples of 1/8 below 8 in magnitude,
// so every partial sum of up to 2^20 ranks is exact in float32: a reduction gives the same bits in any order,
// and the host can compute any expected element directly from the generator without holding the inputs.  The
// receive buffers are poisoned (all-ones bytes, a NaN), the collective runs once, and the outputs are compared
// EXACTLY with the host reference: allreduce, every rank holds the elementwise sum over ranks; reduce, the root
// holds it; broadcast, every rank holds the root's data; reducescatter, rank r holds the sum of chunk r;
// allgather, every rank holds the concatenation of the ranks' data in rank order.  Every element of every
// checked rank is compared when S <= 64 MiB; above that, the first and last 1024 elements of the receive buffer
// and a seeded random sample of 1,000,000 other distinct positions, the same on every rank (gathered on the GPU
// so that only they come back).  A mismatch prints the operation, size, rank, index, expected and received
// values and exits with status 1 before anything is timed.
//
// Timing, per operation and size: the send buffers are refilled, --warmup collectives (default 5) run and are
// waited for; then --repeats measurements (default 5), each: a lead kernel that spins for a few milliseconds
// on every rank's stream (so that the host queues the whole measurement before the GPUs reach it), a start
// event on every stream, --iters back-to-back collectives (default 20), a stop event on every stream.  A
// measurement's time is the largest elapsed time over the ranks divided by --iters (the ranks start their
// first collective a few microseconds apart, as the host issued their lead kernels; the spread over ranks is
// reported).  The median of the measurements gives algbw and busbw; min and max are reported too.  If the host
// took longer to queue a measurement than the lead kernel lasted, the case is flagged (host_kept_ahead false).
//
// NVLink multicast (NVLS) is kept off: unless NCCL_NVLS_ENABLE is already set, the program sets it to 0 before
// NCCL reads its environment (this workplace's device notes: NVLS can put a shared host's GPUs out of service).
// The NCCL_* and CUDA device variables in effect are recorded in the report.
//
// Multi-node runs: built with -DROOFPLAN_NCCL_MPI (CMake target roofplan-nccl-mpi, when Open MPI is found) the
// program runs one process per GPU under mpirun: world rank 0 makes the NCCL unique id and MPI_Bcast hands it to
// every process, which makes its communicator with ncclCommInitRank on the GPU of its node-local rank (MPI_Comm
// _split_type SHARED; local rank mod visible devices).  Each process fills, checks and times its own rank: the
// inputs of every rank come from the same seeded generator, so each process checks its output exactly against
// the same host reference; a measurement starts with an MPI_Barrier (so the processes' lead kernels overlap),
// and its time is the largest over the ranks (MPI_Allreduce MAX).  Rank 0 gathers the devices' descriptions and
// writes the table and the report; peer-access matrices are not recorded (processes may be on other nodes).
//
// Output: progress on stderr when stderr is a terminal or with --verbose, then a table on stderr; a JSON
// document (provenance, configuration, one record per operation and size) on stdout or in --json PATH (use
// --json when NCCL_DEBUG is set: NCCL writes its log to stdout).  Exit status: 0 success, 1 verification
// failed, 2 bad command line (including more GPUs asked for than are visible, or buffers that do not fit),
// 3 CUDA, NCCL or I/O error, 77 no CUDA device (the conventional "skipped" status; CTest's SKIP_RETURN_CODE).
// One GPU is enough: the collectives then run on one rank.

#include <cuda_runtime.h>
#include <dlfcn.h>
#ifdef ROOFPLAN_NCCL_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only (Open MPI's C++ bindings do not build warning-free)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif
#include <nccl.h>
#include <unistd.h>

#include <algorithm>
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
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

#include "../common/report.hpp"

namespace {

using namespace roofplan::bench;

constexpr const char* kProgram = "roofplan-nccl";
constexpr const char* kVersion = "0.1.0";  // roofplan's version (include/roofplan/version.hpp); keep in step
constexpr int kExitVerifyFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCudaError = 3;
constexpr int kExitNoDevice = 77;

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kFullCheckBytes = 64 * kMiB;    // S up to this: every element is checked
constexpr std::size_t kSamples = 1000000;                // above it: this many random positions ...
constexpr std::size_t kEdge = 1024;                      // ... plus the first and last kEdge elements
constexpr std::uint64_t kMaxBytes = 64 * kGiB;           // largest size accepted on the command line
constexpr std::uint64_t kHeadroomBytes = 512 * kMiB;     // free memory left to NCCL's lazily made buffers
constexpr int kRoot = 0;                                 // root rank of broadcast and reduce
constexpr unsigned kBlockSize = 256;

#ifdef ROOFPLAN_NCCL_MPI
constexpr bool kMpi = true;
#else
constexpr bool kMpi = false;
#endif
// The collective's ranks: every rank in this process (single process), or this process's one rank of the MPI
// world.  Rank::global is the rank's index in the world.
int g_world_size = 1;
int g_world_rank = 0;  // this process's MPI rank (0 in single-process mode)

// ---- Error checking ----------------------------------------------------------------------------------

[[noreturn]] void cuda_fail(cudaError_t err, const char* call, const char* file, int line) {
    std::fprintf(stderr, "%s:%d: CUDA error: %s: %s (%s)\n", file, line, call, cudaGetErrorString(err),
                 cudaGetErrorName(err));
    std::exit(kExitCudaError);
}

[[noreturn]] void nccl_fail(ncclResult_t result, const char* call, const char* file, int line) {
    const char* last = ncclGetLastError(nullptr);  // NCCL's last message; its argument is unused
    std::fprintf(stderr, "%s:%d: NCCL error: %s: %s (ncclResult_t %d)%s%s\n", file, line, call,
                 ncclGetErrorString(result), int(result), last != nullptr && *last != '\0' ? "; NCCL says: " : "",
                 last != nullptr ? last : "");
    std::exit(kExitCudaError);
}

// Checks the cudaError_t returned by a runtime call; on failure prints file:line, the call and the error.
#define CUDA_CHECK(call)                                                  \
    do {                                                                  \
        const cudaError_t roofplan_err_ = (call);                         \
        if (roofplan_err_ != cudaSuccess)                                 \
            cuda_fail(roofplan_err_, #call, __FILE__, __LINE__);          \
    } while (0)

// Checks the ncclResult_t returned by an NCCL call.
#define NCCL_CHECK(call)                                                  \
    do {                                                                  \
        const ncclResult_t roofplan_res_ = (call);                        \
        if (roofplan_res_ != ncclSuccess)                                 \
            nccl_fail(roofplan_res_, #call, __FILE__, __LINE__);          \
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

// ---- The input generator (host and device) -----------------------------------------------------------

constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;

// SplitMix64's output function (Steele, Lea, Flood 2014).
__host__ __device__ __forceinline__ std::uint64_t mix64(std::uint64_t z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// Element i of the stream with seed `s`: output i of SplitMix64{s}, turned into m x 2^-k with m in
// [-8, -1] U [1, 8] and k in 0..3.  Integer arithmetic and an exact scaling: the same bits on host and GPU.
__host__ __device__ __forceinline__ float element_value(std::uint64_t s, std::uint64_t i) {
    const std::uint64_t r = mix64(s + (i + 1) * kGolden);
    const int v = int(r >> 60);                 // 0..15
    const int m = v < 8 ? v - 8 : v - 7;        // -8..-1, 1..8
    const int k = int((r >> 58) & 3u);          // 0..3
    const float scale = k == 0 ? 1.0f : k == 1 ? 0.5f : k == 2 ? 0.25f : 0.125f;
    return float(m) * scale;
}

// SplitMix64 as a generator, for seeds and sample positions on the host.
struct SplitMix64 {
    std::uint64_t state;
    std::uint64_t next() { return mix64(state += kGolden); }
};

// ---- Device kernels ----------------------------------------------------------------------------------

__global__ void fill_kernel(float* __restrict__ out, std::size_t n, std::uint64_t seed) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = element_value(seed, i);
}

__global__ void gather_kernel(const float* __restrict__ in, const std::uint64_t* __restrict__ index,
                              float* __restrict__ out, std::size_t n) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = in[index[i]];
}

__device__ __forceinline__ unsigned long long global_timer_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One thread that spins for `ns` nanoseconds of the GPU's global timer: it holds the stream while the host
// queues the timed collectives behind it.
__global__ void lead_kernel(unsigned long long ns) {
    const unsigned long long start = global_timer_ns();
    while (global_timer_ns() - start < ns) {
    }
}

// A grid-stride grid: enough blocks to cover n elements, at most 8192.
unsigned grid_for(std::size_t n) {
    const std::size_t blocks = (n + kBlockSize - 1) / kBlockSize;
    return unsigned(std::max<std::size_t>(1, std::min<std::size_t>(blocks, 8192)));
}

// ---- Operations ----------------------------------------------------------------------------------------

enum class Op { allreduce, broadcast, reduce, reducescatter, allgather };
constexpr Op kAllOps[] = {Op::allreduce, Op::broadcast, Op::reduce, Op::reducescatter, Op::allgather};

const char* op_name(Op op) {
    switch (op) {
        case Op::allreduce: return "allreduce";
        case Op::broadcast: return "broadcast";
        case Op::reduce: return "reduce";
        case Op::reducescatter: return "reducescatter";
        case Op::allgather: return "allgather";
    }
    return "?";
}

// nccl-tests' bus-bandwidth factor.
double busbw_factor(Op op, int n) {
    switch (op) {
        case Op::allreduce: return 2.0 * double(n - 1) / double(n);
        case Op::reducescatter:
        case Op::allgather: return double(n - 1) / double(n);
        case Op::broadcast:
        case Op::reduce: return 1.0;
    }
    return 0.0;
}

const char* busbw_factor_text(Op op) {
    switch (op) {
        case Op::allreduce: return "2(n-1)/n";
        case Op::reducescatter:
        case Op::allgather: return "(n-1)/n";
        case Op::broadcast:
        case Op::reduce: return "1";
    }
    return "?";
}

// ---- Command line ------------------------------------------------------------------------------------

struct Options {
    std::vector<Op> ops;
    std::vector<std::uint64_t> sizes;  // requested S in bytes, ascending, no repeats
    std::optional<int> gpus;
    int warmup = 5;
    int iters = 20;
    int repeats = 5;
    std::optional<std::uint64_t> seed;
    std::string json_path;  // empty: stdout
    std::optional<std::string> git_sha;
    bool verbose = false;
};

void print_help() {
    std::printf(
        "Usage: %s [options]\n"
        "NCCL collective bandwidth (algbw, busbw) the way nccl-tests counts it, one process driving all\n"
        "visible GPUs through ncclCommInitAll.  float32, sum, root 0, out-of-place.  Every operation and size\n"
        "is checked exactly against a host reference before anything is timed.\n"
        "\n"
        "Options:\n"
        "  --op LIST         comma-separated allreduce, broadcast, reduce, reducescatter, allgather, or all\n"
        "                    (default all)\n"
        "  --sweep MIN:MAX   sizes from MIN doubling up to MAX (default 1MB:1GB)\n"
        "  --bytes LIST      comma-separated sizes (with --sweep too: both sets of sizes)\n"
        "                    Sizes are bytes with an optional binary suffix: K, KB, KiB = 1024; M, MB, MiB;\n"
        "                    G, GB, GiB.  A size is the total message as nccl-tests counts it (for\n"
        "                    reducescatter the input of one rank, for allgather the output of one rank); a\n"
        "                    multiple of 4 bytes.\n"
        "  --gpus N          use the first N visible GPUs (default: all of them)\n"
        "  --warmup N        untimed collectives before the measurements of a case (default 5)\n"
        "  --iters N         back-to-back collectives per measurement (default 20)\n"
        "  --repeats N       measurements per case; median, min and max are reported (default 5)\n"
        "  --seed N          seed of the input data (default: from the clock; printed and in the JSON)\n"
        "  --json PATH       write the JSON report to PATH instead of stdout\n"
        "  --git-sha SHA     source revision for the report (default: the ROOFPLAN_GIT_SHA compile\n"
        "                    definition, else $ROOFPLAN_GIT_SHA, else \"unknown\")\n"
        "  --verbose         progress lines on stderr even when it is not a terminal\n"
        "  -h, --help        show this help\n"
        "\n"
        "algbw = S / time, busbw = algbw x (allreduce 2(n-1)/n; reducescatter, allgather (n-1)/n; broadcast,\n"
        "reduce 1); GB/s = 1e9 bytes/s.  NCCL_NVLS_ENABLE is set to 0 unless already set.  Progress and the\n"
        "table go to stderr, the JSON report to stdout (or --json PATH; use it when NCCL_DEBUG is set).\n"
        "Exit status: 0 ok, 1 verification failed, 2 bad command line, 3 CUDA, NCCL or I/O error,\n"
        "77 no CUDA device.\n",
        kProgram);
}

[[noreturn]] void usage_error(const std::string& message) {
    std::fprintf(stderr, "%s: error: %s\nRun '%s --help' for usage.\n", kProgram, message.c_str(), kProgram);
    std::exit(kExitUsage);
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

bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        const char x = a[i] >= 'A' && a[i] <= 'Z' ? char(a[i] - 'A' + 'a') : a[i];
        const char y = b[i] >= 'A' && b[i] <= 'Z' ? char(b[i] - 'A' + 'a') : b[i];
        if (x != y) return false;
    }
    return true;
}

// A size: digits with an optional binary suffix (see --help).  Positive, a multiple of 4, at most kMaxBytes.
std::uint64_t parse_size(std::string_view flag, std::string_view text) {
    std::size_t digits = 0;
    while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') ++digits;
    const std::string_view number = text.substr(0, digits), suffix = text.substr(digits);
    std::uint64_t unit = 0;
    if (suffix.empty() || iequals(suffix, "B")) unit = 1;
    else if (iequals(suffix, "K") || iequals(suffix, "KB") || iequals(suffix, "KiB")) unit = 1024;
    else if (iequals(suffix, "M") || iequals(suffix, "MB") || iequals(suffix, "MiB")) unit = kMiB;
    else if (iequals(suffix, "G") || iequals(suffix, "GB") || iequals(suffix, "GiB")) unit = kGiB;
    std::uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
    if (number.empty() || unit == 0 || ec == std::errc::invalid_argument || ptr != number.data() + number.size())
        usage_error(std::string(flag) + ": '" + std::string(text) +
                    "' is not a size (bytes with an optional suffix K, KB, KiB, M, MB, MiB, G, GB or GiB)");
    std::uint64_t bytes = 0;
    if (ec == std::errc::result_out_of_range || __builtin_mul_overflow(value, unit, &bytes) || bytes > kMaxBytes)
        usage_error(std::string(flag) + ": '" + std::string(text) + "' is larger than " +
                    std::to_string(kMaxBytes / kGiB) + " GiB");
    if (bytes == 0) usage_error(std::string(flag) + ": sizes must be positive, got '" + std::string(text) + "'");
    if (bytes % 4 != 0)
        usage_error(std::string(flag) + ": '" + std::string(text) + "' is " + std::to_string(bytes) +
                    " bytes, not a whole number of float32 elements (a multiple of 4)");
    return bytes;
}

void add_ops(Options& o, std::string_view list) {
    for (const std::string_view name : split(list, ',')) {
        std::vector<Op> add;
        if (name == "all") add.assign(std::begin(kAllOps), std::end(kAllOps));
        else {
            for (const Op op : kAllOps)
                if (name == op_name(op)) add.push_back(op);
            if (add.empty())
                usage_error("unknown operation '" + std::string(name) +
                            "' in --op; accepted: allreduce, broadcast, reduce, reducescatter, allgather, all");
        }
        for (const Op op : add)
            if (std::find(o.ops.begin(), o.ops.end(), op) == o.ops.end()) o.ops.push_back(op);
    }
}

void add_sweep(Options& o, std::string_view spec) {
    const auto parts = split(spec, ':');
    if (parts.size() != 2) usage_error("--sweep expects MIN:MAX (e.g. 1MB:1GB), got '" + std::string(spec) + "'");
    const std::uint64_t lo = parse_size("--sweep", parts[0]), hi = parse_size("--sweep", parts[1]);
    if (lo > hi) usage_error("--sweep '" + std::string(spec) + "': MIN is larger than MAX");
    for (std::uint64_t s = lo; s <= hi; s *= 2) o.sizes.push_back(s);
}

Options parse_args(int argc, char** argv) {
    Options o;
    bool op_given = false;
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
        if (flag == "--op") {
            add_ops(o, take_value());
            op_given = true;
        } else if (flag == "--sweep") {
            add_sweep(o, take_value());
        } else if (flag == "--bytes") {
            for (const std::string_view t : split(take_value(), ',')) o.sizes.push_back(parse_size("--bytes", t));
        } else if (flag == "--gpus") {
            o.gpus = int(parse_unsigned(flag, take_value(), 1, 1024));
        } else if (flag == "--warmup") {
            o.warmup = int(parse_unsigned(flag, take_value(), 0, 100000));
        } else if (flag == "--iters") {
            o.iters = int(parse_unsigned(flag, take_value(), 1, 100000));
        } else if (flag == "--repeats") {
            o.repeats = int(parse_unsigned(flag, take_value(), 1, 10000));
        } else if (flag == "--seed") {
            o.seed = parse_unsigned(flag, take_value(), 0, std::numeric_limits<std::uint64_t>::max());
        } else if (flag == "--json") {
            const std::string_view v = take_value();
            if (v.empty()) usage_error("--json needs a non-empty path");
            o.json_path = std::string(v);
        } else if (flag == "--git-sha") {
            o.git_sha = std::string(take_value());
        } else if (flag == "--verbose") {
            if (has_value) usage_error("--verbose takes no value");
            o.verbose = true;
        } else {
            usage_error("unknown option '" + std::string(flag) + "'");
        }
    }
    if (!op_given) add_ops(o, "all");
    if (o.sizes.empty()) add_sweep(o, "1MB:1GB");
    std::sort(o.sizes.begin(), o.sizes.end());
    o.sizes.erase(std::unique(o.sizes.begin(), o.sizes.end()), o.sizes.end());
    return o;
}

// ---- JSON (written by hand: no dependency) -----------------------------------------------------------



// ---- Provenance --------------------------------------------------------------------------------------

struct DeviceInfo {
    int index = 0;
    std::string host;  // the node (hostname) the rank ran on
    std::string name, pci_bus_id;
    int cc_major = 0, cc_minor = 0;
    int sm_count = 0;
    std::size_t global_memory_bytes = 0;
    std::size_t free_memory_bytes_at_start = 0;
};

DeviceInfo query_device(int device) {
    DeviceInfo info;
    info.index = device;
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    info.name = prop.name;
    info.cc_major = prop.major;
    info.cc_minor = prop.minor;
    info.global_memory_bytes = prop.totalGlobalMem;
    char bus[64] = {};
    CUDA_CHECK(cudaDeviceGetPCIBusId(bus, int(sizeof bus), device));
    info.pci_bus_id = bus;
    CUDA_CHECK(cudaDeviceGetAttribute(&info.sm_count, cudaDevAttrMultiProcessorCount, device));
    CUDA_CHECK(cudaSetDevice(device));
    std::size_t total = 0;
    CUDA_CHECK(cudaMemGetInfo(&info.free_memory_bytes_at_start, &total));
    return info;
}

struct Topology {
    std::vector<std::vector<int>> can_access_peer;   // [i][j], i != j; -1 on the diagonal
    std::vector<std::vector<int>> p2p_perf_rank;     // cudaDevP2PAttrPerformanceRank; -1 on the diagonal
};

[[maybe_unused]] Topology query_topology(int n) {
    Topology t;
    t.can_access_peer.assign(static_cast<std::size_t>(n), std::vector<int>(static_cast<std::size_t>(n), -1));
    t.p2p_perf_rank.assign(static_cast<std::size_t>(n), std::vector<int>(static_cast<std::size_t>(n), -1));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            if (i == j) continue;
            int can = 0, rank = 0;
            CUDA_CHECK(cudaDeviceCanAccessPeer(&can, i, j));
            CUDA_CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j));
            t.can_access_peer[std::size_t(i)][std::size_t(j)] = can;
            t.p2p_perf_rank[std::size_t(i)][std::size_t(j)] = rank;
        }
    return t;
}


std::string nccl_version_string(int code) {  // NCCL >= 2.9: 10000 * major + 100 * minor + patch
    if (code >= 10000)
        return std::to_string(code / 10000) + "." + std::to_string((code % 10000) / 100) + "." +
               std::to_string(code % 100);
    return std::to_string(code / 1000) + "." + std::to_string((code % 1000) / 100) + "." + std::to_string(code % 100);
}

// The file the dynamic linker loaded NCCL from (the toolkit's copy, a Python wheel's, ...), if it says.
std::string nccl_library_path() {
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info) != 0 && info.dli_fname != nullptr)
        return info.dli_fname;
    return "";
}


std::string host_name() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "";
    return buf;
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

// CUDA variables that change which devices are used or how; recorded when set, with every NCCL_* variable.
constexpr const char* kCudaEnv[] = {"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "CUDA_DEVICE_MAX_CONNECTIONS",
                                    "CUDA_MODULE_LOADING", "CUDA_LAUNCH_BLOCKING"};

std::vector<std::pair<std::string, std::string>> relevant_environment() {
    std::vector<std::pair<std::string, std::string>> env;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        const std::string_view entry = *e;
        const auto eq = entry.find('=');
        if (eq == std::string_view::npos) continue;
        const std::string_view name = entry.substr(0, eq);
        bool keep = name.substr(0, 5) == "NCCL_";
        for (const char* c : kCudaEnv) keep = keep || name == c;
        if (keep) env.emplace_back(std::string(name), std::string(entry.substr(eq + 1)));
    }
    std::sort(env.begin(), env.end());
    return env;
}

// ---- Cases -------------------------------------------------------------------------------------------

struct Timing {
    double median_s = 0, min_s = 0, max_s = 0;
    std::vector<double> repeat_s;       // each measurement: max over ranks of elapsed / iters
    double rank_spread_s = 0;           // largest (max - min over ranks) / iters of the measurements
    double lead_s = 0;                  // how long each lead kernel spun
    double host_enqueue_s_max = 0;      // longest host time to queue one measurement
    bool host_kept_ahead = true;        // host_enqueue_s_max < lead_s
};

struct Case {
    std::size_t index = 0;
    Op op = Op::allreduce;
    std::uint64_t requested_bytes = 0;
    std::uint64_t bytes = 0;            // S, after rounding to whole elements per rank
    std::size_t count = 0;              // NCCL's count argument (recvcount, sendcount for RS, AG)
    std::size_t send_elems = 0, recv_elems = 0;  // per rank
    std::uint64_t checked = 0;          // output elements compared, over all checked ranks
    bool full_check = false;
    Timing t;
    double algbw = 0, busbw = 0, factor = 0;
};

std::string size_text(std::uint64_t bytes) {
    char buf[64];
    if (bytes >= kGiB && bytes % kGiB == 0)
        std::snprintf(buf, sizeof buf, "%lluGiB", (unsigned long long)(bytes / kGiB));
    else if (bytes >= kMiB && bytes % kMiB == 0)
        std::snprintf(buf, sizeof buf, "%lluMiB", (unsigned long long)(bytes / kMiB));
    else if (bytes >= 1024 && bytes % 1024 == 0)
        std::snprintf(buf, sizeof buf, "%lluKiB", (unsigned long long)(bytes / 1024));
    else std::snprintf(buf, sizeof buf, "%lluB", (unsigned long long)bytes);
    return buf;
}

// Element counts of a case for n ranks (see the table at the top of the file).
void size_case(Case& c, int n) {
    const std::size_t e = std::size_t(c.requested_bytes / 4);
    const std::size_t nr = std::size_t(n);
    switch (c.op) {
        case Op::allreduce:
        case Op::broadcast:
        case Op::reduce:
            c.count = c.send_elems = c.recv_elems = e;
            c.bytes = std::uint64_t(e) * 4;
            break;
        case Op::reducescatter:
            c.count = c.recv_elems = e / nr;
            c.send_elems = c.count * nr;
            c.bytes = std::uint64_t(c.send_elems) * 4;
            break;
        case Op::allgather:
            c.count = c.send_elems = e / nr;
            c.recv_elems = c.count * nr;
            c.bytes = std::uint64_t(c.recv_elems) * 4;
            break;
    }
}

// The seed of case `index`: one SplitMix64 step away from the run's seed, so cases draw unrelated data.
std::uint64_t case_seed(std::uint64_t seed, std::size_t index) {
    SplitMix64 g{seed ^ (0xD1B54A32D192ED03ull * (std::uint64_t(index) + 1))};
    return g.next();
}

// The generator seed of each rank's send buffer in case `c`.
std::vector<std::uint64_t> rank_seeds(const Case& c, std::uint64_t seed, int n) {
    std::vector<std::uint64_t> s(static_cast<std::size_t>(n));
    for (int r = 0; r < n; ++r) {
        SplitMix64 g{case_seed(seed, c.index) ^ (0xA24BAED4963EE407ull * (std::uint64_t(r) + 1))};
        s[std::size_t(r)] = g.next();
    }
    return s;
}

// ---- The communicator and its buffers ----------------------------------------------------------------

struct Rank {
    int global = 0;  // rank in the communicator
    int device = 0;
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    float* send = nullptr;
    float* recv = nullptr;
    std::uint64_t* sample_index = nullptr;  // positions gathered for a sampled check
    float* sample_out = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
};

// Queues one collective of case `c` on every rank, as one NCCL group.
void enqueue_collective(const Case& c, std::vector<Rank>& ranks) {
    NCCL_CHECK(ncclGroupStart());
    for (Rank& r : ranks) {
        switch (c.op) {
            case Op::allreduce:
                NCCL_CHECK(ncclAllReduce(r.send, r.recv, c.count, ncclFloat32, ncclSum, r.comm, r.stream));
                break;
            case Op::broadcast:
                NCCL_CHECK(ncclBroadcast(r.send, r.recv, c.count, ncclFloat32, kRoot, r.comm, r.stream));
                break;
            case Op::reduce:
                NCCL_CHECK(ncclReduce(r.send, r.recv, c.count, ncclFloat32, ncclSum, kRoot, r.comm, r.stream));
                break;
            case Op::reducescatter:
                NCCL_CHECK(ncclReduceScatter(r.send, r.recv, c.count, ncclFloat32, ncclSum, r.comm, r.stream));
                break;
            case Op::allgather:
                NCCL_CHECK(ncclAllGather(r.send, r.recv, c.count, ncclFloat32, r.comm, r.stream));
                break;
        }
    }
    NCCL_CHECK(ncclGroupEnd());
}

// Waits for every rank's stream, then asks each communicator whether it failed asynchronously.
void synchronize_all(std::vector<Rank>& ranks) {
    for (Rank& r : ranks) {
        CUDA_CHECK(cudaSetDevice(r.device));
        CUDA_CHECK(cudaStreamSynchronize(r.stream));
    }
    CUDA_CHECK(cudaGetLastError());
    for (Rank& r : ranks) {
        ncclResult_t async = ncclSuccess;
        NCCL_CHECK(ncclCommGetAsyncError(r.comm, &async));
        if (async != ncclSuccess) nccl_fail(async, "ncclCommGetAsyncError (a collective failed)", __FILE__, __LINE__);
    }
}

// Fills every rank's send buffer with the case's data (on the rank's stream; not waited for).
void fill_send_buffers(const Case& c, std::vector<Rank>& ranks, const std::vector<std::uint64_t>& seeds) {
    for (Rank& r : ranks) {
        CUDA_CHECK(cudaSetDevice(r.device));
        fill_kernel<<<grid_for(c.send_elems), kBlockSize, 0, r.stream>>>(r.send, c.send_elems,
                                                                          seeds[std::size_t(r.global)]);
        CUDA_CHECK_LAUNCH("fill_kernel");
    }
}

// ---- Verification ------------------------------------------------------------------------------------

// The expected value of element j of rank `rank`'s receive buffer.
float expected_value(const Case& c, const std::vector<std::uint64_t>& seeds, int rank, std::uint64_t j) {
    const int n = int(seeds.size());
    switch (c.op) {
        case Op::allreduce:
        case Op::reduce: {
            float sum = 0.0f;  // exact in any order (see the top of the file)
            for (int q = 0; q < n; ++q) sum += element_value(seeds[std::size_t(q)], j);
            return sum;
        }
        case Op::broadcast: return element_value(seeds[std::size_t(kRoot)], j);
        case Op::reducescatter: {
            float sum = 0.0f;
            const std::uint64_t at = std::uint64_t(rank) * c.count + j;
            for (int q = 0; q < n; ++q) sum += element_value(seeds[std::size_t(q)], at);
            return sum;
        }
        case Op::allgather: {
            const std::uint64_t q = j / c.count, at = j % c.count;
            return element_value(seeds[std::size_t(q)], at);
        }
    }
    return std::numeric_limits<float>::quiet_NaN();
}

std::uint32_t float_bits(float x) {
    std::uint32_t b;
    std::memcpy(&b, &x, sizeof b);
    return b;
}

// The checked positions of a receive buffer of `elems` elements: all of them (empty vector and full = true)
// when S <= kFullCheckBytes or there are few; else the first and last kEdge and random ones, kSamples + 2 kEdge
// distinct positions in all, sorted.
bool checks_every_element(const Case& c) { return c.bytes <= kFullCheckBytes || c.recv_elems <= kSamples + 2 * kEdge; }

std::vector<std::uint64_t> check_positions(const Case& c, std::uint64_t seed, bool& full) {
    const std::uint64_t elems = c.recv_elems;
    full = checks_every_element(c);
    if (full) return {};
    std::vector<std::uint64_t> pos;
    pos.reserve(kSamples + 2 * kEdge);
    for (std::uint64_t i = 0; i < kEdge; ++i) {
        pos.push_back(i);
        pos.push_back(elems - 1 - i);
    }
    // Draw until kSamples + 2 kEdge distinct positions (elems is larger): repeats are drawn again.
    SplitMix64 rng{case_seed(seed, c.index) ^ 0x5DEECE66Dull};
    while (pos.size() < kSamples + 2 * kEdge) {
        for (std::size_t s = pos.size(); s < kSamples + 2 * kEdge; ++s)
            pos.push_back(rng.next() % elems);  // modulo bias is irrelevant here
        std::sort(pos.begin(), pos.end());
        pos.erase(std::unique(pos.begin(), pos.end()), pos.end());
    }
    return pos;
}

// Compares the checked outputs `got[rank]` (element k is receive-buffer element k when `full`, else pos[k]) with
// the host reference, in chunks on several host threads (the reference is computed from the generator, element
// by element).  On a mismatch prints it and exits with kExitVerifyFailed.
void check_outputs(const Case& c, const std::vector<std::uint64_t>& seeds, const std::vector<int>& checked_ranks,
                   const std::vector<std::vector<float>>& got, const std::vector<std::uint64_t>& pos, bool full) {
    const int n = int(seeds.size());
    const std::size_t m = full ? c.recv_elems : pos.size();
    // For allreduce, broadcast and reduce the expected value does not depend on the rank.
    const bool same_for_all = c.op == Op::allreduce || c.op == Op::broadcast || c.op == Op::reduce;
    auto position = [&](std::size_t k) { return full ? std::uint64_t(k) : pos[k]; };
    // The first mismatch in [begin, end) as (k, rank), or (end, -1).
    auto scan = [&](std::size_t begin, std::size_t end) -> std::pair<std::size_t, int> {
        for (std::size_t k = begin; k < end; ++k) {
            const std::uint64_t j = position(k);
            float want = same_for_all ? expected_value(c, seeds, checked_ranks.front(), j) : 0.0f;
            for (const int ri : checked_ranks) {
                if (!same_for_all) want = expected_value(c, seeds, ri, j);
                if (!(got[std::size_t(ri)][k] == want)) return {k, ri};  // exact; NaN never passes
            }
        }
        return {end, -1};
    };
    const std::size_t threads = std::max<std::size_t>(
        1, std::min<std::size_t>({std::size_t(std::max(1u, std::thread::hardware_concurrency())), 32,
                                  m / (std::size_t{1} << 16)}));
    const std::size_t chunk = (m + threads - 1) / threads;
    std::vector<std::pair<std::size_t, int>> first(threads, {m, -1});
    std::vector<std::thread> pool;
    for (std::size_t t = 0; t < threads; ++t) {
        const std::size_t begin = std::min(m, t * chunk), end = std::min(m, begin + chunk);
        try {
            pool.emplace_back([&, t, begin, end] { first[t] = scan(begin, end); });
        } catch (const std::system_error&) {
            first[t] = scan(begin, end);  // no thread to be had: this one does the chunk
        }
    }
    for (std::thread& th : pool) th.join();
    for (const auto& [k, ri] : first) {
        if (ri < 0) continue;
        const std::uint64_t j = position(k);
        const float want = expected_value(c, seeds, ri, j);
        const float g = got[std::size_t(ri)][k];
        std::size_t bad = 0;
        for (std::size_t kk = 0; kk < m; ++kk)
            if (!(got[std::size_t(ri)][kk] == expected_value(c, seeds, ri, position(kk)))) ++bad;
        std::fprintf(stderr,
                     "%s: verification FAILED for %s %s (%llu bytes, %d ranks): rank %d, element %llu: expected "
                     "%.9g (bits 0x%08x), got %.9g (bits 0x%08x)%s; %zu of the %zu checked elements of that rank "
                     "are wrong [exact match required]. Nothing was timed.\n",
                     kProgram, op_name(c.op), size_text(c.bytes).c_str(), (unsigned long long)c.bytes, n, ri,
                     (unsigned long long)j, double(want), float_bits(want), double(g), float_bits(g),
                     std::isnan(g) ? " (NaN: the poison, not written?)" : "", bad, m);
        std::exit(kExitVerifyFailed);
    }
}

// Runs the case once with poisoned receive buffers and compares the outputs with the host reference.
void verify_case(Case& c, std::vector<Rank>& ranks, std::uint64_t seed) {
    const int n = g_world_size;
    const std::vector<std::uint64_t> seeds = rank_seeds(c, seed, n);
    fill_send_buffers(c, ranks, seeds);
    for (Rank& r : ranks) {
        CUDA_CHECK(cudaSetDevice(r.device));
        CUDA_CHECK(cudaMemsetAsync(r.recv, 0xFF, std::size_t(c.recv_elems) * sizeof(float), r.stream));  // NaN
    }
    enqueue_collective(c, ranks);
    synchronize_all(ranks);

    bool full = false;
    const std::vector<std::uint64_t> pos = check_positions(c, seed, full);
    const std::size_t m = full ? c.recv_elems : pos.size();
    c.full_check = full;

    // The ranks (of this process) whose output is defined: reduce's root only; every rank for the others.
    std::vector<int> checked_ranks;
    std::vector<Rank*> checked;
    for (Rank& r : ranks)
        if (c.op != Op::reduce || r.global == kRoot) checked_ranks.push_back(r.global), checked.push_back(&r);

    // Bring the checked elements of every checked rank to the host.
    std::vector<std::vector<float>> got(static_cast<std::size_t>(n));
    for (Rank* rp : checked) {
        const int ri = rp->global;
        Rank& r = *rp;
        std::vector<float>& g = got[std::size_t(ri)];
        g.resize(m);
        CUDA_CHECK(cudaSetDevice(r.device));
        if (full) {
            CUDA_CHECK(cudaMemcpy(g.data(), r.recv, m * sizeof(float), cudaMemcpyDeviceToHost));
        } else {
            CUDA_CHECK(cudaMemcpyAsync(r.sample_index, pos.data(), m * sizeof(std::uint64_t), cudaMemcpyHostToDevice,
                                       r.stream));
            gather_kernel<<<grid_for(m), kBlockSize, 0, r.stream>>>(r.recv, r.sample_index, r.sample_out, m);
            CUDA_CHECK_LAUNCH("gather_kernel");
            CUDA_CHECK(cudaMemcpyAsync(g.data(), r.sample_out, m * sizeof(float), cudaMemcpyDeviceToHost, r.stream));
            CUDA_CHECK(cudaStreamSynchronize(r.stream));
        }
    }

    if (!checked_ranks.empty()) check_outputs(c, seeds, checked_ranks, got, pos, full);
    std::uint64_t checked_here = std::uint64_t(m) * checked_ranks.size();
#ifdef ROOFPLAN_NCCL_MPI
    // A failed check exits that process, and mpirun ends the job; the counts add up over the processes.
    unsigned long long total = checked_here;
    MPI_Allreduce(MPI_IN_PLACE, &total, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    checked_here = total;
#endif
    c.checked = checked_here;
}

// ---- Timing ------------------------------------------------------------------------------------------

void time_case(Case& c, std::vector<Rank>& ranks, std::uint64_t seed, const Options& opt) {
    const int n = g_world_size;
    fill_send_buffers(c, ranks, rank_seeds(c, seed, n));
    for (int w = 0; w < opt.warmup; ++w) enqueue_collective(c, ranks);
    synchronize_all(ranks);

    // The lead kernel holds every stream while the host queues a measurement: 2 ms plus 100 us per collective
    // and rank, at most 250 ms.
    Timing& t = c.t;
    t.lead_s = std::min(0.25, 2e-3 + 1e-4 * double(opt.iters) * double(n));
    for (int rep = 0; rep < opt.repeats; ++rep) {
#ifdef ROOFPLAN_NCCL_MPI
        MPI_Barrier(MPI_COMM_WORLD);  // the processes' lead kernels start together (within the barrier's skew)
#endif
        for (Rank& r : ranks) {
            CUDA_CHECK(cudaSetDevice(r.device));
            lead_kernel<<<1, 1, 0, r.stream>>>(static_cast<unsigned long long>(t.lead_s * 1e9));
            CUDA_CHECK_LAUNCH("lead_kernel");
            CUDA_CHECK(cudaEventRecord(r.start, r.stream));
        }
        const auto queue_start = std::chrono::steady_clock::now();
        for (int it = 0; it < opt.iters; ++it) enqueue_collective(c, ranks);
        for (Rank& r : ranks) {
            CUDA_CHECK(cudaSetDevice(r.device));
            CUDA_CHECK(cudaEventRecord(r.stop, r.stream));
        }
        const double enqueue_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - queue_start).count();
        t.host_enqueue_s_max = std::max(t.host_enqueue_s_max, enqueue_s);
        synchronize_all(ranks);
        double longest = 0, shortest = std::numeric_limits<double>::infinity();
        for (Rank& r : ranks) {
            float ms = 0;
            CUDA_CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
            longest = std::max(longest, double(ms) * 1e-3);
            shortest = std::min(shortest, double(ms) * 1e-3);
        }
#ifdef ROOFPLAN_NCCL_MPI
        MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &shortest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
#endif
        t.repeat_s.push_back(longest / opt.iters);
        t.rank_spread_s = std::max(t.rank_spread_s, (longest - shortest) / opt.iters);
    }
#ifdef ROOFPLAN_NCCL_MPI
    MPI_Allreduce(MPI_IN_PLACE, &t.host_enqueue_s_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
    t.host_kept_ahead = t.host_enqueue_s_max < t.lead_s;

    std::vector<double> s = t.repeat_s;
    std::sort(s.begin(), s.end());
    const std::size_t k = s.size();
    t.median_s = k % 2 ? s[k / 2] : 0.5 * (s[k / 2 - 1] + s[k / 2]);
    t.min_s = s.front();
    t.max_s = s.back();
    c.factor = busbw_factor(c.op, n);
    c.algbw = double(c.bytes) / t.median_s / 1e9;
    c.busbw = c.algbw * c.factor;
}

// ---- Report ------------------------------------------------------------------------------------------

struct RunInfo {
    std::vector<DeviceInfo> devices;
    Topology topo;
    int visible_devices = 0;
    int nccl_version = 0;
    std::string nccl_library;
    int driver_version = 0, runtime_version = 0;
    bool nvls_set_by_program = false;
    std::uint64_t seed = 0;
    std::uint64_t send_buffer_bytes = 0, recv_buffer_bytes = 0;
    int local_device = 0;  // MPI: this process's GPU
};

std::string op_list(const Options& opt) {
    std::string t;
    for (const Op op : opt.ops) t += std::string(t.empty() ? "" : ",") + op_name(op);
    return t;
}

std::string int_matrix_json(const std::vector<std::vector<int>>& m, bool as_bool) {
    std::string j = "[";
    for (std::size_t i = 0; i < m.size(); ++i) {
        j += i ? ", [" : "[";
        for (std::size_t k = 0; k < m[i].size(); ++k) {
            const int v = m[i][k];
            j += k ? ", " : "";
            j += v < 0 ? std::string("null") : as_bool ? json_bool(v != 0) : json_number(v);
        }
        j += "]";
    }
    return j + "]";
}

std::string build_json(const Options& opt, const RunInfo& info, int argc, char** argv,
                       const std::vector<Case>& cases) {
    const auto [git_sha, git_source] = git_sha_and_source(opt);
    std::string cmd = "[";
    for (int i = 0; i < argc; ++i) cmd += (i ? ", " : "") + json_string(argv[i]);
    cmd += "]";
    const std::string nvcc_version = std::to_string(__CUDACC_VER_MAJOR__) + "." +
                                     std::to_string(__CUDACC_VER_MINOR__) + "." +
                                     std::to_string(__CUDACC_VER_BUILD__);
    std::string env = "{";
    for (const auto& [name, value] : relevant_environment())
        env += std::string(env.size() > 1 ? ", " : "") + json_string(name) + ": " + json_string(value);
    env += "}";
    std::string sizes = "[";
    for (std::size_t i = 0; i < opt.sizes.size(); ++i) sizes += (i ? ", " : "") + json_number(opt.sizes[i]);
    sizes += "]";

    std::string j;
    j += "{\n";
    j += "  \"tool\": \"roofplan-nccl\",\n";
    j += "  \"schema_version\": 1,\n";
    j += "  \"provenance\": {\n";
    j += "    \"program\": " + json_string(kProgram) + ",\n";
    j += "    \"version\": " + json_string(kVersion) + ",\n";
    j += "    \"date_utc\": " + json_string(utc_now_iso8601()) + ",\n";
    j += "    \"command_line\": " + cmd + ",\n";
    j += "    \"git_sha\": " + json_string(git_sha) + ",\n";
    j += "    \"git_sha_source\": " + json_string(git_source) + ",\n";
    j += "    \"hostname\": " + json_string(host_name()) + ",\n";
    j += "    \"nccl_version\": " + json_string(nccl_version_string(info.nccl_version)) + ",\n";
    j += "    \"nccl_version_code\": " + json_number(info.nccl_version) + ",\n";
    j += "    \"nccl_header_version\": " + json_string(nccl_version_string(NCCL_VERSION_CODE)) + ",\n";
    j += "    \"nccl_library\": " + json_string(info.nccl_library) + ",\n";
    j += "    \"driver_version\": " + json_string(version_string(info.driver_version)) + ",\n";
    j += "    \"driver_version_code\": " + json_number(info.driver_version) + ",\n";
    j += "    \"runtime_version\": " + json_string(version_string(info.runtime_version)) + ",\n";
    j += "    \"runtime_version_code\": " + json_number(info.runtime_version) + ",\n";
    j += "    \"compiler\": " + json_string("nvcc " + nvcc_version) + ",\n";
    j += "    \"environment\": " + env + ",\n";
    j += "    \"nccl_nvls_enable_set_by_program\": " + json_bool(info.nvls_set_by_program) + ",\n";
    j += "    \"visible_devices\": " + json_number(info.visible_devices) + ",\n";
    j += "    \"devices\": [\n";
    for (std::size_t i = 0; i < info.devices.size(); ++i) {
        const DeviceInfo& d = info.devices[i];
        j += "      {\"rank\": " + json_number(int(i)) + ", \"host\": " + json_string(d.host) +
             ", \"index\": " + json_number(d.index) +
             ", \"name\": " + json_string(d.name) + ", \"pci_bus_id\": " + json_string(d.pci_bus_id) +
             ", \"compute_capability\": " + json_string(std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor)) +
             ", \"sm_count\": " + json_number(d.sm_count) +
             ", \"global_memory_bytes\": " + json_number(std::uint64_t{d.global_memory_bytes}) +
             ", \"free_memory_bytes_at_start\": " + json_number(std::uint64_t{d.free_memory_bytes_at_start}) + "}" +
             (i + 1 < info.devices.size() ? ",\n" : "\n");
    }
    j += "    ],\n";
    j += "    \"peer_access\": " + int_matrix_json(info.topo.can_access_peer, true) + ",\n";
    j += "    \"p2p_performance_rank\": " + int_matrix_json(info.topo.p2p_perf_rank, false) + "\n";
    j += "  },\n";
    j += "  \"config\": {\n";
    j += "    \"ops\": " + json_string(op_list(opt)) + ",\n";
    j += "    \"sizes_requested_bytes\": " + sizes + ",\n";
    j += "    \"ranks\": " + json_number(int(info.devices.size())) + ",\n";
    j += "    \"dtype\": \"float32\",\n";
    j += "    \"redop\": \"sum\",\n";
    j += "    \"root\": " + json_number(kRoot) + ",\n";
    j += "    \"in_place\": false,\n";
    j += "    \"warmup\": " + json_number(opt.warmup) + ",\n";
    j += "    \"iters\": " + json_number(opt.iters) + ",\n";
    j += "    \"repeats\": " + json_number(opt.repeats) + ",\n";
    j += "    \"seed\": " + json_number(info.seed) + ",\n";
    j += "    \"send_buffer_bytes_per_gpu\": " + json_number(info.send_buffer_bytes) + ",\n";
    j += "    \"recv_buffer_bytes_per_gpu\": " + json_number(info.recv_buffer_bytes) + ",\n";
    j += kMpi ? "    \"launch\": \"MPI, one process per rank (mpirun), ncclCommInitRank with the unique id of rank 0 "
                "(MPI_Bcast); each process on the GPU of its node-local rank\",\n"
              : "    \"launch\": \"one process, ncclCommInitAll over the first ranks visible devices; each collective "
                "one ncclGroupStart/End over all ranks\",\n";
    j += "    \"bytes\": \"S as nccl-tests counts it: the buffer for allreduce, broadcast, reduce; the total over "
         "ranks (recvcount x ranks x 4) for reducescatter; the output (sendcount x ranks x 4) for allgather\",\n";
    j += "    \"bandwidth\": \"algbw_GBps = bytes / time_s_median / 1e9; busbw_GBps = algbw_GBps x busbw_factor "
         "(allreduce 2(n-1)/n, reducescatter and allgather (n-1)/n, broadcast and reduce 1)\",\n";
    j += "    \"timing\": \"per measurement: a lead kernel on every stream, a CUDA event on every stream, iters "
         "back-to-back collectives, an event on every stream; time = max over ranks of elapsed / iters; median, min "
         "and max over repeats measurements, after warmup collectives\",\n";
    j += "    \"verification\": \"inputs m x 2^-k (m in [-8,-1] U [1,8], k in 0..3) from seeded SplitMix64 streams, "
         "receive buffers poisoned with NaN, one run compared exactly with a host reference: every element when "
         "bytes <= 64 MiB, else the first and last 1024 and 1000000 other distinct random positions of each checked "
         "rank's receive buffer; checked_elements counts over ranks (reduce: the root only)\"\n";
    j += "  },\n";
    j += "  \"results\": [\n";
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const Case& c = cases[i];
        std::string reps = "[";
        for (std::size_t k = 0; k < c.t.repeat_s.size(); ++k) reps += (k ? ", " : "") + json_number(c.t.repeat_s[k]);
        reps += "]";
        j += "    {\"op\": " + json_string(op_name(c.op)) + ", \"bytes\": " + json_number(c.bytes) +
             ", \"bytes_requested\": " + json_number(c.requested_bytes) +
             ", \"count\": " + json_number(std::uint64_t{c.count}) +
             ", \"ranks\": " + json_number(int(info.devices.size())) +
             ", \"time_s_median\": " + json_number(c.t.median_s) + ", \"time_s_min\": " + json_number(c.t.min_s) +
             ", \"time_s_max\": " + json_number(c.t.max_s) + ", \"algbw_GBps\": " + json_number(c.algbw) +
             ", \"busbw_GBps\": " + json_number(c.busbw) + ", \"busbw_factor\": " + json_number(c.factor) +
             ", \"busbw_factor_formula\": " + json_string(busbw_factor_text(c.op)) +
             ", \"verified\": true, \"checked_elements\": " + json_number(c.checked) +
             ", \"check\": " + json_string(c.full_check ? "all elements" : "sampled") +
             ", \"repeat_times_s\": " + reps + ", \"rank_spread_s\": " + json_number(c.t.rank_spread_s) +
             ", \"lead_s\": " + json_number(c.t.lead_s) +
             ", \"host_enqueue_s_max\": " + json_number(c.t.host_enqueue_s_max) +
             ", \"host_kept_ahead\": " + json_bool(c.t.host_kept_ahead) + "}" + (i + 1 < cases.size() ? ",\n" : "\n");
    }
    j += "  ]\n";
    j += "}\n";
    return j;
}

void print_table(const Options& opt, const RunInfo& info, const std::vector<Case>& cases) {
    const int n = int(info.devices.size());
    std::fprintf(stderr, "\n%s: %d rank%s, NCCL %s (%s), driver %s, runtime %s\n", kProgram, n, n == 1 ? "" : "s",
                 nccl_version_string(info.nccl_version).c_str(),
                 info.nccl_library.empty() ? "library path unknown" : info.nccl_library.c_str(),
                 version_string(info.driver_version).c_str(), version_string(info.runtime_version).c_str());
    for (std::size_t i = 0; i < info.devices.size(); ++i) {
        const DeviceInfo& d = info.devices[i];
        std::fprintf(stderr, "  rank %zu: device %d, %s [%s], sm_%d%d, %d SMs, %.1f GiB\n", i, d.index, d.name.c_str(),
                     d.pci_bus_id.c_str(), d.cc_major, d.cc_minor, d.sm_count,
                     double(d.global_memory_bytes) / double(kGiB));
    }
    if (n > 1 && info.topo.can_access_peer.size() == std::size_t(n)) {
        std::fprintf(stderr, "  peer access:");
        for (int a = 0; a < n; ++a) {
            std::fprintf(stderr, " ");
            for (int b = 0; b < n; ++b) {
                const int v = info.topo.can_access_peer[std::size_t(a)][std::size_t(b)];
                std::fprintf(stderr, "%c", v < 0 ? '-' : v ? 'Y' : 'n');
            }
        }
        std::fprintf(stderr, "  (row i: can device i access device j)\n");
    }
    const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
    std::fprintf(stderr, "  NCCL_NVLS_ENABLE=%s%s; float32 sum, root %d, out-of-place; %d warm-up, %d x %d timed "
                 "collectives per case; seed %llu\n",
                 nvls != nullptr ? nvls : "(unset)", info.nvls_set_by_program ? " (set by this program)" : "", kRoot,
                 opt.warmup, opt.repeats, opt.iters, static_cast<unsigned long long>(info.seed));
    std::fprintf(stderr, "  every case verified exactly before timing; GB/s = 1e9 B/s\n\n");
    std::fprintf(stderr, "  %-13s %12s %11s %11s %11s %11s %10s %10s %7s %10s\n", "op", "bytes", "count", "median us",
                 "min us", "max us", "algbw GB/s", "busbw GB/s", "factor", "checked");
    for (const Case& c : cases)
        std::fprintf(stderr, "  %-13s %12llu %11llu %11.2f %11.2f %11.2f %10.2f %10.2f %7.3f %10llu%s\n", op_name(c.op),
                     (unsigned long long)c.bytes, (unsigned long long)c.count, c.t.median_s * 1e6, c.t.min_s * 1e6,
                     c.t.max_s * 1e6, c.algbw, c.busbw, c.factor, (unsigned long long)c.checked,
                     c.t.host_kept_ahead ? "" : "  [host fell behind]");
}

// ---- The run -----------------------------------------------------------------------------------------

int run(const Options& opt, RunInfo& info, int argc, char** argv) {
    const int n = g_world_size;
    const bool root_process = g_world_rank == 0;

    // The cases, operation by operation, sizes ascending.
    std::vector<Case> cases;
    for (const Op op : opt.ops)
        for (const std::uint64_t s : opt.sizes) {
            Case c;
            c.index = cases.size();
            c.op = op;
            c.requested_bytes = s;
            size_case(c, n);
            if (c.count == 0)
                usage_error(std::string(op_name(op)) + " of " + std::to_string(s) + " bytes over " + std::to_string(n) +
                            " ranks leaves no element per rank; sizes must be at least " + std::to_string(4 * n) +
                            " bytes");
            cases.push_back(c);
        }
    std::uint64_t send_elems = 0, recv_elems = 0;
    for (const Case& c : cases) {
        send_elems = std::max<std::uint64_t>(send_elems, c.send_elems);
        recv_elems = std::max<std::uint64_t>(recv_elems, c.recv_elems);
    }
    info.send_buffer_bytes = send_elems * sizeof(float);
    info.recv_buffer_bytes = recv_elems * sizeof(float);
    const bool any_sampled =
        std::any_of(cases.begin(), cases.end(), [](const Case& c) { return !checks_every_element(c); });
    const std::size_t sample_cap = any_sampled ? kSamples + 2 * kEdge : 0;

    // The communicators (NCCL reads its environment here), streams and events.
    const bool progress = root_process && (opt.verbose || isatty(fileno(stderr)) != 0);
    if (progress) std::fprintf(stderr, "%s: making the NCCL communicators of %d rank(s)\n", kProgram, n);
    std::vector<Rank> ranks;
#ifdef ROOFPLAN_NCCL_MPI
    {
        Rank rk;
        rk.global = g_world_rank;
        rk.device = info.local_device;
        ncclUniqueId id{};
        if (root_process) NCCL_CHECK(ncclGetUniqueId(&id));
        MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD);
        CUDA_CHECK(cudaSetDevice(rk.device));
        NCCL_CHECK(ncclCommInitRank(&rk.comm, n, id, g_world_rank));
        ranks.push_back(rk);
    }
#else
    {
        std::vector<ncclComm_t> comms(static_cast<std::size_t>(n));
        std::vector<int> devlist(static_cast<std::size_t>(n));
        for (int r = 0; r < n; ++r) devlist[std::size_t(r)] = info.devices[std::size_t(r)].index;
        NCCL_CHECK(ncclCommInitAll(comms.data(), n, devlist.data()));
        for (int r = 0; r < n; ++r) {
            Rank rk;
            rk.global = r;
            rk.device = devlist[std::size_t(r)];
            rk.comm = comms[std::size_t(r)];
            ranks.push_back(rk);
        }
    }
#endif
    for (Rank& rk : ranks) {
        CUDA_CHECK(cudaSetDevice(rk.device));
        CUDA_CHECK(cudaStreamCreateWithFlags(&rk.stream, cudaStreamNonBlocking));
        CUDA_CHECK(cudaEventCreate(&rk.start));
        CUDA_CHECK(cudaEventCreate(&rk.stop));
    }

    // Buffers: the largest case's, on every GPU, if they fit with room left for NCCL.
    const std::uint64_t sample_bytes = std::uint64_t(sample_cap) * (sizeof(std::uint64_t) + sizeof(float));
    const std::uint64_t need = info.send_buffer_bytes + info.recv_buffer_bytes + sample_bytes;
    for (Rank& rk : ranks) {
        CUDA_CHECK(cudaSetDevice(rk.device));
        std::size_t free_bytes = 0, total_bytes = 0;
        CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        if (need + kHeadroomBytes > free_bytes)
            usage_error("the largest size needs " + std::to_string(need / kMiB) +
                        " MiB of buffers on every GPU (send " + std::to_string(info.send_buffer_bytes / kMiB) +
                        " MiB, receive " + std::to_string(info.recv_buffer_bytes / kMiB) + " MiB) plus " +
                        std::to_string(kHeadroomBytes / kMiB) + " MiB for NCCL, but device " +
                        std::to_string(rk.device) + " has " + std::to_string(free_bytes / kMiB) +
                        " MiB free; choose smaller sizes (nothing was run)");
        CUDA_CHECK(cudaMalloc(&rk.send, std::size_t(info.send_buffer_bytes)));
        CUDA_CHECK(cudaMalloc(&rk.recv, std::size_t(info.recv_buffer_bytes)));
        if (sample_cap > 0) {
            CUDA_CHECK(cudaMalloc(&rk.sample_index, sample_cap * sizeof(std::uint64_t)));
            CUDA_CHECK(cudaMalloc(&rk.sample_out, sample_cap * sizeof(float)));
        }
    }

    // Pass 1: verify every case.
    for (Case& c : cases) {
        verify_case(c, ranks, info.seed);
        if (progress)
            std::fprintf(stderr, "%s: %s %s: verified (%llu elements checked, %s)\n", kProgram, op_name(c.op),
                         size_text(c.bytes).c_str(), (unsigned long long)c.checked,
                         c.full_check ? "all" : "sampled");
    }

    // Pass 2: time every case.
    for (Case& c : cases) {
        time_case(c, ranks, info.seed, opt);
        if (progress)
            std::fprintf(stderr, "%s: %s %s: median %.2f us, algbw %.2f GB/s, busbw %.2f GB/s%s\n", kProgram,
                         op_name(c.op), size_text(c.bytes).c_str(), c.t.median_s * 1e6, c.algbw, c.busbw,
                         c.t.host_kept_ahead ? "" : " (the host fell behind the lead kernel: launch gaps possible)");
    }

    for (Rank& rk : ranks) {
        CUDA_CHECK(cudaSetDevice(rk.device));
        CUDA_CHECK(cudaStreamSynchronize(rk.stream));
        NCCL_CHECK(ncclCommDestroy(rk.comm));
        CUDA_CHECK(cudaEventDestroy(rk.start));
        CUDA_CHECK(cudaEventDestroy(rk.stop));
        CUDA_CHECK(cudaStreamDestroy(rk.stream));
        CUDA_CHECK(cudaFree(rk.send));
        CUDA_CHECK(cudaFree(rk.recv));
        if (rk.sample_index != nullptr) CUDA_CHECK(cudaFree(rk.sample_index));
        if (rk.sample_out != nullptr) CUDA_CHECK(cudaFree(rk.sample_out));
    }

    if (!root_process) return 0;  // rank 0 reports for the world
    print_table(opt, info, cases);
    const std::string json = build_json(opt, info, argc, argv, cases);
    if (opt.json_path.empty()) {
        std::fputs(json.c_str(), stdout);
        if (std::fflush(stdout) != 0) {
            std::perror("roofplan-nccl: error: writing the JSON report to stdout");
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

#ifdef ROOFPLAN_NCCL_MPI
// Every process's device description, gathered on rank 0 (fixed-size text records; tab-separated fields).
std::vector<DeviceInfo> gather_devices(const DeviceInfo& mine) {
    constexpr int kRecord = 512;
    char record[kRecord] = {};
    std::snprintf(record, sizeof record, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t%llu\t%llu", mine.host.c_str(), mine.index,
                  mine.name.c_str(), mine.pci_bus_id.c_str(), mine.cc_major, mine.cc_minor, mine.sm_count,
                  (unsigned long long)mine.global_memory_bytes, (unsigned long long)mine.free_memory_bytes_at_start);
    std::vector<char> all(g_world_rank == 0 ? std::size_t(kRecord) * std::size_t(g_world_size) : 1);
    MPI_Gather(record, kRecord, MPI_CHAR, all.data(), kRecord, MPI_CHAR, 0, MPI_COMM_WORLD);
    std::vector<DeviceInfo> out;
    if (g_world_rank != 0) return out;
    for (int r = 0; r < g_world_size; ++r) {
        const std::string text(all.data() + std::size_t(r) * kRecord);
        std::vector<std::string> f;
        std::size_t start = 0;
        for (std::size_t tab; (tab = text.find('\t', start)) != std::string::npos; start = tab + 1)
            f.push_back(text.substr(start, tab - start));
        f.push_back(text.substr(start));
        DeviceInfo d;
        if (f.size() == 9) {
            d.host = f[0];
            d.index = std::atoi(f[1].c_str());
            d.name = f[2];
            d.pci_bus_id = f[3];
            d.cc_major = std::atoi(f[4].c_str());
            d.cc_minor = std::atoi(f[5].c_str());
            d.sm_count = std::atoi(f[6].c_str());
            d.global_memory_bytes = std::size_t(std::strtoull(f[7].c_str(), nullptr, 10));
            d.free_memory_bytes_at_start = std::size_t(std::strtoull(f[8].c_str(), nullptr, 10));
        }
        out.push_back(d);
    }
    return out;
}
#endif

int main(int argc, char** argv) {
#ifdef ROOFPLAN_NCCL_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world_size);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
    struct Finalize {
        ~Finalize() { MPI_Finalize(); }
    } finalize;
#endif
    const Options opt = parse_args(argc, argv);

    // Before NCCL reads its environment: NVLink multicast off unless the caller chose.
    RunInfo info;
    if (std::getenv("NCCL_NVLS_ENABLE") == nullptr) {
        if (setenv("NCCL_NVLS_ENABLE", "0", 0) != 0) {
            std::perror("roofplan-nccl: error: setenv(NCCL_NVLS_ENABLE)");
            return kExitCudaError;
        }
        info.nvls_set_by_program = true;
    } else if (std::string_view(std::getenv("NCCL_NVLS_ENABLE")) != "0") {
        std::fprintf(stderr, "%s: warning: NCCL_NVLS_ENABLE=%s is set: NVLink multicast may be used (this "
                     "workplace's machines need it off)\n", kProgram, std::getenv("NCCL_NVLS_ENABLE"));
    }

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
    if (opt.gpus && *opt.gpus > device_count)
        usage_error("--gpus " + std::to_string(*opt.gpus) +
                    " asks for more GPUs than are visible: this machine shows " + std::to_string(device_count) +
                    " CUDA device(s)" +
                    (std::getenv("CUDA_VISIBLE_DEVICES") != nullptr
                         ? std::string(" (CUDA_VISIBLE_DEVICES=") + std::getenv("CUDA_VISIBLE_DEVICES") + ")"
                         : std::string()));
#ifdef ROOFPLAN_NCCL_MPI
    if (opt.gpus) usage_error("--gpus does not apply under MPI: the ranks are mpirun's processes (-np N)");
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_world_rank, MPI_INFO_NULL, &node);
    int local_rank = 0, local_size = 1;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    MPI_Comm_free(&node);
    if (local_size > device_count && g_world_rank == 0)
        std::fprintf(stderr, "%s: warning: %d processes on a node with %d GPU(s): GPUs are shared\n", kProgram,
                     local_size, device_count);
    info.local_device = local_rank % device_count;
#else
    const int n = opt.gpus ? *opt.gpus : device_count;
    g_world_size = n;
#endif

    info.visible_devices = device_count;
    NCCL_CHECK(ncclGetVersion(&info.nccl_version));
    info.nccl_library = nccl_library_path();
    CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
    CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
#ifdef ROOFPLAN_NCCL_MPI
    DeviceInfo mine = query_device(info.local_device);
    mine.host = host_name();
    info.devices = gather_devices(mine);
    // The seed must be the same in every process: rank 0's.
    std::uint64_t seed = opt.seed ? *opt.seed
                                  : std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) &
                                        ((1ull << 53) - 1);
    MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    info.seed = seed;
#else
    for (int d = 0; d < n; ++d) {
        info.devices.push_back(query_device(d));
        info.devices.back().host = host_name();
    }
    info.topo = query_topology(n);
#endif
    // Default seed from the clock, kept below 2^53 so that it survives a round trip through a JSON double.
    if (!kMpi)
        info.seed = opt.seed ? *opt.seed
                             : std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) &
                                   ((1ull << 53) - 1);
    try {
        return run(opt, info, argc, argv);
    } catch (const std::bad_alloc&) {
        std::fprintf(stderr, "%s: error: out of host memory (the check keeps each rank's checked output)\n", kProgram);
        return kExitCudaError;
    }
}
