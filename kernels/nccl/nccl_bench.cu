// kernels/nccl/nccl_bench.cu — roofplan-nccl: NCCL collective bandwidth, nccl-tests conventions, one process.
//
// allreduce, broadcast, reduce, reducescatter and allgather of float32 (sum, root 0, out-of-place) over every
// visible GPU (--gpus N) from one process through ncclCommInitAll, or one process per GPU under mpirun (built with
// -DROOFPLAN_NCCL_MPI: roofplan-nccl-mpi).  S, algbw and busbw as nccl-tests count them (roofplan::busbw_factor).
// Inputs m x 2^-k (m in [-8, -1] U [1, 8], k in 0..3) make every sum exact in any order, so each rank's poisoned
// receive buffer is compared exactly with the host (every element up to 64 MiB, else edges and 10^6 samples) before
// anything is timed.  A measurement: a lead kernel on every stream, --iters collectives between two events; its time
// is the slowest rank's.  NCCL_NVLS_ENABLE is set to 0 unless set.  The method in detail: docs/kernels.md.

#include <cuda_runtime.h>
#include <dlfcn.h>
#ifdef ROOFPLAN_NCCL_MPI
#define OMPI_SKIP_MPICXX 1  // the C API only (Open MPI's C++ bindings do not build warning-free)
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>
#endif
#include <nccl.h>

#include <bit>
#include <cctype>
#include <cstddef>
#include <tuple>

#include <roofplan/system/collective_kind.hpp>

#include "../common/harness.hpp"

