// kernels/memory/bandwidth.cu — roofplan-bandwidth: STREAM-style device-memory bandwidth benchmark.
//
// Method.  Three device arrays a, b, c of the same size (default: max(256 MiB, 4 x L2) each, so that
// the working set cannot live in L2) run McCalpin's STREAM kernels, plus the runtime's own copy as the
// reference:
//
//   kernel       operation                     bytes per iteration (STREAM's convention)
//   copy         c[i] = a[i]                   2 x array   (read a, write c)
//   scale        b[i] = s * c[i]               2 x array   (read c, write b)
//   triad        a[i] = b[i] + s * c[i]        3 x array   (read b and c, write a)
//   memcpy_d2d   cudaMemcpyAsync(c, a, D2D)    2 x array   (read a, write c)
//
// Bytes are what the program asks to move, each array counted once per read or write; write-allocate
// traffic and cache effects are not added.  GB/s means 1e9 bytes per second.  The kernels use 16-byte
// vector loads and stores (float4 / double2), one vector per thread with a grid that covers the array
// (a grid-stride loop only guards against sizes beyond the grid limit).  On an H100 this matched
// cudaMemcpy's bandwidth, whereas a grid of only the resident blocks looping over the array ran ~7% slower.
//
// Correctness comes before timing: a, b and c are filled with fresh random values in [1, 2) from a
// seeded host generator (--seed, else the clock), each kernel's output array is poisoned with an
// all-ones bit pattern (a NaN in both f32 and f64) before the kernel runs once, and every element of the
// output is checked against a CPU reference: bit-exact for copy and memcpy_d2d, within a relative
// tolerance of 4 machine epsilons for scale and triad (the GPU may fuse triad's multiply-add).  A failed
// check names the kernel and element and exits with status 1; nothing is timed.
//
// Timing: each kernel runs --warmup times, then --repeats times back to back on the default stream, with a
// CUDA event recorded between consecutive runs; each repeat is the time between two events.  Nothing
// waits for the GPU until the last event, so the queue stays ahead of it and launch latency is not
// counted.  The median, min and max are reported, and GB/s comes from the median.
//
// Output: a table on stderr and a JSON object (provenance, configuration, one record per kernel) on
// stdout or in --json PATH.  Exit status: 0 success, 1 verification failed, 2 bad command line,
// 3 CUDA or I/O error, 77 no CUDA device (the conventional "skipped" status; CTest's SKIP_RETURN_CODE).

#include <cuda_runtime.h>

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
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "../common/report.hpp"

