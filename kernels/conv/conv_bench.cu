// kernels/conv/conv_bench.cu — roofplan-conv: 2-D convolution throughput through cuDNN 9.
//
// Forward, backward-data and backward-filter of each shape of --shapes-file, in fp32 (FMA only), tf32, fp16 and
// bf16 (FP32 accumulation), NCHW and NHWC, with cuDNN's algorithm (cudnnFind*AlgorithmEx, or the heuristic) within
// --workspace-mib.  Inputs are defined per logical element (the same in both layouts) and generated on the GPU; the
// poisoned output must be written and finite everywhere, and sampled elements must match sums in double within
// per-element and norm-wise bounds.  TFLOPS = 2 MACs / median / 1e12.  The method in detail: docs/kernels.md.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <array>
#include <fstream>
#include <sstream>

#include "../common/harness.hpp"

namespace {

using namespace roofplan::bench;
namespace tool = roofplan::io::schema::tool;
namespace prec = roofplan::io::schema::precision;

// ---- Values defined per logical element -----------------------------------------------------------------

enum class Fmt { f32, f16, bf16 };

// +-(1 + f) 2^-e, e in 1..4, f with `bits` fraction bits: exact in the format, in [-1, 1), never small.
__host__ __device__ inline float logical_value(std::uint64_t seed, std::uint64_t index, int bits) {
    const std::uint64_t r = mix64(seed + kGolden * (index + 1));
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
        out[i] = T(logical_value(seed, std::uint64_t(logical), bits));  // exact in T
    }
}

// Counts elements that are not finite (the poison is all-ones bytes: NaN in every format).
template <typename T>
__global__ void count_bad_kernel(const T* data, std::int64_t count, unsigned long long* bad) {
    unsigned long long local = 0;
    for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < count;
         i += std::int64_t(gridDim.x) * blockDim.x)
        if (!isfinite(float(data[i]))) ++local;
    if (local) atomicAdd(bad, local);
}

// Calls body(T{}) with T the element type of format `f`.
template <class Body>
void with_element_type(Fmt f, Body&& body) {
    if (f == Fmt::f32) body(float{});
    else if (f == Fmt::f16) body(__half{});
    else body(__nv_bfloat16{});
}

void fill(void* p, Fmt f, const Dims4& d, std::uint64_t seed, cudaStream_t s) {
    with_element_type(f, [&](auto zero) {
        fill_kernel<<<grid_for(d.count(), 4096), 256, 0, s>>>(static_cast<decltype(zero)*>(p), d.count(), d.c, d.h, d.w,
                                                             d.nhwc, seed, fraction_bits(f));
    });
    CHECK_LAUNCH("fill_kernel");
}

// ---- Cases ---------------------------------------------------------------------------------------------

enum class Prec { fp32, tf32, fp16, bf16 };
enum class Pass { forward, bwd_data, bwd_filter };

// A precision: its cuDNN types and the bounds of its check (docs/kernels.md): each checked element within
// (floor + (T + 2) unit) x sum |terms|, and together ||d - ref|| / ||ref|| <= max(norm, T unit), T the terms summed.
struct PrecSpec {
    Prec prec;
    const char* name;
    Fmt fmt;
    cudnnDataType_t data_type;
    cudnnMathType_t math;
    double floor, unit, norm;
    double element_bound(std::int64_t terms) const { return floor + (double(terms) + 2.0) * unit; }
    double norm_limit(std::int64_t terms) const { return std::max(norm, double(terms) * unit); }
};
const PrecSpec kPrecs[] = {  // 2^-17 leaves fp32 room for Winograd and FFT; a TF32 algorithm cannot pass as fp32
    {Prec::fp32, prec::fp32.data(), Fmt::f32, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH, 0x1p-17, 0x1p-24, 5e-5},
    {Prec::tf32, prec::tf32.data(), Fmt::f32, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH, 0x1p-9, 0x1p-22, 4e-3},
    {Prec::fp16, prec::fp16.data(), Fmt::f16, CUDNN_DATA_HALF, CUDNN_TENSOR_OP_MATH, 0x1p-8, 0x1p-22, 4e-3},
    {Prec::bf16, prec::bf16.data(), Fmt::bf16, CUDNN_DATA_BFLOAT16, CUDNN_TENSOR_OP_MATH, 0x1p-6, 0x1p-22, 3e-2},
};
constexpr const char* kPassNames[] = {"forward", "bwd-data", "bwd-filter"};  // by Pass
const char* pass_name(Pass p) { return kPassNames[int(p)]; }
const char* layout_name(bool nhwc) { return nhwc ? "nhwc" : "nchw"; }
// cudnnMathType_t's names, by value.
const char* math_type_name(cudnnMathType_t m) {
    constexpr const char* kNames[] = {"CUDNN_DEFAULT_MATH", "CUDNN_TENSOR_OP_MATH",
                                      "CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION", "CUDNN_FMA_MATH"};
    return unsigned(m) < 4 ? kNames[m] : "unknown";
}