namespace {

using namespace roofplan::bench;
using roofplan::Collective;
namespace tool = roofplan::io::schema::tool;

constexpr std::uint64_t kGiB = std::uint64_t{1} << 30;
constexpr std::uint64_t kFullCheckBytes = 64 * kMiB;    // S up to this: every element is checked
constexpr std::size_t kSamples = 1000000;                // above it: this many random positions ...
constexpr std::size_t kEdge = 1024;                      // ... plus the first and last kEdge elements
constexpr std::uint64_t kMaxBytes = 64 * kGiB;           // largest size accepted on the command line
constexpr std::uint64_t kHeadroomBytes = 512 * kMiB;     // free memory left to NCCL's lazily made buffers
constexpr int kRoot = 0;                                 // root rank of broadcast and reduce

// The collective's ranks: every rank in this process (single process), or this process's one rank of the MPI
// world.  Rank::global is the rank's index in the world.
int g_world_size = 1, g_world_rank = 0;  // g_world_rank: this process's MPI rank (0 in single-process mode)

// ---- The input generator (host and device) -----------------------------------------------------------

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

// ---- Device kernels ----------------------------------------------------------------------------------

__global__ void fill_kernel(float* __restrict__ out, std::size_t n, std::uint64_t seed) {
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    for (std::size_t i = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x; i < n; i += stride)
        out[i] = element_value(seed, i);
}

const char* op_name(Collective op) { return roofplan::to_string(op).data(); }

// ---- Command line ------------------------------------------------------------------------------------

struct Options {
    RunOptions run;
    std::vector<Collective> ops;
    std::vector<std::uint64_t> sizes;  // requested S in bytes, ascending, no repeats
    std::optional<std::uint64_t> gpus;
    int iters = 20;
    bool verbose = false;
};

// A size: digits with an optional binary suffix (see --help).  Positive, a multiple of 4, at most kMaxBytes.
std::uint64_t parse_size(std::string_view flag, std::string_view text) {
    const std::size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
    std::string suffix(text.substr(digits));
    for (char& ch : suffix) ch = char(std::tolower(static_cast<unsigned char>(ch)));
    const std::uint64_t unit = suffix.empty() || suffix == "b"                       ? 1
                               : suffix == "k" || suffix == "kb" || suffix == "kib" ? 1024
                               : suffix == "m" || suffix == "mb" || suffix == "mib" ? kMiB
                               : suffix == "g" || suffix == "gb" || suffix == "gib" ? kGiB
                                                                                    : 0;
    const std::string where = std::string(flag) + ": '" + std::string(text) + "'";
    if (digits == 0 || unit == 0)
        usage_error(where + " is not a size (bytes with an optional suffix K, KB, KiB, M, MB, MiB, G, GB or GiB)");
    std::uint64_t bytes = 0;
    if (digits > 12 || __builtin_mul_overflow(parse_unsigned(flag, text.substr(0, digits), 0, ~0ull), unit, &bytes) ||
        bytes > kMaxBytes)
        usage_error(where + " is larger than " + std::to_string(kMaxBytes / kGiB) + " GiB");
    if (bytes == 0) usage_error(std::string(flag) + ": sizes must be positive, got '" + std::string(text) + "'");
    if (bytes % 4 != 0)
        usage_error(where + " is " + std::to_string(bytes) + " bytes, not a whole number of float32 elements (a "
                    "multiple of 4)");
    return bytes;
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
    o.run.timing = {5, 5, 0};  // repeats (measurements), warmup (collectives), no --warmup-ms
    Cli cli(tool::nccl.data(), "NCCL collective bandwidth (algbw, busbw) the way nccl-tests counts it, one process "
                               "driving all\nvisible GPUs through ncclCommInitAll.  float32, sum, root 0, "
                               "out-of-place.  Every operation and size\nis checked exactly against a host reference "
                               "before anything is timed.");
    cli.option("--op", "LIST", "comma-separated allreduce, broadcast, reduce, reducescatter, allgather, or all\n"
               "(default all)", [&o](std::string_view v) {
                   std::vector<std::string_view> names;
                   for (const Collective op : roofplan::all_collectives) names.push_back(roofplan::to_string(op));
                   add_choices(o.ops, v, names, "operation");
               });
    cli.option("--sweep", "MIN:MAX", "sizes from MIN doubling up to MAX (default 1MB:1GB)",
               [&o](std::string_view v) { add_sweep(o, v); });
    cli.option("--bytes", "LIST", "comma-separated sizes (with --sweep too: both sets of sizes)\n"
               "Sizes are bytes with an optional binary suffix: K, KB, KiB = 1024; M, MB, MiB;\n"
               "G, GB, GiB.  A size is the total message as nccl-tests counts it (for\n"
               "reducescatter the input of one rank, for allgather the output of one rank); a\n"
               "multiple of 4 bytes.", [&o](std::string_view v) {
                   for (const std::string_view t : split(v, ',')) o.sizes.push_back(parse_size("--bytes", t));
               });
    cli.number("--gpus", "use the first N visible GPUs (default: all of them)", o.gpus, 1, 1024);
    cli.number("--iters", "back-to-back collectives per measurement", o.iters, 1, 100000);
    cli.common(o.run, false).option("--verbose", "", "progress lines on stderr even when it is not a terminal",
                                    [&o](std::string_view) { o.verbose = true; });
    cli.footer("algbw = S / time, busbw = algbw x (allreduce 2(n-1)/n; reducescatter, allgather (n-1)/n; broadcast,\n"
               "reduce 1); GB/s = 1e9 bytes/s.  NCCL_NVLS_ENABLE is set to 0 unless already set.  Use --json\n"
               "when NCCL_DEBUG is set (NCCL logs to stdout).\n");
    cli.parse(argc, argv);
    if (o.ops.empty()) o.ops.assign(std::begin(roofplan::all_collectives), std::end(roofplan::all_collectives));
    if (o.sizes.empty()) add_sweep(o, "1MB:1GB");
    std::sort(o.sizes.begin(), o.sizes.end());
    o.sizes.erase(std::unique(o.sizes.begin(), o.sizes.end()), o.sizes.end());
    return o;
}

// ---- Provenance --------------------------------------------------------------------------------------

// Which devices can access which (null on the diagonal) and cudaDevP2PAttrPerformanceRank, for the report.
struct Topology {
    std::vector<std::vector<std::optional<bool>>> can_access_peer;
    std::vector<std::vector<std::optional<int>>> p2p_perf_rank;
};

[[maybe_unused]] Topology query_topology(int n) {
    Topology t;
    t.can_access_peer.assign(std::size_t(n), std::vector<std::optional<bool>>(std::size_t(n)));
    t.p2p_perf_rank.assign(std::size_t(n), std::vector<std::optional<int>>(std::size_t(n)));
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            int can = 0, rank = 0;
            if (i == j) continue;
            CHECK(cudaDeviceCanAccessPeer(&can, i, j));
            CHECK(cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, i, j));
            t.can_access_peer[std::size_t(i)][std::size_t(j)] = can != 0;
            t.p2p_perf_rank[std::size_t(i)][std::size_t(j)] = rank;
        }
    return t;
}

// The file the dynamic linker loaded NCCL from (the toolkit's copy, a Python wheel's, ...), if it says.
std::string nccl_library_path() {
    Dl_info info{};
    const bool found = dladdr(reinterpret_cast<void*>(&ncclGetVersion), &info) != 0 && info.dli_fname != nullptr;
    return found ? info.dli_fname : "";
}

// One rank's device: its report record (device_json with rank and host) and its line in the table.
struct RankDevice {
    std::string json, line;
};

RankDevice describe_rank(int rank, int device) {
    const DeviceInfo d = query_device(device);
    char line[512];
    std::snprintf(line, sizeof line, "  rank %d: device %d, %s [%s], sm_%d%d, %d SMs, %.1f GiB\n", rank, d.index,
                  d.name.c_str(), d.pci_bus_id.c_str(), d.cc_major, d.cc_minor, d.sm_count,
                  double(d.global_memory_bytes) / double(kGiB));
    return {Json().set(field::rank, rank).set(field::host, host_name()).merge(device_json(d)).text(), line};
}

// ---- Cases -------------------------------------------------------------------------------------------