namespace {

using namespace roofplan::bench;

constexpr const char* kProgram = "roofplan-bandwidth";
constexpr int kExitVerifyFailed = 1;
constexpr int kExitUsage = 2;
constexpr int kExitCudaError = 3;
constexpr int kExitNoDevice = 77;

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

// ---- Device kernels ----------------------------------------------------------------------------------

// The 16-byte vector type of each element type.
template <class T>
struct Vec;
template <>
struct Vec<float> {
    using type = float4;
    static constexpr std::size_t width = 4;
};
template <>
struct Vec<double> {
    using type = double2;
    static constexpr std::size_t width = 2;
};

__device__ __forceinline__ float scale_op(float s, float c) { return s * c; }
__device__ __forceinline__ double scale_op(double s, double c) { return s * c; }
__device__ __forceinline__ float4 scale_op(float s, float4 c) {
    return make_float4(s * c.x, s * c.y, s * c.z, s * c.w);
}
__device__ __forceinline__ double2 scale_op(double s, double2 c) { return make_double2(s * c.x, s * c.y); }

__device__ __forceinline__ float triad_op(float b, float s, float c) { return b + s * c; }
__device__ __forceinline__ double triad_op(double b, double s, double c) { return b + s * c; }
__device__ __forceinline__ float4 triad_op(float4 b, float s, float4 c) {
    return make_float4(b.x + s * c.x, b.y + s * c.y, b.z + s * c.z, b.w + s * c.w);
}
__device__ __forceinline__ double2 triad_op(double2 b, double s, double2 c) {
    return make_double2(b.x + s * c.x, b.y + s * c.y);
}

// Each kernel walks the arrays as 16-byte vectors (grid-stride, though the grid normally covers them all),
// then handles the (at most width - 1) trailing elements one by one.  cudaMalloc's 256-byte alignment
// makes the vector casts valid.
template <class T>
__global__ void copy_kernel(const T* __restrict__ a, T* __restrict__ c, std::size_t n) {
    using V = typename Vec<T>::type;
    const std::size_t nv = n / Vec<T>::width;
    const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    const V* av = reinterpret_cast<const V*>(a);
    V* cv = reinterpret_cast<V*>(c);
    for (std::size_t i = first; i < nv; i += stride) cv[i] = av[i];
    for (std::size_t i = nv * Vec<T>::width + first; i < n; i += stride) c[i] = a[i];
}

template <class T>
__global__ void scale_kernel(T* __restrict__ b, const T* __restrict__ c, T s, std::size_t n) {
    using V = typename Vec<T>::type;
    const std::size_t nv = n / Vec<T>::width;
    const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    const V* cv = reinterpret_cast<const V*>(c);
    V* bv = reinterpret_cast<V*>(b);
    for (std::size_t i = first; i < nv; i += stride) bv[i] = scale_op(s, cv[i]);
    for (std::size_t i = nv * Vec<T>::width + first; i < n; i += stride) b[i] = scale_op(s, c[i]);
}

template <class T>
__global__ void triad_kernel(T* __restrict__ a, const T* __restrict__ b, const T* __restrict__ c, T s,
                             std::size_t n) {
    using V = typename Vec<T>::type;
    const std::size_t nv = n / Vec<T>::width;
    const std::size_t first = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
    const std::size_t stride = std::size_t{gridDim.x} * blockDim.x;
    const V* bv = reinterpret_cast<const V*>(b);
    const V* cv = reinterpret_cast<const V*>(c);
    V* av = reinterpret_cast<V*>(a);
    for (std::size_t i = first; i < nv; i += stride) av[i] = triad_op(bv[i], s, cv[i]);
    for (std::size_t i = nv * Vec<T>::width + first; i < n; i += stride) a[i] = triad_op(b[i], s, c[i]);
}

// ---- Benchmark description ---------------------------------------------------------------------------

enum class Op { copy, scale, triad, memcpy_d2d };
constexpr Op kOps[] = {Op::copy, Op::scale, Op::triad, Op::memcpy_d2d};

const char* op_name(Op op) {
    switch (op) {
        case Op::copy: return "copy";
        case Op::scale: return "scale";
        case Op::triad: return "triad";
        case Op::memcpy_d2d: return "memcpy_d2d";
    }
    return "?";
}

// Arrays moved per iteration, STREAM's convention (see the top of the file).
std::uint64_t arrays_moved(Op op) { return op == Op::triad ? 3 : 2; }

constexpr unsigned kBlockSize = 256;

template <class T>
struct DeviceArrays {
    T* a = nullptr;
    T* b = nullptr;
    T* c = nullptr;
    std::size_t n = 0;  // elements per array
    std::size_t bytes() const { return n * sizeof(T); }
};

// Blocks for one 16-byte vector per thread, within the grid's x-dimension limit.
unsigned covering_grid(std::size_t vectors) {
    const std::size_t blocks = std::max<std::size_t>(1, (vectors + kBlockSize - 1) / kBlockSize);
    return unsigned(std::min<std::size_t>(blocks, std::numeric_limits<int>::max()));
}

// Enqueues one iteration of `op` on the default stream.
template <class T>
void enqueue(Op op, const DeviceArrays<T>& d, T s, unsigned grid) {
    switch (op) {
        case Op::copy:
            copy_kernel<T><<<grid, kBlockSize>>>(d.a, d.c, d.n);
            CUDA_CHECK_LAUNCH("copy_kernel");
            break;
        case Op::scale:
            scale_kernel<T><<<grid, kBlockSize>>>(d.b, d.c, s, d.n);
            CUDA_CHECK_LAUNCH("scale_kernel");
            break;
        case Op::triad:
            triad_kernel<T><<<grid, kBlockSize>>>(d.a, d.b, d.c, s, d.n);
            CUDA_CHECK_LAUNCH("triad_kernel");
            break;
        case Op::memcpy_d2d:
            CUDA_CHECK(cudaMemcpyAsync(d.c, d.a, d.bytes(), cudaMemcpyDeviceToDevice, 0));
            break;
    }
}

// ---- Host data and verification ---------------------------------------------------------------------

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

// Reinterprets the bits of a trivially copyable value (std::bit_cast is C++20; this file is C++17).
template <class To, class From>
To bit_cast(const From& from) {
    static_assert(sizeof(To) == sizeof(From), "bit_cast needs types of equal size");
    To to;
    std::memcpy(&to, &from, sizeof to);
    return to;
}

// Uniform in [1, 2): random mantissa bits under the exponent of 1.0.  Never zero, never subnormal.
float uniform_1_2(std::uint64_t r, float) { return bit_cast<float>(0x3F800000u | std::uint32_t(r >> 41)); }
double uniform_1_2(std::uint64_t r, double) { return bit_cast<double>(0x3FF0000000000000ull | (r >> 12)); }

template <class T>
void fill_random(std::vector<T>& v, SplitMix64& rng) {
    for (T& x : v) x = uniform_1_2(rng.next(), T{});
}

template <class T>
auto bits_of(T x) {
    if constexpr (sizeof(T) == 4) return bit_cast<std::uint32_t>(x);
    else return bit_cast<std::uint64_t>(x);
}

template <class T>
void poison(T* p, std::size_t bytes) {
    CUDA_CHECK(cudaMemset(p, 0xFF, bytes));  // all ones: a quiet NaN in f32 and f64
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
    std::fprintf(stderr,
                 "%s: verification FAILED for %s: element %zu is %.17g (bits 0x%llx), expected %.17g "
                 "(bits 0x%llx)%s; %zu of %zu elements wrong. Nothing was timed.\n",
                 kProgram, op_name(op), first_bad, double(g), static_cast<unsigned long long>(bits_of(g)),
                 double(w), static_cast<unsigned long long>(bits_of(w)),
                 rtol == 0.0 ? " [exact match required]" : " [relative tolerance exceeded]", bad, got.size());
    std::exit(kExitVerifyFailed);
}

template <class T>
void download(std::vector<T>& host, const T* device) {
    CUDA_CHECK(cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
}

template <class T>
void upload(T* device, const std::vector<T>& host) {
    CUDA_CHECK(cudaMemcpy(device, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
}

// Runs each operation once on fresh random inputs with a poisoned output and checks every element.
template <class T>
void verify_all(const DeviceArrays<T>& d, T s, unsigned grid, std::uint64_t seed) {
    SplitMix64 rng{seed};
    std::vector<T> ha(d.n), hb(d.n), hc(d.n), out(d.n);
    fill_random(ha, rng);
    fill_random(hb, rng);
    fill_random(hc, rng);
    const double rtol = 4.0 * std::numeric_limits<T>::epsilon();

    auto run_and_check = [&](Op op, T* output, auto expected, double tol) {
        poison(output, d.bytes());
        enqueue(op, d, s, grid);
        CUDA_CHECK(cudaDeviceSynchronize());  // surfaces faults raised while the kernel ran
        download(out, output);
        verify(op, out, expected, tol);
    };

    upload(d.a, ha);
    run_and_check(Op::copy, d.c, [&](std::size_t i) { return ha[i]; }, 0.0);
    upload(d.c, hc);
    run_and_check(Op::scale, d.b, [&](std::size_t i) { return T(s * hc[i]); }, rtol);
    upload(d.b, hb);
    run_and_check(Op::triad, d.a, [&](std::size_t i) { return T(hb[i] + s * hc[i]); }, rtol);
    upload(d.a, ha);
    run_and_check(Op::memcpy_d2d, d.c, [&](std::size_t i) { return ha[i]; }, 0.0);
}

// ---- Timing ------------------------------------------------------------------------------------------

struct Timing {
    double median_s = 0, min_s = 0, max_s = 0;
};

template <class T>
Timing time_op(Op op, const DeviceArrays<T>& d, T s, unsigned grid, int warmup, int repeats) {
    // events[r] is recorded just before run r and events[r + 1] just after it.  The warm-up runs are
    // queued without waiting, so the GPU is already busy when events[0] is recorded.
    std::vector<cudaEvent_t> events(std::size_t(repeats) + 1);
    for (cudaEvent_t& e : events) CUDA_CHECK(cudaEventCreate(&e));
    for (int i = 0; i < warmup; ++i) enqueue(op, d, s, grid);
    for (int r = 0; r < repeats; ++r) {
        CUDA_CHECK(cudaEventRecord(events[std::size_t(r)], 0));
        enqueue(op, d, s, grid);
    }
    CUDA_CHECK(cudaEventRecord(events.back(), 0));
    CUDA_CHECK(cudaEventSynchronize(events.back()));

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
    Timing t;
    t.median_s = m % 2 ? seconds[m / 2] : 0.5 * (seconds[m / 2 - 1] + seconds[m / 2]);
    t.min_s = seconds.front();
    t.max_s = seconds.back();
    return t;
}

// ---- Command line ------------------------------------------------------------------------------------

struct Options {
    std::optional<std::uint64_t> size_mib;  // per array; default max(256 MiB, 4 x L2)
    int repeats = 20;
    int warmup = 5;
    std::optional<std::uint64_t> seed;
    bool f64 = false;
    std::string json_path;  // empty: stdout
    int device = 0;
    std::optional<std::string> git_sha;
};

void print_help() {
    std::printf(
        "Usage: %s [options]\n"
        "STREAM-style device-memory bandwidth: copy, scale, triad and cudaMemcpy device-to-device.\n"
        "Every kernel is verified element by element before it is timed.\n"
        "\n"
        "Options:\n"
        "  --size-mib N     MiB per array (3 arrays); default max(256, 4 x L2 size)\n"
        "  --repeats N      timed runs per kernel (default 20); median, min and max are reported\n"
        "  --warmup N       untimed runs per kernel before timing (default 5)\n"
        "  --seed N         seed of the input data (default: from the clock; printed and in the JSON)\n"
        "  --dtype f32|f64  element type (default f32)\n"
        "  --json PATH      write the JSON report to PATH instead of stdout\n"
        "  --device N       CUDA device index (default 0)\n"
        "  --git-sha SHA    source revision for the report (default: $ROOFPLAN_GIT_SHA, else \"unknown\")\n"
        "  -h, --help       show this help\n"
        "\n"
        "The table goes to stderr, the JSON report to stdout (or --json PATH).\n"
        "Exit status: 0 ok, 1 verification failed, 2 bad command line, 3 CUDA or I/O error, 77 no CUDA device.\n",
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
        if (flag == "--size-mib") {
            o.size_mib = parse_unsigned(flag, take_value(), 1, std::uint64_t{1} << 20);
        } else if (flag == "--repeats") {
            o.repeats = int(parse_unsigned(flag, take_value(), 1, 100000));
        } else if (flag == "--warmup") {
            o.warmup = int(parse_unsigned(flag, take_value(), 0, 1000000));
        } else if (flag == "--seed") {
            o.seed = parse_unsigned(flag, take_value(), 0, std::numeric_limits<std::uint64_t>::max());
        } else if (flag == "--dtype") {
            const std::string_view v = take_value();
            if (v == "f32") o.f64 = false;
            else if (v == "f64") o.f64 = true;
            else usage_error("--dtype must be f32 or f64, got '" + std::string(v) + "'");
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

    // Theoretical DRAM bandwidth, 2 transfers per memory clock (the convention deviceQuery uses).
    std::optional<double> peak_gb_per_s() const {
        if (!memory_clock_khz || !memory_bus_width_bits) return std::nullopt;
        return 2.0 * *memory_clock_khz * 1e3 * (*memory_bus_width_bits / 8.0) / 1e9;
    }
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


// ---- The run -----------------------------------------------------------------------------------------

struct Result {
    Op op;
    std::uint64_t bytes_per_iteration;
    Timing t;
    double gb_per_s = 0;
    double fraction_of_memcpy = 0;
};

template <class T>
const char* dtype_name() {
    return sizeof(T) == 4 ? "f32" : "f64";
}

std::string build_json(const Options& opt, const DeviceInfo& dev, int argc, char** argv, const char* dtype,
                       std::size_t element_bytes, std::uint64_t array_bytes, std::uint64_t seed, double scalar,
                       unsigned grid, const cudaFuncAttributes& binary, const std::vector<Result>& results) {
    std::string git_sha = "unknown";
    if (opt.git_sha) {
        git_sha = *opt.git_sha;
    } else if (const char* env = std::getenv("ROOFPLAN_GIT_SHA"); env != nullptr && *env != '\0') {
        git_sha = env;
    }
    std::string cmd = "[";
    for (int i = 0; i < argc; ++i) cmd += (i ? ", " : "") + json_string(argv[i]);
    cmd += "]";
    const std::string nvcc_version = std::to_string(__CUDACC_VER_MAJOR__) + "." +
                                     std::to_string(__CUDACC_VER_MINOR__) + "." +
                                     std::to_string(__CUDACC_VER_BUILD__);
    const auto peak = dev.peak_gb_per_s();

    std::string j;
    j += "{\n";
    j += "  \"tool\": \"roofplan-bandwidth\",\n";
    j += "  \"schema_version\": 1,\n";
    j += "  \"provenance\": {\n";
    j += "    \"date_utc\": " + json_string(utc_now_iso8601()) + ",\n";
    j += "    \"command_line\": " + cmd + ",\n";
    j += "    \"git_sha\": " + json_string(git_sha) + ",\n";
    j += "    \"driver_version\": " + json_string(version_string(dev.driver_version)) + ",\n";
    j += "    \"driver_version_code\": " + json_number(dev.driver_version) + ",\n";
    j += "    \"runtime_version\": " + json_string(version_string(dev.runtime_version)) + ",\n";
    j += "    \"runtime_version_code\": " + json_number(dev.runtime_version) + ",\n";
    j += "    \"compiler\": " + json_string("nvcc " + nvcc_version) + ",\n";
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
    j += "      \"ecc_enabled\": " + std::string(dev.ecc ? "true" : "false") + ",\n";
    j += "      \"peak_gb_per_s_estimate\": " + (peak ? json_number(*peak) : std::string("null")) + "\n";
    j += "    }\n";
    j += "  },\n";
    j += "  \"config\": {\n";
    j += "    \"dtype\": " + json_string(dtype) + ",\n";
    j += "    \"element_bytes\": " + json_number(std::uint64_t{element_bytes}) + ",\n";
    j += "    \"array_bytes\": " + json_number(array_bytes) + ",\n";
    j += "    \"elements_per_array\": " + json_number(array_bytes / element_bytes) + ",\n";
    j += "    \"scalar\": " + json_number(scalar) + ",\n";
    j += "    \"warmup\": " + json_number(opt.warmup) + ",\n";
    j += "    \"repeats\": " + json_number(opt.repeats) + ",\n";
    j += "    \"seed\": " + json_number(seed) + ",\n";
    j += "    \"block_size\": " + json_number(std::uint64_t{kBlockSize}) + ",\n";
    j += "    \"grid_blocks\": " + json_number(std::uint64_t{grid}) + ",\n";
    j += "    \"kernel_binary_version\": " + json_number(binary.binaryVersion) + ",\n";
    j += "    \"kernel_ptx_version\": " + json_number(binary.ptxVersion) + ",\n";
    j += "    \"bytes_convention\": \"STREAM: copy and scale 2 arrays, triad 3 arrays, memcpy 2 arrays per "
         "iteration; GB = 1e9 bytes\"\n";
    j += "  },\n";
    j += "  \"results\": [\n";
    for (std::size_t i = 0; i < results.size(); ++i) {
        const Result& r = results[i];
        j += "    {\"kernel\": " + json_string(op_name(r.op)) +
             ", \"bytes_per_iteration\": " + json_number(r.bytes_per_iteration) +
             ", \"median_s\": " + json_number(r.t.median_s) + ", \"min_s\": " + json_number(r.t.min_s) +
             ", \"max_s\": " + json_number(r.t.max_s) + ", \"gb_per_s\": " + json_number(r.gb_per_s) +
             ", \"fraction_of_memcpy\": " + json_number(r.fraction_of_memcpy) + "}" +
             (i + 1 < results.size() ? ",\n" : "\n");
    }
    j += "  ]\n";
    j += "}\n";
    return j;
}

void print_table(const DeviceInfo& dev, const char* dtype, std::uint64_t array_bytes, std::size_t elements,
                 const Options& opt, std::uint64_t seed, const std::vector<Result>& results) {
    constexpr double kMiB = 1024.0 * 1024.0;
    std::fprintf(stderr, "%s: %s [device %d, %s], sm_%d%d, %d SMs", kProgram, dev.name.c_str(), dev.index,
                 dev.pci_bus_id.c_str(), dev.cc_major, dev.cc_minor, dev.sm_count);
    if (dev.l2_bytes) std::fprintf(stderr, ", L2 %.1f MiB", *dev.l2_bytes / kMiB);
    std::fprintf(stderr, "\n");
    if (const auto peak = dev.peak_gb_per_s())
        std::fprintf(stderr, "  memory: %d-bit bus, %d MHz, estimated peak %.1f GB/s (2 x clock x width)\n",
                     *dev.memory_bus_width_bits, *dev.memory_clock_khz / 1000, *peak);
    std::fprintf(stderr, "  driver %s, runtime %s\n", version_string(dev.driver_version).c_str(),
                 version_string(dev.runtime_version).c_str());
    std::fprintf(stderr, "  %s, %.0f MiB per array (%zu elements), %d warm-up + %d timed runs per kernel, seed %llu\n",
                 dtype, double(array_bytes) / kMiB, elements, opt.warmup, opt.repeats,
                 static_cast<unsigned long long>(seed));
    std::fprintf(stderr, "  verified before timing: copy, scale, triad, memcpy_d2d (every element)\n\n");
    std::fprintf(stderr, "  %-11s %14s %12s %12s %12s %10s %10s\n", "kernel", "bytes/iter", "median us", "min us",
                 "max us", "GB/s", "vs memcpy");
    for (const Result& r : results)
        std::fprintf(stderr, "  %-11s %14llu %12.2f %12.2f %12.2f %10.1f %10.3f\n", op_name(r.op),
                     static_cast<unsigned long long>(r.bytes_per_iteration), r.t.median_s * 1e6, r.t.min_s * 1e6,
                     r.t.max_s * 1e6, r.gb_per_s, r.fraction_of_memcpy);
}

template <class T>
int run(const Options& opt, const DeviceInfo& dev, int argc, char** argv) {
    constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;
    const T scalar = T(3);  // STREAM's scalar

    // Array size: as asked, else at least 256 MiB and 4 x L2 so that L2 cannot hold the working set.
    const std::uint64_t l2 = std::uint64_t(dev.l2_bytes.value_or(0));
    const std::uint64_t size_mib =
        opt.size_mib ? *opt.size_mib : std::max<std::uint64_t>(256, (4 * l2 + kMiB - 1) / kMiB);
    const std::uint64_t array_bytes = size_mib * kMiB;
    if (array_bytes < 4 * l2)
        std::fprintf(stderr, "%s: warning: %llu MiB per array is less than 4 x L2 (%.1f MiB); L2 hits may "
                     "inflate the results\n", kProgram, static_cast<unsigned long long>(size_mib),
                     4.0 * double(l2) / double(kMiB));
    std::size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    if (3 * array_bytes > free_bytes) {
        std::fprintf(stderr, "%s: error: 3 arrays of %llu MiB need %llu MiB of device memory, only %llu MiB "
                     "free; choose a smaller --size-mib\n", kProgram, static_cast<unsigned long long>(size_mib),
                     static_cast<unsigned long long>(3 * size_mib),
                     static_cast<unsigned long long>(free_bytes / kMiB));
        return kExitCudaError;
    }

    DeviceArrays<T> d;
    d.n = std::size_t(array_bytes / sizeof(T));
    CUDA_CHECK(cudaMalloc(&d.a, d.bytes()));
    CUDA_CHECK(cudaMalloc(&d.b, d.bytes()));
    CUDA_CHECK(cudaMalloc(&d.c, d.bytes()));

    const unsigned grid = covering_grid(d.n / Vec<T>::width);
    cudaFuncAttributes binary{};  // which machine code the driver loaded (native SASS or JIT from PTX)
    CUDA_CHECK(cudaFuncGetAttributes(&binary, copy_kernel<T>));

    // Default seed from the clock, kept below 2^53 so that it survives a round trip through a JSON double.
    const std::uint64_t seed =
        opt.seed ? *opt.seed
                 : std::uint64_t(std::chrono::system_clock::now().time_since_epoch().count()) & ((1ull << 53) - 1);

    verify_all(d, scalar, grid, seed);

    std::vector<Result> results;
    for (const Op op : kOps) {
        Result r{op, arrays_moved(op) * array_bytes, time_op(op, d, scalar, grid, opt.warmup, opt.repeats)};
        r.gb_per_s = double(r.bytes_per_iteration) / r.t.median_s / 1e9;
        results.push_back(r);
    }
    const double memcpy_gb_per_s = results.back().gb_per_s;  // Op::memcpy_d2d is last in kOps
    for (Result& r : results) r.fraction_of_memcpy = r.gb_per_s / memcpy_gb_per_s;

    CUDA_CHECK(cudaFree(d.a));
    CUDA_CHECK(cudaFree(d.b));
    CUDA_CHECK(cudaFree(d.c));

    print_table(dev, dtype_name<T>(), array_bytes, d.n, opt, seed, results);
    const std::string json = build_json(opt, dev, argc, argv, dtype_name<T>(), sizeof(T), array_bytes, seed,
                                        double(scalar), grid, binary, results);
    if (opt.json_path.empty()) {
        std::fputs(json.c_str(), stdout);
        if (std::fflush(stdout) != 0) {
            std::perror("roofplan-bandwidth: error: writing the JSON report to stdout");
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
    return opt.f64 ? run<double>(opt, dev, argc, argv) : run<float>(opt, dev, argc, argv);
}