struct Shape {
    std::int64_t n, c, h, w, k, r, s, stride, pad, dilation;
    std::string label;
    [[nodiscard]] std::int64_t p() const { return (h + 2 * pad - dilation * (r - 1) - 1) / stride + 1; }
    [[nodiscard]] std::int64_t q() const { return (w + 2 * pad - dilation * (s - 1) - 1) / stride + 1; }
    [[nodiscard]] double macs() const { return double(n) * double(k) * double(p()) * double(q()) * double(c * r * s); }
};

struct Options {
    RunOptions run;
    std::string shapes_file, filter;
    std::vector<Prec> precisions{Prec::fp32, Prec::tf32, Prec::fp16, Prec::bf16};
    std::vector<bool> layouts{false, true};  // nhwc?
    std::vector<Pass> passes{Pass::forward, Pass::bwd_data, Pass::bwd_filter};
    bool find = true;
    std::uint64_t workspace_mib = 1024;
    int samples = 512;
};

// The algorithm chosen for a case (find or heuristic; `ok` false, with a reason, when none works).
struct Choice {
    bool ok = false;
    int algo = -1;
    cudnnMathType_t math = CUDNN_DEFAULT_MATH;
    std::size_t workspace = 0;
    int offered = 0;
    std::string reason;
};

struct Record {
    const Shape* shape = nullptr;
    const PrecSpec* prec = nullptr;
    bool nhwc = false;
    Pass pass = Pass::forward;
    std::string skip_reason;
    Choice algo;
    int input_sets = 1;
    Timing t;
    std::int64_t terms = 0;  // products per output element (at most; padding and stride skip some)
    ErrorStats v;
    double tflops = 0;
};

// ---- Command line ----------------------------------------------------------------------------------------

Options parse_args(int argc, char** argv) {
    Options o;
    o.run.timing = {15, 3, 25};  // repeats, warmup, warmup_ms
    Cli cli(tool::conv.data(), "2-D convolution throughput through cuDNN (forward, backward-data, backward-filter).");
    cli.option("--shapes-file", "FILE", "lines 'n c h w k r s stride pad dilation label' ('#' comments), e.g.\n"
               "validation/shapes/zoo_conv.txt (tools: roofplan-zoo-conv-shapes); required",
               [&o](std::string_view v) { o.shapes_file = v; });
    cli.option("--precision", "LIST", "fp32,tf32,fp16,bf16 or all (default all)", [&o](std::string_view v) {
        o.precisions.clear();  // each use replaces the one before
        add_choices(o.precisions, v, {prec::fp32, prec::tf32, prec::fp16, prec::bf16}, "precision");
    });
    cli.option("--layout", "LIST", "nchw,nhwc or all (default all)", [&o](std::string_view v) {
        o.layouts.clear();
        add_choices(o.layouts, v, {"nchw", "nhwc"}, "layout");  // nhwc?
    });
    cli.option("--pass", "LIST", "forward,bwd-data,bwd-filter or all (default all)", [&o](std::string_view v) {
        o.passes.clear();
        add_choices(o.passes, v, {kPassNames[0], kPassNames[1], kPassNames[2]}, "pass");
    });
    cli.option("--filter", "TEXT", "only shapes whose label contains TEXT", [&o](std::string_view v) { o.filter = v; });
    cli.option("--algo", "NAME",
               "find (cudnnFind*AlgorithmEx, timed; the default) or heuristic\n(cudnnGet*Algorithm_v7)",
               [&o](std::string_view v) {
                   if (v != "find" && v != "heuristic")
                       usage_error("--algo must be find or heuristic, got '" + std::string(v) + "'");
                   o.find = v == "find";
               });
    cli.number("--workspace-mib", "workspace limit for the algorithm", o.workspace_mib, 0, 1 << 20);
    cli.number("--samples", "output elements checked per case (bwd-filter fewer)", o.samples, 16, 1 << 20);
    cli.common(o.run).footer("The JSON report in --json PATH is rewritten after each case.\n");
    cli.parse(argc, argv);
    if (o.shapes_file.empty()) usage_error("--shapes-file FILE is required");
    return o;
}