struct NcclTiming {
    Summary s;                          // of the measurements
    std::vector<double> repeat_s;       // each measurement: max over ranks of elapsed / iters
    double rank_spread_s = 0;           // largest (max - min over ranks) / iters of the measurements
    double lead_s = 0;                  // how long each lead kernel spun
    double host_enqueue_s_max = 0;      // longest host time to queue one measurement
    bool host_kept_ahead = true;        // host_enqueue_s_max < lead_s
};

struct Case {
    std::size_t index = 0;
    Collective op = Collective::allreduce;
    std::uint64_t requested_bytes = 0, bytes = 0;  // bytes: S, after rounding to whole elements per rank
    std::size_t count = 0;              // NCCL's count argument (recvcount, sendcount for RS, AG)
    std::size_t send_elems = 0, recv_elems = 0;  // per rank
    std::uint64_t checked = 0;          // output elements compared, over all checked ranks
    bool full_check = false;
    NcclTiming t;
    double algbw = 0, busbw = 0, factor = 0;
};

std::string size_text(std::uint64_t bytes) {
    for (const auto& [unit, name] :
         {std::pair{kGiB, "GiB"}, std::pair{kMiB, "MiB"}, std::pair{std::uint64_t{1024}, "KiB"}})
        if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + name;
    return std::to_string(bytes) + "B";
}

// The generator seed of each rank's send buffer in case `c`.
std::vector<std::uint64_t> rank_seeds(const Case& c, std::uint64_t seed, int n) {
    std::vector<std::uint64_t> s;
    for (std::uint64_t r = 0; r < std::uint64_t(n); ++r)
        s.push_back(SplitMix64{case_seed(seed, c.index) ^ (0xA24BAED4963EE407ull * (r + 1))}.next());
    return s;
}

// ---- The communicator and its buffers ----------------------------------------------------------------

struct Rank {
    int global = 0, device = 0;  // global: the rank in the communicator
    ncclComm_t comm = nullptr;
    cudaStream_t stream = nullptr;
    float *send = nullptr, *recv = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
};

// Calls f(rank) for every rank, with the rank's device current.
template <class F>
void on_each(std::vector<Rank>& ranks, F&& f) {
    for (Rank& r : ranks) {
        CHECK(cudaSetDevice(r.device));
        f(r);
    }
}

// Queues one collective of case `c` on every rank, as one NCCL group.
void enqueue_collective(const Case& c, std::vector<Rank>& ranks) {
    CHECK(ncclGroupStart());
    for (Rank& r : ranks) {
        const auto [send, recv, n] = std::tuple{r.send, r.recv, c.count};
        if (c.op == Collective::allreduce) CHECK(ncclAllReduce(send, recv, n, ncclFloat32, ncclSum, r.comm, r.stream));
        if (c.op == Collective::broadcast) CHECK(ncclBroadcast(send, recv, n, ncclFloat32, kRoot, r.comm, r.stream));
        if (c.op == Collective::reduce) CHECK(ncclReduce(send, recv, n, ncclFloat32, ncclSum, kRoot, r.comm, r.stream));
        if (c.op == Collective::reducescatter)
            CHECK(ncclReduceScatter(send, recv, n, ncclFloat32, ncclSum, r.comm, r.stream));
        if (c.op == Collective::allgather) CHECK(ncclAllGather(send, recv, n, ncclFloat32, r.comm, r.stream));
    }
    CHECK(ncclGroupEnd());
}

// Waits for every rank's stream, then asks each communicator whether it failed asynchronously.
void synchronize_all(std::vector<Rank>& ranks) {
    on_each(ranks, [](Rank& r) { CHECK(cudaStreamSynchronize(r.stream)); });
    CHECK(cudaGetLastError());
    for (Rank& r : ranks) {
        ncclResult_t async = ncclSuccess;
        CHECK(ncclCommGetAsyncError(r.comm, &async));
        check(async, "ncclCommGetAsyncError (a collective failed)", __FILE__, __LINE__);
    }
}

// Fills every rank's send buffer with the case's data (on the rank's stream; not waited for).
void fill_send_buffers(const Case& c, std::vector<Rank>& ranks, const std::vector<std::uint64_t>& seeds) {
    on_each(ranks, [&](Rank& r) {
        const std::uint64_t seed = seeds[std::size_t(r.global)];
        fill_kernel<<<grid_for(c.send_elems, 8192), 256, 0, r.stream>>>(r.send, c.send_elems, seed);
        CHECK_LAUNCH("fill_kernel");
    });
}

// ---- Verification ------------------------------------------------------------------------------------

// The expected value of element j of rank `rank`'s receive buffer.
float expected_value(const Case& c, const std::vector<std::uint64_t>& seeds, int rank, std::uint64_t j) {
    float sum = 0.0f;  // exact in any order (the top of the file)
    switch (c.op) {
        case Collective::allreduce:
        case Collective::reduce:
            for (const std::uint64_t s : seeds) sum += element_value(s, j);
            return sum;
        case Collective::broadcast: return element_value(seeds[std::size_t(kRoot)], j);
        case Collective::reducescatter:
            for (const std::uint64_t s : seeds) sum += element_value(s, std::uint64_t(rank) * c.count + j);
            return sum;
        case Collective::allgather: return element_value(seeds[std::size_t(j / c.count)], j % c.count);
    }
    return std::numeric_limits<float>::quiet_NaN();
}

