// kernels/memory/bandwidth.cu — roofplan-bandwidth: STREAM-style device-memory bandwidth benchmark.
//
// copy (c = a), scale (b = s c), triad (a = b + s c) on 16-byte vectors, and cudaMemcpy device-to-device, over three
// arrays of max(256 MiB, 4 x L2) each; bytes per iteration as STREAM counts them (2 arrays, triad 3), GB/s = 1e9
// bytes/s.  Every element of each kernel's poisoned output is checked against the host (bit-exact for the copies,
// 4 epsilons for scale and triad) before anything is timed.  The method in detail: docs/kernels.md.

#include <cuda_runtime.h>

#include <bit>
#include <cstddef>
#include <initializer_list>
#include <type_traits>

#include "../common/harness.hpp"

namespace {

using namespace roofplan::bench;
namespace tool = roofplan::io::schema::tool;

// ---- Device kernels ----------------------------------------------------------------------------------

// The 16-byte vector type of each element type, and its width in elements.
template <class T>
using Vec = std::conditional_t<sizeof(T) == 4, float4, double2>;
template <class T>
constexpr std::size_t kWidth = 16 / sizeof(T);

enum class Op { copy, scale, triad, memcpy_d2d };
constexpr Op kOps[] = {Op::copy, Op::scale, Op::triad, Op::memcpy_d2d};
constexpr const char* kOpNames[] = {"copy", "scale", "triad", "memcpy_d2d"};  // by Op
const char* op_name(Op op) { return kOpNames[int(op)]; }

// A STREAM kernel's output from x and y, for one element and for each component of a 16-byte vector: copy x,
// scale s y, triad x + s y.
template <Op kOp, class T>
struct Stream {
    T s;
    __device__ __forceinline__ T operator()(T x, T y) const {
        return kOp == Op::copy ? x : kOp == Op::scale ? s * y : x + s * y;
    }
    __device__ __forceinline__ float4 operator()(float4 x, float4 y) const {
        return make_float4((*this)(x.x, y.x), (*this)(x.y, y.y), (*this)(x.z, y.z), (*this)(x.w, y.w));
    }
    __device__ __forceinline__ double2 operator()(double2 x, double2 y) const {
        return make_double2((*this)(x.x, y.x), (*this)(x.y, y.y));
    }
};

// out = f(x, y) element by element: copy (c = a: out c, x a), scale (b = s c: out b, y c) and triad (a = b + s c:
// out a, x b, y c); an operand that f does not read is never loaded.  The kernel walks the arrays as 16-byte
// vectors (grid-stride, though the grid normally covers them all), then handles the (at most width - 1) trailing
// elements one by one.  cudaMalloc's 256-byte alignment makes the vector casts valid.
template <class T, class F>
__global__ void stream_kernel(T* __restrict__ out, const T* __restrict__ x, const T* __restrict__ y, std::size_t n,
                              F f) {
    using V = Vec<T>;
    const std::size_t nv = n / kWidth<T>;
    const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    const V* xv = reinterpret_cast<const V*>(x);
    const V* yv = reinterpret_cast<const V*>(y);
    V* ov = reinterpret_cast<V*>(out);
    for (std::size_t i = first; i < nv; i += stride) ov[i] = f(xv[i], yv[i]);
    for (std::size_t i = nv * kWidth<T> + first; i < n; i += stride) out[i] = f(x[i], y[i]);
}

// ---- Benchmark description ---------------------------------------------------------------------------

constexpr unsigned kBlockSize = 256;

template <class T>
struct DeviceArrays {
    T *a = nullptr, *b = nullptr, *c = nullptr;
    std::size_t n = 0;  // elements per array
    std::size_t bytes() const { return n * sizeof(T); }
};

// Enqueues one iteration of `op` on `stream`.
template <class T>
void enqueue(Op op, const DeviceArrays<T>& d, T s, unsigned grid, cudaStream_t stream) {
    auto launch = [&](auto f, T* out, const T* x, const T* y) {
        stream_kernel<<<grid, kBlockSize, 0, stream>>>(out, x, y, d.n, f);
        CHECK_LAUNCH("stream_kernel");
    };
    if (op == Op::copy) launch(Stream<Op::copy, T>{s}, d.c, d.a, d.a);
    if (op == Op::scale) launch(Stream<Op::scale, T>{s}, d.b, d.c, d.c);
    if (op == Op::triad) launch(Stream<Op::triad, T>{s}, d.a, d.b, d.c);
    if (op == Op::memcpy_d2d) CHECK(cudaMemcpyAsync(d.c, d.a, d.bytes(), cudaMemcpyDeviceToDevice, stream));
}

// ---- Host data and verification ---------------------------------------------------------------------

// Uniform in [1, 2): random mantissa bits under the exponent of 1.0.  Never zero, never subnormal.
float uniform_1_2(std::uint64_t r, float) { return std::bit_cast<float>(0x3F800000u | std::uint32_t(r >> 41)); }
double uniform_1_2(std::uint64_t r, double) { return std::bit_cast<double>(0x3FF0000000000000ull | (r >> 12)); }

template <class T>
auto bits_of(T x) {
    if constexpr (sizeof(T) == 4) return std::bit_cast<std::uint32_t>(x);
    else return std::bit_cast<std::uint64_t>(x);
}

// Compares every element of `got` with expected(i): bit-exact when rtol == 0, else |got - want| <= rtol
// |want| (which also rejects NaN).  On failure prints the first bad element and the count, exits 1.
template <class T, class Expected>
void verify(Op op, const std::vector<T>& got, Expected expected, double rtol) {
    std::size_t bad = 0, first_bad = 0;
    for (std::size_t i = 0; i < got.size(); ++i) {
        const T want = expected(i);
        const bool ok = rtol == 0.0 ? bits_of(got[i]) == bits_of(want)
                                    : std::fabs(double(got[i]) - double(want)) <= rtol * std::fabs(double(want));
        if (!ok && bad++ == 0) first_bad = i;
    }
    if (bad == 0) return;
    const T g = got[first_bad], w = expected(first_bad);
    std::fprintf(stderr, "%s: verification FAILED for %s: element %zu is %.17g (bits 0x%llx), expected %.17g "
                 "(bits 0x%llx)%s; %zu of %zu elements wrong. Nothing was timed.\n", g_program, op_name(op), first_bad,
                 double(g), static_cast<unsigned long long>(bits_of(g)), double(w),
                 static_cast<unsigned long long>(bits_of(w)),
                 rtol == 0.0 ? " [exact match required]" : " [relative tolerance exceeded]", bad, got.size());
    std::exit(kExitVerifyFailed);
}

// Runs each operation once on fresh random inputs with a poisoned output and checks every element.
template <class T>
void verify_all(const DeviceArrays<T>& d, T s, unsigned grid, std::uint64_t seed) {
    SplitMix64 rng{seed};
    std::vector<T> ha(d.n), hb(d.n), hc(d.n), out(d.n);
    for (std::vector<T>* v : {&ha, &hb, &hc})
        for (T& x : *v) x = uniform_1_2(rng.next(), T{});
    const double rtol = 4.0 * std::numeric_limits<T>::epsilon();

    auto run_and_check = [&](Op op, T* output, auto expected, double tol) {
        CHECK(cudaMemset(output, 0xFF, d.bytes()));  // poison: all ones, a quiet NaN in f32 and f64
        enqueue(op, d, s, grid, nullptr);
        CHECK(cudaDeviceSynchronize());  // surfaces faults raised while the kernel ran
        CHECK(cudaMemcpy(out.data(), output, d.bytes(), cudaMemcpyDeviceToHost));
        verify(op, out, expected, tol);
    };
    // Each operation's inputs are uploaded again just before it: an earlier operation may have written over them.
    CHECK(cudaMemcpy(d.a, ha.data(), d.bytes(), cudaMemcpyHostToDevice));
    run_and_check(Op::copy, d.c, [&](std::size_t i) { return ha[i]; }, 0.0);
    CHECK(cudaMemcpy(d.c, hc.data(), d.bytes(), cudaMemcpyHostToDevice));
    run_and_check(Op::scale, d.b, [&](std::size_t i) { return T(s * hc[i]); }, rtol);
    CHECK(cudaMemcpy(d.b, hb.data(), d.bytes(), cudaMemcpyHostToDevice));
    run_and_check(Op::triad, d.a, [&](std::size_t i) { return T(hb[i] + s * hc[i]); }, rtol);
    CHECK(cudaMemcpy(d.a, ha.data(), d.bytes(), cudaMemcpyHostToDevice));
    run_and_check(Op::memcpy_d2d, d.c, [&](std::size_t i) { return ha[i]; }, 0.0);
}

// ---- Command line ------------------------------------------------------------------------------------

struct Options {
    RunOptions run;
    std::optional<std::uint64_t> size_mib;  // per array; default max(256 MiB, 4 x L2)
    bool f64 = false;
};

Options parse_args(int argc, char** argv) {
    Options o;
    Cli cli(tool::bandwidth.data(), "STREAM-style device-memory bandwidth: copy, scale, triad and cudaMemcpy device-to-"
                                    "device.\nEvery kernel is verified element by element before it is timed.");
    cli.number("--size-mib", "MiB per array (3 arrays); default max(256, 4 x L2 size)", o.size_mib, 1, kMiB);
    cli.option("--dtype", "f32|f64", "element type (default f32)", [&o](std::string_view v) {
        if (v != "f32" && v != "f64") usage_error("--dtype must be f32 or f64, got '" + std::string(v) + "'");
        o.f64 = v == "f64";
    });
    cli.common(o.run);
    cli.parse(argc, argv);
    return o;
}

// ---- The run -----------------------------------------------------------------------------------------

// The array size: as asked, else at least 256 MiB and 4 x L2 so that L2 cannot hold the working set; exits when
// three arrays do not fit in the free memory.
std::uint64_t array_bytes_for(const Options& o, const DeviceInfo& dev) {
    const std::uint64_t l2 = std::uint64_t(dev.l2_bytes.value_or(0));
    const std::uint64_t size_mib = o.size_mib.value_or(std::max<std::uint64_t>(256, (4 * l2 + kMiB - 1) / kMiB));
    if (size_mib * kMiB < 4 * l2)
        std::fprintf(stderr, "%s: warning: %llu MiB per array is less than 4 x L2 (%.1f MiB); L2 hits may inflate the "
                     "results\n", g_program, static_cast<unsigned long long>(size_mib), 4.0 * double(l2) / kMiB);
    if (3 * size_mib * kMiB > dev.free_memory_bytes_at_start) {
        std::fprintf(stderr, "%s: error: 3 arrays of %llu MiB need %llu MiB of device memory, only %llu MiB free; "
                     "choose a smaller --size-mib\n", g_program, static_cast<unsigned long long>(size_mib),
                     static_cast<unsigned long long>(3 * size_mib),
                     static_cast<unsigned long long>(dev.free_memory_bytes_at_start / kMiB));
        std::exit(kExitCudaError);
    }
    return size_mib * kMiB;
}

template <class T>
int run(const Options& o, const DeviceInfo& dev) {
    const T scalar = T(3);  // STREAM's scalar
    const std::uint64_t array_bytes = array_bytes_for(o, dev);
    DeviceArrays<T> d;
    d.n = std::size_t(array_bytes / sizeof(T));
    for (T** p : {&d.a, &d.b, &d.c}) CHECK(cudaMalloc(p, d.bytes()));
    // One 16-byte vector per thread (kBlockSize = 256 threads a block), within the grid's x-dimension limit.
    const unsigned grid = grid_for(d.n / kWidth<T>, std::numeric_limits<int>::max());
    const std::uint64_t seed = seed_or_clock(o.run.seed);
    verify_all(d, scalar, grid, seed);

    cudaStream_t stream = nullptr;
    CHECK(cudaStreamCreate(&stream));
    std::vector<Timing> times;
    for (const Op op : kOps)
        times.push_back(time_runs(stream, [&](std::size_t) { enqueue(op, d, scalar, grid, stream); }, o.run.timing));
    CHECK(cudaStreamDestroy(stream));
    for (T** p : {&d.a, &d.b, &d.c}) CHECK(cudaFree(*p));
    std::vector<Json> rows;
    for (std::size_t i = 0; i < times.size(); ++i) {
        const Timing& t = times[i];
        // Arrays moved per iteration, STREAM's convention (docs/kernels.md).
        const std::uint64_t bytes = (kOps[i] == Op::triad ? 3 : 2) * array_bytes;
        const double gb_per_s = double(bytes) / t.median_s / 1e9;
        const double memcpy_gb_per_s = 2.0 * double(array_bytes) / times.back().median_s / 1e9;  // memcpy_d2d is last
        Json r;
        r.set(field::kernel, op_name(kOps[i])).set(field::bytes_per_iteration, bytes).set(field::median_s, t.median_s);
        r.set(field::min_s, t.min_s).set(field::max_s, t.max_s).set(field::gb_per_s, gb_per_s);
        r.set(field::fraction_of_memcpy, gb_per_s / memcpy_gb_per_s).set(field::warm_runs, t.warm_runs);
        r.set(field::lead_s, t.lead_s).set(field::host_enqueue_s, t.host_enqueue_s);
        rows.push_back(r.set(field::host_kept_ahead, t.host_kept_ahead));
    }

    print_device_line(dev);
    if (const auto peak = dev.peak_gb_per_s())
        std::fprintf(stderr, "\n  memory: %d-bit bus, %d MHz, estimated peak %.1f GB/s (2 x clock x width)",
                     *dev.memory_bus_width_bits, *dev.memory_clock_khz / 1000, *peak);
    std::fprintf(stderr, "\n  %s, %.0f MiB per array, %d ms + %d warm-up runs, %d timed runs per kernel, seed %llu\n",
                 sizeof(T) == 4 ? "f32" : "f64", double(array_bytes) / double(kMiB), o.run.timing.warmup_ms,
                 o.run.timing.warmup, o.run.timing.repeats, static_cast<unsigned long long>(seed));
    std::fprintf(stderr, "  verified before timing: copy, scale, triad, memcpy_d2d (every element)\n\n");
    print_rows(rows, {{field::kernel, "kernel", -11}, {field::bytes_per_iteration, "bytes/iter", 14, "%.0f"},
                  {field::median_s, "median us", 12, "%.2f", 1e6}, {field::min_s, "min us", 12, "%.2f", 1e6},
                  {field::max_s, "max us", 12, "%.2f", 1e6}, {field::gb_per_s, "GB/s", 10, "%.1f"},
                  {field::fraction_of_memcpy, "vs memcpy", 10, "%.3f"}, {field::host_kept_ahead, "host ahead", 11}});
    cudaFuncAttributes binary{};  // which machine code the driver loaded (native SASS or JIT from PTX)
    CHECK(cudaFuncGetAttributes(&binary, stream_kernel<T, Stream<Op::copy, T>>));
    Json config;
    config.set(field::dtype, sizeof(T) == 4 ? "f32" : "f64").set(field::element_bytes, sizeof(T));
    config.set(field::array_bytes, array_bytes).set(field::elements_per_array, array_bytes / sizeof(T));
    config.set(field::scalar, 3.0).set(field::warmup, o.run.timing.warmup);
    config.set(field::warmup_ms, o.run.timing.warmup_ms).set(field::repeats, o.run.timing.repeats);
    config.set(field::seed, seed).set(field::block_size, kBlockSize).set(field::grid_blocks, grid);
    config.set(field::kernel_binary_version, binary.binaryVersion).set(field::kernel_ptx_version, binary.ptxVersion);
    for (const auto& [k, text] : roofplan::io::schema::conventions::bandwidth) config.set(k, text);
    Json doc = report_head(tool::bandwidth, provenance(o.run, environment({"CUDA_VISIBLE_DEVICES"})), dev, config);
    return write_report(o.run.json_path, doc.records(key::results, rows).text(0) + "\n");
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_args(argc, argv);
    const DeviceInfo dev = open_device(o.run.device);
    return run_guarded("three arrays on the host for the check",
                       [&] { return o.f64 ? run<double>(o, dev) : run<float>(o, dev); });
}