std::vector<Shape> read_shapes(const Options& o) {
    std::ifstream in(o.shapes_file);
    if (!in) usage_error("cannot open shapes file '" + o.shapes_file + "'");
    std::vector<Shape> shapes;
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        std::istringstream fields(line.substr(0, line.find('#')));
        std::vector<std::string> f;
        for (std::string t; fields >> t;) f.push_back(t);
        if (f.empty()) continue;
        const std::string where = o.shapes_file + ":" + std::to_string(number);
        if (f.size() != 11)
            usage_error(where + ": expected 'n c h w k r s stride pad dilation label', got " +
                        std::to_string(f.size()) + " fields");
        Shape s{};
        std::int64_t* dst[] = {&s.n, &s.c, &s.h, &s.w, &s.k, &s.r, &s.s, &s.stride, &s.pad, &s.dilation};
        const char* names[] = {"n", "c", "h", "w", "k", "r", "s", "stride", "pad", "dilation"};
        for (int i = 0; i < 10; ++i)
            *dst[i] = std::int64_t(parse_unsigned(where + ": " + names[i], f[std::size_t(i)], i == 8 ? 0 : 1, 1 << 20));
        s.label = f[10];
        if (s.p() < 1 || s.q() < 1) usage_error(where + ": the kernel does not fit the padded input");
        if (!o.filter.empty() && s.label.find(o.filter) == std::string::npos) continue;
        shapes.push_back(s);
    }
    if (shapes.empty())
        usage_error("no shapes in '" + o.shapes_file + "'" + (o.filter.empty() ? "" : " match --filter"));
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
Reference reference(const Shape& s, Pass pass, const Seeds& seeds, int bits, const std::array<std::int64_t, 4>& at) {
    const auto [a, b, i, j] = at;
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

// The descriptors of a case: x, w and y in its layout and type, the convolution with its math type.
struct Descriptors {
    cudnnTensorDescriptor_t x{}, y{};
    cudnnFilterDescriptor_t w{};
    cudnnConvolutionDescriptor_t conv{};
    Descriptors(const Shape& s, const PrecSpec& p, bool nhwc) {
        CHECK(cudnnCreateTensorDescriptor(&x));
        CHECK(cudnnCreateTensorDescriptor(&y));
        CHECK(cudnnCreateFilterDescriptor(&w));
        CHECK(cudnnCreateConvolutionDescriptor(&conv));
        const cudnnTensorFormat_t fmt = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
        CHECK(cudnnSetTensor4dDescriptor(x, fmt, p.data_type, int(s.n), int(s.c), int(s.h), int(s.w)));
        CHECK(cudnnSetFilter4dDescriptor(w, p.data_type, fmt, int(s.k), int(s.c), int(s.r), int(s.s)));
        const int pad = int(s.pad), stride = int(s.stride), dilation = int(s.dilation);
        CHECK(cudnnSetConvolution2dDescriptor(conv, pad, pad, stride, stride, dilation, dilation,
                                              CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
        CHECK(cudnnSetConvolutionMathType(conv, p.math));
        int n = 0, c = 0, h = 0, wo = 0;
        CHECK(cudnnGetConvolution2dForwardOutputDim(conv, x, w, &n, &c, &h, &wo));
        if (n != s.n || c != s.k || h != s.p() || wo != s.q()) {
            std::fprintf(stderr, "%s: cuDNN's output %dx%dx%dx%d differs from ours for %s\n", g_program, n, c, h, wo,
                         s.label.c_str());
            std::exit(kExitCudaError);
        }
        CHECK(cudnnSetTensor4dDescriptor(y, fmt, p.data_type, n, c, h, wo));
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

struct Buffers {  // rotated copies of the two inputs, the output and the workspace of one case
    const Rotation& inputs;
    void *out = nullptr, *workspace = nullptr;
};

struct Context {
    cudnnHandle_t handle{};
    cudaStream_t stream{};
    unsigned long long* d_bad = nullptr;
    DeviceInfo dev;
};

// The first of cuDNN's answers that ran and fits in the workspace limit.
template <typename Perf>
Choice pick(const Perf* perf, int returned, std::size_t limit) {
    cudnnStatus_t last = CUDNN_STATUS_NOT_SUPPORTED;
    for (int i = 0; i < returned; ++i)
        if (perf[i].status != CUDNN_STATUS_SUCCESS)
            last = perf[i].status;
        else if (perf[i].memory <= limit)
            return {true, int(perf[i].algo), perf[i].mathType, perf[i].memory, returned, ""};
    Choice c;
    c.offered = returned;
    c.reason = std::string("no algorithm succeeded within the workspace limit (last status ") +
               cudnnGetErrorString(last) + ")";
    return c;
}

// Chooses the algorithm (find or heuristic) and runs nothing else.
Choice choose(const Context& ctx, const Descriptors& d, Pass pass, const Buffers& b, std::size_t limit, bool find) {
    constexpr int kRequest = 16;
    void* in1 = b.inputs.set(0)[0];
    void* in2 = b.inputs.set(0)[1];
    int returned = 0;
    cudnnStatus_t st = CUDNN_STATUS_SUCCESS;
    if (pass == Pass::forward) {
        cudnnConvolutionFwdAlgoPerf_t perf[kRequest];
        st = find ? cudnnFindConvolutionForwardAlgorithmEx(ctx.handle, d.x, in1, d.w, in2, d.conv, d.y, b.out, kRequest,
                                                           &returned, perf, b.workspace, limit)
                  : cudnnGetConvolutionForwardAlgorithm_v7(ctx.handle, d.x, d.w, d.conv, d.y, kRequest, &returned,
                                                           perf);
        if (st == CUDNN_STATUS_SUCCESS) return pick(perf, returned, limit);
    } else if (pass == Pass::bwd_data) {
        cudnnConvolutionBwdDataAlgoPerf_t perf[kRequest];
        st = find ? cudnnFindConvolutionBackwardDataAlgorithmEx(ctx.handle, d.w, in2, d.y, in1, d.conv, d.x, b.out,
                                                                kRequest, &returned, perf, b.workspace, limit)
                  : cudnnGetConvolutionBackwardDataAlgorithm_v7(ctx.handle, d.w, d.y, d.conv, d.x, kRequest, &returned,
                                                                perf);
        if (st == CUDNN_STATUS_SUCCESS) return pick(perf, returned, limit);
    } else {
        cudnnConvolutionBwdFilterAlgoPerf_t perf[kRequest];
        st = find ? cudnnFindConvolutionBackwardFilterAlgorithmEx(ctx.handle, d.x, in1, d.y, in2, d.conv, d.w, b.out,
                                                                  kRequest, &returned, perf, b.workspace, limit)
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
    void* in1 = b.inputs.set(set)[0];
    void* in2 = b.inputs.set(set)[1];
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

// ---- Verification ------------------------------------------------------------------------------------------

[[noreturn]] void verification_failed(const Record& rec, const std::string& what) {
    std::fprintf(stderr, "%s: VERIFICATION FAILED: %s %s %s %s%s\n", g_program, rec.shape->label.c_str(),
                 rec.prec->name, layout_name(rec.nhwc), pass_name(rec.pass), what.c_str());
    std::exit(kExitVerifyFailed);
}

// The output is fully written and finite, and sampled elements match sums in double (docs/kernels.md); sets
// rec.terms and rec.v.
void verify(const Context& ctx, Record& rec, const Seeds& seeds, const Buffers& b, const Dims4& out,
              std::uint64_t sample_seed, int samples) {
    const Shape& s = *rec.shape;
    CHECK(cudaMemsetAsync(ctx.d_bad, 0, sizeof(unsigned long long), ctx.stream));
    with_element_type(rec.prec->fmt, [&](auto zero) {
        count_bad_kernel<<<grid_for(out.count(), 4096), 256, 0, ctx.stream>>>(static_cast<const decltype(zero)*>(b.out),
                                                                             out.count(), ctx.d_bad);
    });
    CHECK_LAUNCH("count_bad_kernel");
    unsigned long long bad = 0;
    CHECK(cudaMemcpyAsync(&bad, ctx.d_bad, sizeof bad, cudaMemcpyDeviceToHost, ctx.stream));
    CHECK(cudaStreamSynchronize(ctx.stream));
    if (bad != 0)
        verification_failed(rec, ": " + std::to_string(bad) + " of " + std::to_string(out.count()) +
                                     " output elements not written or not finite");
    rec.terms = rec.pass == Pass::forward    ? s.c * s.r * s.s
                : rec.pass == Pass::bwd_data ? s.k * s.r * s.s
                                             : s.n * s.p() * s.q();
    const std::int64_t count =
        std::clamp<std::int64_t>(60'000'000 / std::max<std::int64_t>(rec.terms, 1), 16, std::max(16, samples));
    const std::vector<std::uint64_t> logical = sample_positions(
        std::uint64_t(out.count()), {0, std::uint64_t(out.count() - 1)},
        std::uint64_t(std::min<std::int64_t>(count, out.count())), SplitMix64{sample_seed});
    std::vector<std::uint64_t> where;
    std::vector<std::array<std::int64_t, 4>> coords;
    for (const std::uint64_t l : logical) {
        const std::int64_t w = std::int64_t(l) % out.w, h = std::int64_t(l) / out.w % out.h;
        const std::int64_t c = std::int64_t(l) / (out.w * out.h) % out.c, n = std::int64_t(l) / (out.w * out.h * out.c);
        coords.push_back({n, c, h, w});
        where.push_back(std::uint64_t(memory_index(n, c, h, w, out.c, out.h, out.w, out.nhwc)));
    }
    std::vector<float> got;
    with_element_type(rec.prec->fmt, [&](auto zero) {
        got = gather_to_host(static_cast<const decltype(zero)*>(b.out), where, ctx.stream);
    });
    std::vector<Reference> refs(coords.size());  // on several host threads
    parallel_for(refs.size(), [&](std::size_t i) {
        refs[i] = reference(*rec.shape, rec.pass, seeds, fraction_bits(rec.prec->fmt), coords[i]);
    });
    ErrorStats& v = rec.v;
    v = ErrorStats{rec.prec->element_bound(rec.terms), rec.prec->norm_limit(rec.terms)};
    for (std::size_t i = 0; i < refs.size(); ++i) {
        const double d = double(got[i]), r = refs[i].value, scale = std::max(refs[i].abs_sum, 1e-30);
        if (v.add(d, r, scale)) continue;
        char buf[256];
        std::snprintf(buf, sizeof buf, " element (%lld,%lld,%lld,%lld): got %.9g, expected %.9g (|error| / "
                      "sum|terms| = %.3g > %.3g)", static_cast<long long>(coords[i][0]),
                      static_cast<long long>(coords[i][1]), static_cast<long long>(coords[i][2]),
                      static_cast<long long>(coords[i][3]), d, r, std::fabs(d - r) / scale, v.element_bound);
        verification_failed(rec, buf);
    }
    if (!(v.rel_l2_error() <= v.norm_limit)) {
        char buf[256];
        std::snprintf(buf, sizeof buf, ": ||d - ref|| / ||ref|| = %.3g > %.3g over %llu elements (algorithm %d, %s)",
                      v.rel_l2_error(), v.norm_limit, static_cast<unsigned long long>(v.checked), rec.algo.algo,
                      math_type_name(rec.algo.math));
        verification_failed(rec, buf);
    }
}

// ---- Report ------------------------------------------------------------------------------------------------

Json shape_json(const Record& r) {
    const Shape& s = *r.shape;
    Json j;
    j.set(field::label, s.label).set(field::pass, pass_name(r.pass)).set(field::precision, r.prec->name);
    j.set(field::layout, layout_name(r.nhwc)).set(field::n, s.n).set(field::c, s.c).set(field::h, s.h);
    j.set(field::w, s.w).set(field::k, s.k).set(field::r, s.r).set(field::s, s.s).set(field::stride, s.stride);
    return j.set(field::pad, s.pad).set(field::dilation, s.dilation).set(field::p, s.p()).set(field::q, s.q());
}

Json record(const Record& r) {
    Json j = shape_json(r);
    j.set(field::macs, r.shape->macs()).merge(timing_json(r.t)).set(field::tflops, r.tflops);
    j.set(field::algo, r.algo.algo).set(field::algo_math_type, math_type_name(r.algo.math));
    j.set(field::requested_math_type, math_type_name(r.prec->math)).set(field::workspace_bytes, r.algo.workspace);
    j.set(field::algos_offered, r.algo.offered);
    j.set(field::input_sets, r.input_sets).set(field::verified, true).set(field::all_elements_written, true);
    return j.set(field::terms_per_element, r.terms).merge(r.v.json());
}

std::string report(const Options& o, const DeviceInfo& dev, std::uint64_t seed, const std::vector<Record>& recs,
                   bool complete) {
    const std::size_t cudnn = cudnnGetVersion();
    Json prov = provenance(o.run, environment({"NVIDIA_TF32_OVERRIDE", "CUDNN_LOGLEVEL_DBG", "CUDA_VISIBLE_DEVICES",
                                               "CUDA_MODULE_LOADING"}));
    prov.set(field::cudnn_version, library_version_string(cudnn)).set(field::cudnn_version_code, cudnn);
    prov.set(field::cudnn_header_version, std::to_string(CUDNN_MAJOR) + "." + std::to_string(CUDNN_MINOR) + "." +
                                              std::to_string(CUDNN_PATCHLEVEL));
    Json config;
    config.set(field::algo_search, o.find ? "find" : "heuristic");
    config.set(field::workspace_limit_bytes, o.workspace_mib * kMiB).set(field::warmup, o.run.timing.warmup);
    config.set(field::warmup_ms, o.run.timing.warmup_ms).set(field::repeats, o.run.timing.repeats);
    config.set(field::seed, seed).set(field::samples, o.samples).set(field::shapes_file, o.shapes_file);
    config.set(field::filter, o.filter);
    for (const auto& [k, text] : roofplan::io::schema::conventions::conv) config.set(k, text);
    std::vector<Json> results, skipped;
    for (const Record& r : recs)
        if (r.skip_reason.empty()) results.push_back(record(r));
        else skipped.push_back(shape_json(r).set(field::reason, r.skip_reason));
    Json doc = report_head(tool::conv, prov, dev, config).set(key::complete, complete);
    return doc.records(key::results, results).records(key::skipped, skipped).text(0) + "\n";
}

// ---- The run -----------------------------------------------------------------------------------------------

// One case: inputs, algorithm, the checked run, timing.  Returns its record (with a skip reason when it cannot run).
Record run_case(const Context& ctx, const Options& o, Record rec, const Seeds& seeds, std::uint64_t sample_seed) {
    const Shape& s = *rec.shape;
    const PrecSpec& p = *rec.prec;
    const Dims4 x{s.n, s.c, s.h, s.w, rec.nhwc}, w{s.k, s.c, s.r, s.s, rec.nhwc}, y{s.n, s.k, s.p(), s.q(), rec.nhwc};
    // Inputs and output of the pass: forward x,w -> y; bwd-data dy,w -> dx; bwd-filter x,dy -> dw.
    const Dims4 in1 = rec.pass == Pass::bwd_data ? y : x, in2 = rec.pass == Pass::bwd_filter ? y : w;
    const Dims4 out = rec.pass == Pass::forward ? y : rec.pass == Pass::bwd_data ? x : w;
    const std::uint64_t seed1 = rec.pass == Pass::bwd_data ? seeds.dy : seeds.x;
    const std::uint64_t seed2 = rec.pass == Pass::bwd_filter ? seeds.dy : seeds.w;
    const std::size_t eb = element_bytes(p.fmt), ws_limit = std::size_t(o.workspace_mib * kMiB);
    const std::uint64_t b1 = std::uint64_t(in1.count()) * eb, b2 = std::uint64_t(in2.count()) * eb;
    const std::uint64_t bo = round_up_256(std::uint64_t(out.count()) * eb);
    std::size_t free_b = 0, total_b = 0;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    const std::uint64_t reserve = bo + ws_limit + 512 * kMiB;
    if (free_b < reserve + round_up_256(b1) + round_up_256(b2)) {
        rec.skip_reason = "does not fit in device memory";
        return rec;
    }
    const Rotation inputs({b1, b2}, ctx.dev.l2_or_64mib(), reserve);
    rec.input_sets = inputs.sets();
    fill(inputs.set(0)[0], p.fmt, in1, seed1, ctx.stream);
    fill(inputs.set(0)[1], p.fmt, in2, seed2, ctx.stream);
    inputs.replicate(ctx.stream);
    Buffers b{inputs};
    CHECK(cudaMalloc(&b.out, bo));
    if (ws_limit) CHECK(cudaMalloc(&b.workspace, ws_limit));
    const Descriptors d(s, p, rec.nhwc);
    rec.algo = choose(ctx, d, rec.pass, b, ws_limit, o.find);
    rec.skip_reason = rec.algo.reason;
    if (rec.algo.ok) {
        CHECK(cudaMemsetAsync(b.out, 0xFF, bo, ctx.stream));
        if (const cudnnStatus_t st = enqueue(ctx, d, rec.pass, rec.algo, b, 0); st != CUDNN_STATUS_SUCCESS) {
            rec.skip_reason = std::string("the chosen algorithm failed: ") + cudnnGetErrorString(st);
        } else {
            CHECK(cudaStreamSynchronize(ctx.stream));
            verify(ctx, rec, seeds, b, out, sample_seed, o.samples);
            rec.t = time_runs(
                ctx.stream, [&](std::size_t run) { CHECK(enqueue(ctx, d, rec.pass, rec.algo, b, run)); }, o.run.timing);
            rec.tflops = 2.0 * s.macs() / rec.t.median_s / 1e12;
        }
    }
    CHECK(cudaFree(b.out));
    if (b.workspace) CHECK(cudaFree(b.workspace));
    return rec;
}

void print_progress(const Record& rec, std::size_t index, std::size_t total, double elapsed) {
    std::fprintf(stderr, "[%4zu/%zu %6.1fs] %-40s %s %s %-10s ", index, total, elapsed, rec.shape->label.c_str(),
                 rec.prec->name, layout_name(rec.nhwc), pass_name(rec.pass));
    if (!rec.skip_reason.empty()) {
        std::fprintf(stderr, "skipped: %s\n", rec.skip_reason.c_str());
        return;
    }
    const cudnnMathType_t m = rec.algo.math;
    std::fprintf(stderr, "%9.1f us %7.1f TFLOPS algo %d %s\n", rec.t.median_s * 1e6, rec.tflops, rec.algo.algo,
                 m == CUDNN_FMA_MATH ? "fma" : m == CUDNN_DEFAULT_MATH ? "default" : "tensor-op");
}

int run(const Options& o, const std::vector<Shape>& shapes, const DeviceInfo& dev) {
    const std::uint64_t seed = seed_or_clock(o.run.seed);
    Context ctx;
    ctx.dev = dev;
    CHECK(cudnnCreate(&ctx.handle));
    CHECK(cudaStreamCreateWithFlags(&ctx.stream, cudaStreamNonBlocking));
    CHECK(cudnnSetStream(ctx.handle, ctx.stream));
    CHECK(cudaMalloc(&ctx.d_bad, sizeof(unsigned long long)));
    std::vector<Record> recs;
    const std::size_t total = shapes.size() * o.precisions.size() * o.layouts.size() * o.passes.size();
    const auto t0 = std::chrono::steady_clock::now();
    SplitMix64 seeds{seed};  // three tensor seeds per case, in order
    for (const Shape& s : shapes)
        for (const Prec prec : o.precisions)
            for (const bool nhwc : o.layouts)
                for (const Pass pass : o.passes) {
                    const Seeds case_seeds{seeds.next(), seeds.next(), seeds.next()};
                    const std::size_t index = recs.size() + 1;
                    Record rec;
                    rec.shape = &s;
                    rec.prec = &kPrecs[int(prec)];
                    rec.nhwc = nhwc;
                    rec.pass = pass;
                    recs.push_back(run_case(ctx, o, rec, case_seeds, mix64(seed ^ index)));
                    print_progress(recs.back(), index, total, seconds_since(t0));
                    if (!o.run.json_path.empty())
                        write_report(o.run.json_path, report(o, dev, seed, recs, false), false);
                }
    CHECK(cudaFree(ctx.d_bad));
    CHECK(cudnnDestroy(ctx.handle));
    CHECK(cudaStreamDestroy(ctx.stream));
    return write_report(o.run.json_path, report(o, dev, seed, recs, true));
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_args(argc, argv);
    const std::vector<Shape> shapes = read_shapes(o);
    const DeviceInfo dev = open_device(o.run.device);
    return run_guarded("the references of one case", [&] { return run(o, shapes, dev); });
}