// The checked positions of a receive buffer, sorted: none (every element is checked) when S <= kFullCheckBytes or
// there are few; else the first and last kEdge and random ones, kSamples + 2 kEdge distinct positions in all.
std::vector<std::uint64_t> check_positions(const Case& c, std::uint64_t seed) {
    if (c.bytes <= kFullCheckBytes || checks_all(c.recv_elems, kSamples + 2 * kEdge)) return {};
    std::vector<std::uint64_t> edges;
    for (std::uint64_t i = 0; i < kEdge; ++i) edges.insert(edges.end(), {i, c.recv_elems - 1 - i});
    return sample_positions(c.recv_elems, edges, kSamples + 2 * kEdge,
                            SplitMix64{case_seed(seed, c.index) ^ 0x5DEECE66Dull});
}

// Compares the checked outputs `got[rank]` (element k is receive-buffer element k when `pos` is empty, else
// pos[k]) with the host reference, in chunks on several host threads (the reference is computed from the
// generator, element by element).  On a mismatch prints it and exits with kExitVerifyFailed.
void check_outputs(const Case& c, const std::vector<std::uint64_t>& seeds, const std::vector<int>& checked_ranks,
                   const std::vector<std::vector<float>>& got, const std::vector<std::uint64_t>& pos) {
    const std::size_t m = pos.empty() ? c.recv_elems : pos.size();
    auto position = [&](std::size_t k) { return pos.empty() ? std::uint64_t(k) : pos[k]; };
    auto wrong = [&](std::size_t k, int ri) {  // exact; NaN never passes
        return !(got[std::size_t(ri)][k] == expected_value(c, seeds, ri, position(k)));
    };
    // For allreduce, broadcast and reduce the expected value does not depend on the rank.
    const bool same_for_all = c.op != Collective::reducescatter && c.op != Collective::allgather;
    // The first mismatch in [begin, end) as (k, rank), or (end, -1).
    auto scan = [&](std::size_t begin, std::size_t end) -> std::pair<std::size_t, int> {
        for (std::size_t k = begin; k < end; ++k) {
            const float want = same_for_all ? expected_value(c, seeds, checked_ranks.front(), position(k)) : 0.0f;
            for (const int ri : checked_ranks)
                if (same_for_all ? !(got[std::size_t(ri)][k] == want) : wrong(k, ri)) return {k, ri};
        }
        return {end, -1};
    };
    const std::size_t chunks = std::max<std::size_t>(1, std::min<std::size_t>(32, m >> 16)),
                      chunk = (m + chunks - 1) / chunks;
    std::vector<std::pair<std::size_t, int>> first(chunks, {m, -1});
    parallel_for(chunks, [&](std::size_t t) { first[t] = scan(std::min(m, t * chunk), std::min(m, (t + 1) * chunk)); });
    for (const auto& [k, ri] : first) {
        if (ri < 0) continue;
        std::size_t bad = 0;
        for (std::size_t kk = 0; kk < m; ++kk) bad += wrong(kk, ri);
        const float want = expected_value(c, seeds, ri, position(k)), g = got[std::size_t(ri)][k];
        std::fprintf(stderr, "%s: verification FAILED for %s %s (%llu bytes, %d ranks): rank %d, element %llu: "
                     "expected %.9g (bits 0x%08x), got %.9g (bits 0x%08x)%s; %zu of the %zu checked elements of that "
                     "rank are wrong [exact match required]. Nothing was timed.\n", g_program, op_name(c.op),
                     size_text(c.bytes).c_str(), (unsigned long long)c.bytes, int(seeds.size()), ri,
                     (unsigned long long)position(k), double(want), std::bit_cast<std::uint32_t>(want), double(g),
                     std::bit_cast<std::uint32_t>(g), std::isnan(g) ? " (NaN: the poison, not written?)" : "", bad, m);
        std::exit(kExitVerifyFailed);
    }
}

// Brings rank r's checked elements (all of them, or those at `pos`) to the host.
std::vector<float> checked_output(const Case& c, Rank& r, const std::vector<std::uint64_t>& pos) {
    CHECK(cudaSetDevice(r.device));
    if (!pos.empty()) return gather_to_host(r.recv, pos, r.stream);
    std::vector<float> g(c.recv_elems);
    CHECK(cudaMemcpy(g.data(), r.recv, g.size() * sizeof(float), cudaMemcpyDeviceToHost));
    return g;
}

// Runs the case once with poisoned receive buffers and compares the outputs with the host reference.
void verify_case(Case& c, std::vector<Rank>& ranks, std::uint64_t seed) {
    const std::vector<std::uint64_t> seeds = rank_seeds(c, seed, g_world_size);
    fill_send_buffers(c, ranks, seeds);
    on_each(ranks, [&](Rank& r) {
        CHECK(cudaMemsetAsync(r.recv, 0xFF, std::size_t(c.recv_elems) * sizeof(float), r.stream));  // NaN
    });
    enqueue_collective(c, ranks);
    synchronize_all(ranks);
    const std::vector<std::uint64_t> pos = check_positions(c, seed);
    c.full_check = pos.empty();
    // The ranks (of this process) whose output is defined: reduce's root only; every rank for the others.
    std::vector<int> checked_ranks;
    std::vector<std::vector<float>> got(static_cast<std::size_t>(g_world_size));
    for (Rank& r : ranks)
        if (c.op != Collective::reduce || r.global == kRoot) {
            checked_ranks.push_back(r.global);
            got[std::size_t(r.global)] = checked_output(c, r, pos);
        }
    if (!checked_ranks.empty()) check_outputs(c, seeds, checked_ranks, got, pos);
    unsigned long long checked = (pos.empty() ? c.recv_elems : pos.size()) * checked_ranks.size();
#ifdef ROOFPLAN_NCCL_MPI
    // A failed check exits that process, and mpirun ends the job; the counts add up over the processes.
    MPI_Allreduce(MPI_IN_PLACE, &checked, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
#endif
    c.checked = checked;
}

// ---- Timing ------------------------------------------------------------------------------------------

void time_case(Case& c, std::vector<Rank>& ranks, std::uint64_t seed, const Options& o) {
    const int n = g_world_size;
    fill_send_buffers(c, ranks, rank_seeds(c, seed, n));
    for (int w = 0; w < o.run.timing.warmup; ++w) enqueue_collective(c, ranks);
    synchronize_all(ranks);
    NcclTiming& t = c.t;
    t.lead_s = lead_seconds(double(o.iters) * double(n));  // the host queues iters collectives on each of n ranks
    // A measurement: a lead kernel and a start event on every stream, `iters` collectives, a stop event on every
    // stream; then the longest and shortest elapsed time over the ranks (over every process under MPI).
    for (int rep = 0; rep < o.run.timing.repeats; ++rep) {
#ifdef ROOFPLAN_NCCL_MPI
        MPI_Barrier(MPI_COMM_WORLD);  // the processes' lead kernels start together (within the barrier's skew)
#endif
        on_each(ranks, [&](Rank& r) {
            launch_lead(r.stream, t.lead_s);
            CHECK(cudaEventRecord(r.start, r.stream));
        });
        const auto queue_start = std::chrono::steady_clock::now();
        for (int it = 0; it < o.iters; ++it) enqueue_collective(c, ranks);
        on_each(ranks, [](Rank& r) { CHECK(cudaEventRecord(r.stop, r.stream)); });
        t.host_enqueue_s_max = std::max(t.host_enqueue_s_max, seconds_since(queue_start));
        synchronize_all(ranks);
        double longest = 0, shortest = std::numeric_limits<double>::infinity();
        for (Rank& r : ranks) {
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, r.start, r.stop));
            longest = std::max(longest, double(ms) * 1e-3);
            shortest = std::min(shortest, double(ms) * 1e-3);
        }
#ifdef ROOFPLAN_NCCL_MPI
        MPI_Allreduce(MPI_IN_PLACE, &longest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &shortest, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
#endif
        t.repeat_s.push_back(longest / o.iters);
        t.rank_spread_s = std::max(t.rank_spread_s, (longest - shortest) / o.iters);
    }
#ifdef ROOFPLAN_NCCL_MPI
    MPI_Allreduce(MPI_IN_PLACE, &t.host_enqueue_s_max, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
#endif
    t.host_kept_ahead = t.host_enqueue_s_max < t.lead_s;
    t.s = summarize(t.repeat_s);
    c.factor = roofplan::busbw_factor(c.op, n);
    c.algbw = double(c.bytes) / t.s.median_s / 1e9;
    c.busbw = c.algbw * c.factor;
}

// ---- Report ------------------------------------------------------------------------------------------

struct RunInfo {
    std::vector<RankDevice> devices;  // by rank
    Topology topo;                    // single process only: the processes of an MPI run may be on other nodes
    int visible_devices = 0, nccl_version = 0;
    bool nvls_set_by_program = false;
    std::uint64_t seed = 0, send_buffer_bytes = 0, recv_buffer_bytes = 0;
    int local_device = 0;  // MPI: this process's GPU
};

Json record(const Case& c, int ranks) {
    Json j;
    j.set(field::op, op_name(c.op)).set(field::bytes, c.bytes).set(field::bytes_requested, c.requested_bytes);
    j.set(field::count, c.count).set(field::ranks, ranks).set(field::time_s_median, c.t.s.median_s);
    j.set(field::time_s_min, c.t.s.min_s).set(field::time_s_max, c.t.s.max_s).set(field::algbw_gbps, c.algbw);
    j.set(field::busbw_gbps, c.busbw).set(field::busbw_factor, c.factor);
    j.set(field::busbw_factor_formula, roofplan::busbw_factor_formula(c.op)).set(field::verified, true);
    j.set(field::checked_elements, c.checked).set(field::check, c.full_check ? "all elements" : "sampled");
    j.set(field::repeat_times_s, c.t.repeat_s).set(field::rank_spread_s, c.t.rank_spread_s);
    j.set(field::lead_s, c.t.lead_s).set(field::host_enqueue_s_max, c.t.host_enqueue_s_max);
    return j.set(field::host_kept_ahead, c.t.host_kept_ahead);
}

// The table on stderr and the JSON report: the same rows.
int report(const Options& o, const RunInfo& info, const std::vector<Case>& cases) {
    const auto [driver, runtime] = driver_and_runtime();
    const int n = int(info.devices.size());
    const char* nvls = std::getenv("NCCL_NVLS_ENABLE");
    std::fprintf(stderr, "\n%s: %d rank%s, NCCL %s (%s), driver %s, runtime %s\n", g_program, n, n == 1 ? "" : "s",
                 library_version_string(info.nccl_version).c_str(), nccl_library_path().c_str(),
                 version_string(driver).c_str(), version_string(runtime).c_str());
    for (const RankDevice& d : info.devices) std::fputs(d.line.c_str(), stderr);
    std::fprintf(stderr, "  peer access (row i: can device i access device j): %s\n",
                 to_json(info.topo.can_access_peer).c_str());
    std::fprintf(stderr, "  NCCL_NVLS_ENABLE=%s%s; float32 sum, root %d, out-of-place; %d warm-up, %d x %d timed "
                 "collectives per case; seed %llu\n  every case verified exactly before timing; GB/s = 1e9 B/s\n\n",
                 nvls != nullptr ? nvls : "(unset)", info.nvls_set_by_program ? " (set by this program)" : "", kRoot,
                 o.run.timing.warmup, o.run.timing.repeats, o.iters, static_cast<unsigned long long>(info.seed));
    std::vector<Json> results;
    for (const Case& c : cases) results.push_back(record(c, n));
    print_rows(results, {{field::op, "op", -13}, {field::bytes, "bytes", 12, "%.0f"},
                         {field::count, "count", 11, "%.0f"}, {field::time_s_median, "median us", 11, "%.2f", 1e6},
                         {field::time_s_min, "min us", 11, "%.2f", 1e6}, {field::time_s_max, "max us", 11, "%.2f", 1e6},
                         {field::algbw_gbps, "algbw GB/s", 10}, {field::busbw_gbps, "busbw GB/s", 10},
                         {field::busbw_factor, "factor", 7, "%.3f"}, {field::checked_elements, "checked", 10, "%.0f"},
                         {field::host_kept_ahead, "ahead", 6}});
    Json prov = provenance(o.run, environment({"CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER",
                                               "CUDA_DEVICE_MAX_CONNECTIONS", "CUDA_MODULE_LOADING",
                                               "CUDA_LAUNCH_BLOCKING"}, "NCCL_"));
    prov.set(field::hostname, host_name()).set(field::nccl_version, library_version_string(info.nccl_version));
    prov.set(field::nccl_version_code, info.nccl_version).set(field::nccl_library, nccl_library_path());
    prov.set(field::nccl_header_version, library_version_string(NCCL_VERSION_CODE));
    prov.set(field::nccl_nvls_enable_set_by_program, info.nvls_set_by_program);
    std::string devices;
    for (const RankDevice& d : info.devices) devices += (devices.empty() ? "[" : ", ") + d.json;
    prov.set(field::visible_devices, info.visible_devices).raw(field::devices, devices.empty() ? "[]" : devices + "]");
    prov.set(field::peer_access, info.topo.can_access_peer).set(field::p2p_performance_rank, info.topo.p2p_perf_rank);
    std::string ops;
    for (const Collective op : o.ops) ops += std::string(ops.empty() ? "" : ",") + op_name(op);
    Json config;
    config.set(field::ops, ops).set(field::sizes_requested_bytes, o.sizes).set(field::ranks, info.devices.size());
    config.set(field::dtype, "float32").set(field::redop, "sum").set(field::root, kRoot).set(field::in_place, false);
    config.set(field::warmup, o.run.timing.warmup).set(field::iters, o.iters).set(field::repeats, o.run.timing.repeats);
    config.set(field::seed, info.seed).set(field::send_buffer_bytes_per_gpu, info.send_buffer_bytes);
    config.set(field::recv_buffer_bytes_per_gpu, info.recv_buffer_bytes);
#ifdef ROOFPLAN_NCCL_MPI
    config.set(field::launch, roofplan::io::schema::conventions::nccl_launch_mpi);
#else
    config.set(field::launch, roofplan::io::schema::conventions::nccl_launch_single);
#endif
    for (const auto& [k, text] : roofplan::io::schema::conventions::nccl) config.set(k, text);
    Json doc = report_head(tool::nccl, prov, config).records(key::results, results);
    return write_report(o.run.json_path, doc.text(0) + "\n");
}

// ---- The run -----------------------------------------------------------------------------------------

// The cases, operation by operation, sizes ascending; sets the buffer sizes in `info`.
std::vector<Case> make_cases(const Options& o, RunInfo& info) {
    const int n = g_world_size;
    const std::size_t nr = std::size_t(n);
    std::vector<Case> cases;
    for (const Collective op : o.ops)
        for (const std::uint64_t s : o.sizes) {
            Case c;
            c.index = cases.size();
            c.op = op;
            c.requested_bytes = s;
            // Element counts for n ranks (docs/kernels.md).
            c.count = op == Collective::reducescatter || op == Collective::allgather ? s / 4 / nr : s / 4;
            c.send_elems = op == Collective::reducescatter ? c.count * nr : c.count;
            c.recv_elems = op == Collective::allgather ? c.count * nr : c.count;
            c.bytes = std::uint64_t(std::max(c.send_elems, c.recv_elems)) * 4;
            if (c.count == 0)
                usage_error(std::string(op_name(op)) + " of " + std::to_string(s) + " bytes over " + std::to_string(n) +
                            " ranks leaves no element per rank; sizes must be at least " + std::to_string(4 * n) +
                            " bytes");
            info.send_buffer_bytes = std::max<std::uint64_t>(info.send_buffer_bytes, c.send_elems * sizeof(float));
            info.recv_buffer_bytes = std::max<std::uint64_t>(info.recv_buffer_bytes, c.recv_elems * sizeof(float));
            cases.push_back(c);
        }
    return cases;
}

// The communicators (NCCL reads its environment here), with a stream and two events each, and buffers for the
// largest case on every GPU, if they fit with room left for NCCL (and the sampled checks); exits when they do not.
std::vector<Rank> open_ranks(const RunInfo& info) {
    std::vector<Rank> ranks;
#ifdef ROOFPLAN_NCCL_MPI
    Rank rk;
    rk.global = g_world_rank;
    rk.device = info.local_device;
    ncclUniqueId id{};
    if (g_world_rank == 0) CHECK(ncclGetUniqueId(&id));
    MPI_Bcast(&id, int(sizeof id), MPI_BYTE, 0, MPI_COMM_WORLD);
    CHECK(cudaSetDevice(rk.device));
    CHECK(ncclCommInitRank(&rk.comm, g_world_size, id, g_world_rank));
    ranks.push_back(rk);
#else
    std::vector<ncclComm_t> comms(static_cast<std::size_t>(g_world_size));
    std::vector<int> devices(static_cast<std::size_t>(g_world_size));
    for (int r = 0; r < g_world_size; ++r) devices[std::size_t(r)] = r;  // rank r is CUDA device r
    CHECK(ncclCommInitAll(comms.data(), g_world_size, devices.data()));
    for (int r = 0; r < g_world_size; ++r) ranks.push_back({r, r, comms[std::size_t(r)]});
#endif
    const std::uint64_t need = info.send_buffer_bytes + info.recv_buffer_bytes;
    on_each(ranks, [&](Rank& rk) {
        CHECK(cudaStreamCreateWithFlags(&rk.stream, cudaStreamNonBlocking));
        CHECK(cudaEventCreate(&rk.start));
        CHECK(cudaEventCreate(&rk.stop));
        std::size_t free_bytes = 0, total_bytes = 0;
        CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
        if (need + kHeadroomBytes > free_bytes)
            usage_error("the largest size needs " + std::to_string(need / kMiB) +
                        " MiB of buffers on every GPU (send " + std::to_string(info.send_buffer_bytes / kMiB) +
                        " MiB, receive " + std::to_string(info.recv_buffer_bytes / kMiB) + " MiB) plus " +
                        std::to_string(kHeadroomBytes / kMiB) + " MiB for NCCL, but device " +
                        std::to_string(rk.device) + " has " + std::to_string(free_bytes / kMiB) +
                        " MiB free; choose smaller sizes (nothing was run)");
        CHECK(cudaMalloc(&rk.send, std::size_t(info.send_buffer_bytes)));
        CHECK(cudaMalloc(&rk.recv, std::size_t(info.recv_buffer_bytes)));
    });
    return ranks;
}

int run(const Options& o, RunInfo& info) {
    std::vector<Case> cases = make_cases(o, info);
    const bool progress = g_world_rank == 0 && (o.verbose || isatty(fileno(stderr)) != 0);
    if (progress) std::fprintf(stderr, "%s: making the NCCL communicators of %d rank(s)\n", g_program, g_world_size);
    std::vector<Rank> ranks = open_ranks(info);
    for (Case& c : cases) {  // pass 1: verify every case
        verify_case(c, ranks, info.seed);
        if (progress)
            std::fprintf(stderr, "%s: %s %s: verified (%llu elements checked, %s)\n", g_program, op_name(c.op),
                         size_text(c.bytes).c_str(), (unsigned long long)c.checked, c.full_check ? "all" : "sampled");
    }
    for (Case& c : cases) {  // pass 2: time every case
        time_case(c, ranks, info.seed, o);
        if (progress)
            std::fprintf(stderr, "%s: %s %s: median %.2f us, algbw %.2f GB/s, busbw %.2f GB/s%s\n", g_program,
                         op_name(c.op), size_text(c.bytes).c_str(), c.t.s.median_s * 1e6, c.algbw, c.busbw,
                         fell_behind(c.t.host_kept_ahead));
    }
    on_each(ranks, [](Rank& rk) {
        CHECK(cudaStreamSynchronize(rk.stream));
        CHECK(ncclCommDestroy(rk.comm));
        CHECK(cudaEventDestroy(rk.start));
        CHECK(cudaEventDestroy(rk.stop));
        CHECK(cudaStreamDestroy(rk.stream));
        CHECK(cudaFree(rk.send));
        CHECK(cudaFree(rk.recv));
    });
    return g_world_rank == 0 ? report(o, info, cases) : 0;  // rank 0 reports for the world
}

// Before NCCL reads its environment: NVLink multicast off unless the caller chose.
bool keep_nvls_off() {
    const char* set = std::getenv("NCCL_NVLS_ENABLE");
    if (set == nullptr) {
        if (setenv("NCCL_NVLS_ENABLE", "0", 0) == 0) return true;
        std::perror("roofplan-nccl: error: setenv(NCCL_NVLS_ENABLE)");
        std::exit(kExitCudaError);
    }
    if (std::string_view(set) != "0")
        std::fprintf(stderr, "%s: warning: NCCL_NVLS_ENABLE=%s is set: NVLink multicast may be used (this workplace's "
                     "machines need it off)\n", g_program, set);
    return false;
}

#ifdef ROOFPLAN_NCCL_MPI
// Every process's device, gathered on rank 0 (fixed-size text records: the JSON record, a tab, the table line);
// and the GPU of this process: its node-local rank modulo the visible devices.
void describe_world(RunInfo& info) {
    MPI_Comm node;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, g_world_rank, MPI_INFO_NULL, &node);
    int local_rank = 0, local_size = 1;
    MPI_Comm_rank(node, &local_rank);
    MPI_Comm_size(node, &local_size);
    MPI_Comm_free(&node);
    if (local_size > info.visible_devices && g_world_rank == 0)
        std::fprintf(stderr, "%s: warning: %d processes on a node with %d GPU(s): GPUs are shared\n", g_program,
                     local_size, info.visible_devices);
    info.local_device = local_rank % info.visible_devices;
    constexpr int kRecord = 2048;
    const RankDevice mine = describe_rank(g_world_rank, info.local_device);
    char record[kRecord] = {};
    std::snprintf(record, sizeof record, "%s\t%s", mine.json.c_str(), mine.line.c_str());
    std::vector<char> all(g_world_rank == 0 ? std::size_t(kRecord) * std::size_t(g_world_size) : 1);
    MPI_Gather(record, kRecord, MPI_CHAR, all.data(), kRecord, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int r = 0; g_world_rank == 0 && r < g_world_size; ++r) {
        const std::string text(all.data() + std::size_t(r) * kRecord);
        const std::size_t tab = text.find('\t');
        info.devices.push_back({text.substr(0, tab), tab == std::string::npos ? "" : text.substr(tab + 1)});
    }
    MPI_Bcast(&info.seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);  // the seed must be the same in every process: rank 0's
}
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef ROOFPLAN_NCCL_MPI
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &g_world_size);
    MPI_Comm_rank(MPI_COMM_WORLD, &g_world_rank);
    struct Finalize {
        ~Finalize() { MPI_Finalize(); }
    } finalize;
#endif
    const Options o = parse_args(argc, argv);
    RunInfo info;
    info.nvls_set_by_program = keep_nvls_off();
    info.visible_devices = visible_devices();
    const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
    if (o.gpus && *o.gpus > std::uint64_t(info.visible_devices))
        usage_error("--gpus " + std::to_string(*o.gpus) + " asks for more GPUs than are visible: this machine shows " +
                    std::to_string(info.visible_devices) + " CUDA device(s)" +
                    (visible != nullptr ? std::string(" (CUDA_VISIBLE_DEVICES=") + visible + ")" : std::string()));
    CHECK(ncclGetVersion(&info.nccl_version));
    info.seed = seed_or_clock(o.run.seed);
#ifdef ROOFPLAN_NCCL_MPI
    if (o.gpus) usage_error("--gpus does not apply under MPI: the ranks are mpirun's processes (-np N)");
    describe_world(info);
#else
    g_world_size = o.gpus ? int(*o.gpus) : info.visible_devices;
    for (int d = 0; d < g_world_size; ++d) info.devices.push_back(describe_rank(d, d));
    info.topo = query_topology(g_world_size);
#endif
    return run_guarded("the check keeps each rank's checked output", [&] { return run(o, info); });
}
