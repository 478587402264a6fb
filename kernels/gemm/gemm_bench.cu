// kernels/gemm/gemm_bench.cu — roofplan-gemm: dense matrix-product (GEMM) throughput through cuBLASLt.
//
// One cublasLtMatmul per case, D = op(A) op(B) in the TN column-major layout (A stored K x M and transposed, B
// stored K x N; a strided batch of `count`), fp32, tf32, fp16, bf16 (FP32 accumulation) and int8 (INT32), with the
// heuristic's first algorithm and a 32 MiB workspace.  Every case is checked before any is timed: fresh random
// inputs exact in their format, D poisoned, every element written and finite, --samples elements and the corners
// against dot products in double on the host, within per-element and norm-wise bounds that no correct evaluation
// order exceeds (int8 exact).  TFLOPS = 2 M N K count / median / 1e12.  The method in detail: docs/kernels.md.

#include <cublasLt.h>
#include <cublas_api.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <bit>
#include <cstddef>
#include <cstring>
#include <utility>

#include "../common/harness.hpp"
#include "../common/gemm_shapes.hpp"

namespace {

using namespace roofplan::bench;
namespace tool = roofplan::io::schema::tool;
namespace prec = roofplan::io::schema::precision;

constexpr std::size_t kWorkspaceBytes = 32 * kMiB;  // cuBLASLt workspace, offered to the heuristic and the runs
constexpr int kHeuristicRequest = 32;               // answers asked of cublasLtMatmulAlgoGetHeuristic

// ---- Precisions --------------------------------------------------------------------------------------

enum class Prec { fp32, tf32, fp16, bf16, int8 };
enum class Fmt { f32, f16, bf16, i8, i32 };  // element formats of A, B and D

// A precision: cuBLASLt's types, the formats of A, B (generated with `mantissa_bits` random fraction bits under
// `exponent_bias`) and D, and the bounds of the check (docs/kernels.md): each checked element within
// (floor + (K + 2) unit) x sum_k |a_k b_k|, and ||d - ref||_2 / ||ref||_2 within norm (0 for both: exact).
struct PrecSpec {
    Prec prec;
    const char* name;
    cudaDataType_t ab_type, d_type, scale_type;
    cublasComputeType_t compute;
    Fmt in, out;
    unsigned ab_bytes, d_bytes;
    int mantissa_bits, exponent_bias;
    const char* rate_unit;
    double floor, unit, norm;
    double element_bound(std::int64_t k) const { return floor + (double(k) + 2.0) * unit; }
    // fp32: several times its rounding on random data, below TF32's ~3e-4 for K up to about 2^17.
    double norm_limit(std::int64_t k) const {
        return prec == Prec::fp32 ? std::max(1e-6, 8.0 * 0x1p-24 * std::sqrt(double(k))) : norm;
    }
};

const PrecSpec kSpecs[] = {
    // by Prec; the matrix units' accumulation may err four times FP32's rounding
    {Prec::fp32, prec::fp32.data(), CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F, Fmt::f32, Fmt::f32, 4, 4,
     23, 127, "TFLOPS", 0, 0x1p-24, 0},
    {Prec::tf32, prec::tf32.data(), CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, Fmt::f32,
     Fmt::f32, 4, 4, 23, 127, "TFLOPS", 0x1p-9, 0x1p-22, 4e-3},
    {Prec::fp16, prec::fp16.data(), CUDA_R_16F, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, Fmt::f16, Fmt::f16, 2, 2,
     10, 15, "TFLOPS", 0x1p-10, 0x1p-22, 2e-3},
    {Prec::bf16, prec::bf16.data(), CUDA_R_16BF, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F, Fmt::bf16, Fmt::bf16, 2,
     2, 7, 127, "TFLOPS", 0x1p-7, 0x1p-22, 1.6e-2},
    {Prec::int8, prec::int8.data(), CUDA_R_8I, CUDA_R_32I, CUDA_R_32I, CUBLAS_COMPUTE_32I, Fmt::i8, Fmt::i32, 1, 4, 0,
     0, "TOPS", 0, 0, 0},
};
const PrecSpec& spec_of(Prec p) { return kSpecs[int(p)]; }

// cuBLAS's names of the types (reported).
const char* type_name(cudaDataType_t t) {
    return t == CUDA_R_32F ? "CUDA_R_32F" : t == CUDA_R_16F ? "CUDA_R_16F" : t == CUDA_R_16BF ? "CUDA_R_16BF"
                                                                         : t == CUDA_R_8I ? "CUDA_R_8I" : "CUDA_R_32I";
}
const char* compute_name(cublasComputeType_t c) {
    return c == CUBLAS_COMPUTE_32F ? "CUBLAS_COMPUTE_32F" : c == CUBLAS_COMPUTE_32I ? "CUBLAS_COMPUTE_32I"
                                                                                    : "CUBLAS_COMPUTE_32F_FAST_TF32";
}

// ---- Host data -----------------------------------------------------------------------------------------

// `elements` random inputs in the format's bytes (docs/kernels.md).
std::vector<unsigned char> random_inputs(std::size_t elements, const PrecSpec& s, SplitMix64& rng) {
    static_assert(std::endian::native == std::endian::little, "the low bytes of `bits` are the element");
    std::vector<unsigned char> out(elements * s.ab_bytes);
    for (std::size_t i = 0; i < elements; ++i) {
        const std::uint64_t r = rng.next();
        std::uint32_t bits = 0;
        if (s.in == Fmt::i8) {
            const int v = int(r >> 60);                                    // 0..15
            bits = std::uint32_t(std::uint8_t(std::int8_t(v < 8 ? v - 8 : v - 7)));  // -8..-1, 1..8
        } else {  // sign, exponent bias - e with e in 1..4, mantissa_bits random fraction bits
            const std::uint32_t e = 1 + std::uint32_t((r >> 61) & 3u);
            bits = (std::uint32_t(r >> 63) << (8 * s.ab_bytes - 1)) |
                   ((std::uint32_t(s.exponent_bias) - e) << s.mantissa_bits) |
                   std::uint32_t(r & ((std::uint64_t{1} << s.mantissa_bits) - 1));
        }
        std::memcpy(out.data() + i * s.ab_bytes, &bits, s.ab_bytes);
    }
    return out;
}

// Element `index` of an array of format `f` (every fp16 and bf16 value is exact in float).
double value_at(const unsigned char* base, std::size_t index, Fmt f) {
    auto load = [&](auto zero) {
        std::memcpy(&zero, base + index * sizeof(zero), sizeof(zero));
        return zero;
    };
    switch (f) {
        case Fmt::f32: return load(0.0f);
        case Fmt::f16: return __half2float(__half(__half_raw{load(std::uint16_t{0})}));
        case Fmt::bf16: return __bfloat162float(__nv_bfloat16(__nv_bfloat16_raw{load(std::uint16_t{0})}));
        case Fmt::i8: return load(std::int8_t{0});
        case Fmt::i32: return load(std::int32_t{0});
    }
    return 0.0;
}

// ---- Cases -------------------------------------------------------------------------------------------

// The cuBLASLt objects of one case, built once (verification pass) and reused by the timing pass.
struct Plan {
    cublasLtMatmulDesc_t desc = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, d = nullptr;
    cublasLtMatmulHeuristicResult_t chosen{};  // the heuristic's first answer: algorithm, its workspace and waves
    int heuristics = 0;  // answers returned by cublasLtMatmulAlgoGetHeuristic (of kHeuristicRequest asked)
};

struct Case {
    std::size_t index = 0;
    const PrecSpec* spec = nullptr;
    GemmShape shape;
    std::uint64_t elems_a = 0, elems_b = 0, elems_d = 0, bytes_a = 0, bytes_b = 0, bytes_d = 0;
    std::string skip_reason;  // non-empty: not run
    Plan plan;
    ErrorStats v;
    Timing t;
    int input_sets = 1;
    double rate = 0;  // TFLOPS or TOPS
    std::string note;
};

// ---- Command line ------------------------------------------------------------------------------------

struct Options {
    RunOptions run;
    std::vector<Prec> precisions;
    std::vector<GemmShape> shapes;
    int samples = 2048;
};

Options parse_args(int argc, char** argv) {
    Options o;
    Cli cli(tool::gemm.data(), "Dense matrix-product (GEMM) throughput through cuBLASLt, for fp32, tf32, fp16, bf16 "
                               "and int8.\nEvery case is checked against a CPU reference before any case is timed.");
    cli.option("--precision", "LIST", "comma-separated fp32, tf32, fp16, bf16, int8, or all (default all)",
               [&o](std::string_view v) {
                   add_choices(o.precisions, v, {prec::fp32, prec::tf32, prec::fp16, prec::bf16, prec::int8},
                               "precision", "--precision");
               });
    add_shape_options(cli, o.shapes, true);
    cli.number("--samples", "random output elements checked per case, plus corners", o.samples, 1, 1000000);
    cli.common(o.run).footer(
        "Layout: TN column-major (A stored K x M and transposed, B stored K x N), cuBLASLt's heuristic\n"
        "algorithm with a 32 MiB workspace.  int8 needs M and K to be multiples of 4 (other int8 cases are\n"
        "skipped).\n");
    cli.parse(argc, argv);
    if (o.precisions.empty()) o.precisions = {Prec::fp32, Prec::tf32, Prec::fp16, Prec::bf16, Prec::int8};
    default_shapes(o.shapes);
    return o;
}

// ---- cuBLASLt plan -------------------------------------------------------------------------------------

struct Context {
    cublasLtHandle_t lt = nullptr;
    cudaStream_t stream = nullptr;
    void* workspace = nullptr;
};

// A field of the algorithm's configuration (cublasLtMatmulAlgoConfigAttributes_t), or -1 where unreadable.
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
    CHECK(cublasLtMatrixLayoutCreate(&l, type, std::uint64_t(rows), std::uint64_t(cols), ld));
    if (count > 1) {
        const std::int32_t batch = std::int32_t(count);
        const std::int64_t stride = rows * cols;
        CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &batch, sizeof batch));
        CHECK(cublasLtMatrixLayoutSetAttribute(l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
    return l;
}

void destroy_plan(Plan& p) {
    for (cublasLtMatrixLayout_t* l : {&p.a, &p.b, &p.d})
        if (*l) CHECK(cublasLtMatrixLayoutDestroy(std::exchange(*l, nullptr)));
    if (p.desc) CHECK(cublasLtMatmulDescDestroy(std::exchange(p.desc, nullptr)));
}

// Builds the descriptors and asks the heuristic.  Returns false (with the reason) when cuBLASLt has no
// algorithm for the case; any other failure exits.
bool make_plan(Case& c, const Context& ctx) {
    const PrecSpec& s = *c.spec;
    const GemmShape& sh = c.shape;
    Plan& p = c.plan;
    CHECK(cublasLtMatmulDescCreate(&p.desc, s.compute, s.scale_type));
    const std::int32_t trans_a = CUBLAS_OP_T, trans_b = CUBLAS_OP_N;
    CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &trans_a, sizeof trans_a));
    CHECK(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &trans_b, sizeof trans_b));
    p.a = make_layout(s.ab_type, sh.k, sh.m, sh.k, sh.count);  // stored K x M, used transposed
    p.b = make_layout(s.ab_type, sh.k, sh.n, sh.k, sh.count);  // stored K x N
    p.d = make_layout(s.d_type, sh.m, sh.n, sh.m, sh.count);   // M x N

    cublasLtMatmulPreference_t pref = nullptr;
    CHECK(cublasLtMatmulPreferenceCreate(&pref));
    const std::uint64_t ws = kWorkspaceBytes;
    CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    // An array: a std::vector of these crashes the front end of nvcc 13.0 under -std=c++20.
    cublasLtMatmulHeuristicResult_t results[kHeuristicRequest] = {};
    int returned = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(ctx.lt, p.desc, p.a, p.b, p.d, p.d, pref,
                                                             kHeuristicRequest, results, &returned);
    CHECK(cublasLtMatmulPreferenceDestroy(pref));
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && returned == 0)) {
        c.skip_reason = std::string("cuBLASLt has no algorithm for it (cublasLtMatmulAlgoGetHeuristic: ") +
                        (st == CUBLAS_STATUS_SUCCESS ? "0 results" : cublasGetStatusName(st)) + ")";
        destroy_plan(p);
        return false;
    }
    check(st, "cublasLtMatmulAlgoGetHeuristic", __FILE__, __LINE__);
    check(results[0].state, "cublasLtMatmulAlgoGetHeuristic (first result's state)", __FILE__, __LINE__);
    p.heuristics = returned;
    p.chosen = results[0];
    return true;
}

// Queues one product D = op(A) op(B) on ctx.stream.
void enqueue_matmul(const Case& c, const Context& ctx, const void* a, const void* b, void* d) {
    const float one_f = 1.0f, zero_f = 0.0f;
    const std::int32_t one_i = 1, zero_i = 0;
    const bool int_scale = c.spec->scale_type == CUDA_R_32I;
    const void* alpha = int_scale ? static_cast<const void*>(&one_i) : static_cast<const void*>(&one_f);
    const void* beta = int_scale ? static_cast<const void*>(&zero_i) : static_cast<const void*>(&zero_f);
    CHECK(cublasLtMatmul(ctx.lt, c.plan.desc, alpha, a, c.plan.a, b, c.plan.b, beta, d, c.plan.d, d, c.plan.d,
                                &c.plan.chosen.algo, ctx.workspace, kWorkspaceBytes, ctx.stream));
}

// ---- Verification ------------------------------------------------------------------------------------

// A and B of the case, drawn from its own seed: the timing pass draws again what the verification pass checked.
std::pair<std::vector<unsigned char>, std::vector<unsigned char>> case_inputs(const Case& c, std::uint64_t seed) {
    SplitMix64 rng{case_seed(seed, c.index)};
    std::vector<unsigned char> a = random_inputs(std::size_t(c.elems_a), *c.spec, rng);
    return {std::move(a), random_inputs(std::size_t(c.elems_b), *c.spec, rng)};
}

std::string position_text(const Case& c, std::uint64_t linear) {
    const std::uint64_t mn = std::uint64_t(c.shape.m) * std::uint64_t(c.shape.n);
    const std::uint64_t batch = linear / mn, rest = linear % mn;
    const std::uint64_t j = rest / std::uint64_t(c.shape.m), i = rest % std::uint64_t(c.shape.m);
    std::string t = "D(" + std::to_string(i) + ", " + std::to_string(j) + ")";
    if (c.shape.count > 1) t += " of batch " + std::to_string(batch);
    return t;
}

// Every element of D written (no poison) and finite; then the checked positions (`samples` random elements plus the
// corners of the first and last matrices, or every element when there are not many more than that) against full dot
// products in double (exact for int8, whose bound is 0), and the norm-wise error (docs/kernels.md).  Fills c.v and
// c.note.  Returns an empty string when the output passes, else what is wrong.
std::string check_output(Case& c, const std::vector<unsigned char>& ha, const std::vector<unsigned char>& hb,
                         const std::vector<unsigned char>& hd, std::uint64_t seed, int samples) {
    for (std::uint64_t i = 0; i < c.elems_d; ++i)
        if (const double v = value_at(hd.data(), std::size_t(i), c.spec->out);
            c.spec->out == Fmt::i32 && v == kPoisonI32)
            return position_text(c, i) + " was not written (it still holds the poison 0x7f7f7f7f)";
        else if (!std::isfinite(v))
            return position_text(c, i) +
                   (std::isnan(v) ? " is NaN (not written? the output was poisoned with NaN)" : " is infinite");
    const PrecSpec& s = *c.spec;
    const std::uint64_t m = std::uint64_t(c.shape.m), n = std::uint64_t(c.shape.n), k = std::uint64_t(c.shape.k);
    std::vector<std::uint64_t> corners;  // linear indices into D
    for (const std::uint64_t base : {std::uint64_t{0}, std::uint64_t(c.shape.count - 1) * m * n})
        corners.insert(corners.end(), {base, base + m - 1, base + m * n - m, base + m * n - 1});
    const std::vector<std::uint64_t> pos = sample_positions(c.elems_d, corners, std::uint64_t(samples) + 8,
                                                            SplitMix64{case_seed(seed, c.index) ^ 0x5DEECE66Dull});
    c.v = ErrorStats{s.element_bound(c.shape.k), s.norm_limit(c.shape.k)};
    for (const std::uint64_t lin : pos) {
        const std::uint64_t batch = lin / (m * n), rest = lin % (m * n), j = rest / m, i = rest % m;
        const std::size_t a0 = std::size_t(batch * m * k + i * k), b0 = std::size_t(batch * n * k + j * k);
        double ref = 0, abs_sum = 0;  // abs_sum > 0: the inputs are never zero
        for (std::size_t kk = 0; kk < k; ++kk) {
            const double prod = value_at(ha.data(), a0 + kk, s.in) * value_at(hb.data(), b0 + kk, s.in);
            ref += prod;
            abs_sum += std::fabs(prod);
        }
        const double got = value_at(hd.data(), std::size_t(lin), s.out), err = std::fabs(got - ref);
        if (c.v.add(got, ref, abs_sum)) continue;
        char buf[320];
        if (c.v.element_bound == 0)
            std::snprintf(buf, sizeof buf, " is %.0f, expected %.0f [exact match required]", got, ref);
        else
            std::snprintf(buf, sizeof buf, " is %.9g, expected %.17g: |error| %.3g is %.3g x sum|a b| (%.6g), over the "
                          "bound %.3g [relative tolerance exceeded]", got, ref, err, err / abs_sum, abs_sum,
                          c.v.element_bound);
        return position_text(c, lin) + buf;
    }
    if (!(c.v.rel_l2_error() <= c.v.norm_limit)) {
        char buf[256];
        std::snprintf(buf, sizeof buf, "the norm-wise error ||d - ref|| / ||ref|| over %zu checked elements is %.3g, "
                      "over the limit %.3g%s", pos.size(), c.v.rel_l2_error(), c.v.norm_limit,
                      s.prec == Prec::fp32 ? " (TF32 rounding gives about 3e-4)" : "");
        return buf;
    }
    if (s.prec == Prec::tf32 && c.v.rel_l2_error() < 2e-5 && c.shape.k < (1 << 20))
        c.note = "the error is FP32-sized: the product shows no sign of TF32 rounding";
    return {};
}

// Runs the case once on fresh random inputs with a poisoned output and checks it (docs/kernels.md), then
// times it on the same inputs.  Poison: all-ones bytes are a NaN in fp32, fp16 and bf16; int32 gets 0x7f7f7f7f,
// which no int8 product of these inputs can reach (|d| <= 64 K <= 2^30).
void verify_case(Case& c, const Context& ctx, std::uint64_t seed, int samples) {
    const auto [ha, hb] = case_inputs(c, seed);
    const std::vector<unsigned char> hd =
        run_checked({{ha.data(), c.bytes_a}, {hb.data(), c.bytes_b}}, c.bytes_d, c.spec->out == Fmt::i32 ? 0x7f : 0xFF,
                    ctx.stream, [&](std::span<void* const> in, void* d) { enqueue_matmul(c, ctx, in[0], in[1], d); });
    const std::string what = check_output(c, ha, hb, hd, seed, samples);
    if (what.empty()) return;
    std::fprintf(stderr, "%s: verification FAILED for %s %s%s%s: %s. Nothing was timed.\n", g_program, c.spec->name,
                 shape_text(c.shape).c_str(), c.shape.label.empty() ? "" : " ", c.shape.label.c_str(), what.c_str());
    std::exit(kExitVerifyFailed);
}

void measure_case(Case& c, const Context& ctx, const DeviceInfo& dev, const Options& o, std::uint64_t seed) {
    const auto [ha, hb] = case_inputs(c, seed);
    c.t = time_rotated({{ha.data(), c.bytes_a}, {hb.data(), c.bytes_b}}, c.bytes_d, dev.l2_or_64mib(), ctx.stream,
                       o.run.timing, c.input_sets,
                       [&](std::span<void* const> in, void* d) { enqueue_matmul(c, ctx, in[0], in[1], d); });
    c.rate =
        2.0 * double(c.shape.m) * double(c.shape.n) * double(c.shape.k) * double(c.shape.count) / c.t.median_s / 1e12;
}

// ---- Report ------------------------------------------------------------------------------------------

Json shape_json(const Case& c) {
    Json j;
    j.set(field::precision, c.spec->name).set(field::m, c.shape.m).set(field::n, c.shape.n).set(field::k, c.shape.k);
    return j.set(field::count, c.shape.count).set(field::label, c.shape.label);
}

Json record(const Case& c) {
    const Plan& p = c.plan;
    Json j = shape_json(c);
    j.merge(timing_json(c.t)).set(field::tflops, c.rate).set(field::rate_unit, c.spec->rate_unit);
    j.set(field::verified, true).set(field::all_elements_written, true).merge(c.v.json());
    const cublasLtMatmulAlgo_t& a = p.chosen.algo;
    j.set(field::algo_heuristics, p.heuristics).set(field::algo_index, 0);
    j.set(field::algo_id, algo_config<std::int32_t>(a, CUBLASLT_ALGO_CONFIG_ID));
    j.set(field::tile_id, algo_config<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_TILE_ID));
    j.set(field::stages_id, algo_config<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_STAGES_ID));
    j.set(field::splitk, algo_config<std::int32_t>(a, CUBLASLT_ALGO_CONFIG_SPLITK_NUM));
    j.set(field::reduction_scheme, algo_config<std::uint32_t>(a, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME));
    j.set(field::cluster_shape_id, algo_config<std::uint16_t>(a, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID));
    j.set(field::algo_workspace_bytes, p.chosen.workspaceSize).set(field::waves, double(p.chosen.wavesCount));
    j.set(field::input_sets, c.input_sets).set(field::bytes_a, c.bytes_a).set(field::bytes_b, c.bytes_b);
    j.set(field::bytes_d, c.bytes_d).set(field::compute_type, compute_name(c.spec->compute));
    j.set(field::ab_type, type_name(c.spec->ab_type)).set(field::d_type, type_name(c.spec->d_type));
    j.set(field::scale_type, type_name(c.spec->scale_type));
    return j.set(field::note, c.note.empty() ? std::optional<std::string>() : c.note);
}

// The table on stderr and the JSON report: the same rows.
int report(const Options& o, const DeviceInfo& dev, std::uint64_t seed, const std::vector<Case>& cases) {
    std::vector<Json> results, skipped;
    for (const Case& c : cases)
        if (c.skip_reason.empty()) results.push_back(record(c));
        else skipped.push_back(shape_json(c).set(field::reason, c.skip_reason));
    print_device_line(dev);
    const TimingOptions& t = o.run.timing;
    std::fprintf(stderr, ", cuBLASLt %s\n  TN layout, heuristic algorithm #0, 32 MiB workspace; %d ms + %d warm-up "
                 "runs, %d timed runs per case; seed %llu\n  every case verified before timing (all elements written; "
                 "sampled elements vs CPU)\n\n", library_version_string(cublasLtGetVersion()).c_str(), t.warmup_ms,
                 t.warmup, t.repeats, static_cast<unsigned long long>(seed));
    const std::vector<Column> shape = {{field::precision, "prec", -5}, {field::m, "M", 6, "%.0f"},
                                       {field::n, "N", 6, "%.0f"}, {field::k, "K", 6, "%.0f"},
                                       {field::count, "count", 5, "%.0f"}};
    std::vector<Column> columns = shape;
    columns.insert(columns.end(),
                   {{field::input_sets, "sets", 4, "%.0f"}, {field::time_s_median, "median us", 10, "%.2f", 1e6},
                    {field::time_s_min, "min us", 10, "%.2f", 1e6}, {field::time_s_max, "max us", 10, "%.2f", 1e6},
                    {field::tflops, "T(FL)OPS", 9, "%.1f"}, {field::max_rel_error, "max rel", 9, "%.2e"},
                    {field::rel_l2_error, "rel l2", 9, "%.2e"}, {field::algo_heuristics, "algos", 5, "%.0f"},
                    {field::algo_id, "id", 4, "%.0f"}, {field::tile_id, "tile", 4, "%.0f"},
                    {field::host_kept_ahead, "ahead", 5}, {field::label, "label", -1}, {field::note, "note", -1}});
    print_rows(results, columns);
    if (!skipped.empty()) {
        std::fprintf(stderr, "\n  skipped:\n");
        columns = shape;
        columns.insert(columns.end(), {{field::label, "label", -1}, {field::reason, "reason", -1}});
        print_rows(skipped, columns);
    }
    Json prov = provenance(o.run, environment({"NVIDIA_TF32_OVERRIDE", "CUBLAS_EMULATION_STRATEGY",
                                               "CUBLASLT_LOG_LEVEL", "CUBLASLT_LOG_MASK", "CUBLAS_WORKSPACE_CONFIG",
                                               "CUDA_MODULE_LOADING", "CUDA_VISIBLE_DEVICES"}));
    prov.set(field::cublaslt_version, library_version_string(cublasLtGetVersion()));
    prov.set(field::cublaslt_version_code, cublasLtGetVersion());
    prov.set(field::cublas_header_version, library_version_string(CUBLAS_VERSION));
    std::string precisions;
    for (const Prec p : o.precisions) precisions += std::string(precisions.empty() ? "" : ",") + spec_of(p).name;
    Json config;
    config.set(field::precisions, precisions).set(field::warmup, t.warmup);
    config.set(field::warmup_ms, t.warmup_ms).set(field::repeats, t.repeats);
    config.set(field::seed, seed).set(field::samples, o.samples).set(field::workspace_bytes, kWorkspaceBytes);
    config.set(field::heuristic_results_requested, kHeuristicRequest).set(field::algo_index_used, 0);
    for (const auto& [k, text] : roofplan::io::schema::conventions::gemm) config.set(k, text);
    Json doc = report_head(tool::gemm, prov, dev, config);
    return write_report(o.run.json_path,
                        doc.records(key::results, results).records(key::skipped, skipped).text(0) + "\n");
}

// ---- The run -----------------------------------------------------------------------------------------

// Sizes in elements and bytes, int8's layout rules; returns what does not fit in `free_bytes` ("" if it does).
// The sizes are counted in double first: a shape too large for memory is too large for 64 bits too.
std::string size_case(Case& c, std::uint64_t free_bytes, int device) {
    const GemmShape& s = c.shape;
    const double a = double(s.m) * double(s.k) * double(s.count), b = double(s.n) * double(s.k) * double(s.count);
    const double d = double(s.m) * double(s.n) * double(s.count);
    const double need = (a + b) * c.spec->ab_bytes + d * c.spec->d_bytes + 3 * 256;
    if (c.spec->prec == Prec::int8 && (s.m % 4 != 0 || s.k % 4 != 0))
        c.skip_reason = "int8 (cuBLASLt IMMA, TN column-major) needs M and K to be multiples of 4";
    else if (c.spec->prec == Prec::int8 && s.k > (std::int64_t{1} << 24))
        c.skip_reason = "int8 with K > 2^24: the int32 result of these inputs could reach the poison value";
    if (!c.skip_reason.empty()) return {};
    if (need > double(free_bytes)) {
        char buf[512];
        std::snprintf(buf, sizeof buf, "%s %s (from %s) needs %.1f MiB of device memory (A %.1f, B %.1f, D %.1f MiB), "
                      "but only %.1f MiB are free on device %d after the 32 MiB workspace", c.spec->name,
                      shape_text(s).c_str(), s.origin.c_str(), need / double(kMiB), a * c.spec->ab_bytes / double(kMiB),
                      b * c.spec->ab_bytes / double(kMiB), d * c.spec->d_bytes / double(kMiB),
                      double(free_bytes) / double(kMiB), device);
        return buf;
    }
    c.elems_a = std::uint64_t(a), c.elems_b = std::uint64_t(b), c.elems_d = std::uint64_t(d);
    c.bytes_a = c.elems_a * c.spec->ab_bytes, c.bytes_b = c.elems_b * c.spec->ab_bytes;
    c.bytes_d = c.elems_d * c.spec->d_bytes;
    return {};
}

// The cases, precision by precision and shapes in command-line order; exits when one does not fit.
std::vector<Case> make_cases(const Options& o, const DeviceInfo& dev) {
    std::size_t free_bytes = 0, total_bytes = 0;
    CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
    std::vector<Case> cases;
    std::vector<std::string> too_big;
    for (const Prec p : o.precisions)
        for (const GemmShape& sh : o.shapes) {
            Case c;
            c.index = cases.size();
            c.spec = &spec_of(p);
            c.shape = sh;
            if (std::string why = size_case(c, free_bytes, dev.index); !why.empty()) too_big.push_back(why);
            if (!c.skip_reason.empty())
                std::fprintf(stderr, "%s: warning: skipping %s %s: %s\n", g_program, c.spec->name,
                             shape_text(c.shape).c_str(), c.skip_reason.c_str());
            cases.push_back(c);
        }
    for (const std::string& t : too_big) std::fprintf(stderr, "%s: error: %s\n", g_program, t.c_str());
    if (!too_big.empty()) usage_error("choose smaller shapes (nothing was run)");
    if (std::all_of(cases.begin(), cases.end(), [](const Case& c) { return !c.skip_reason.empty(); }))
        usage_error("every requested case is skipped; nothing to run");
    if (const char* v = std::getenv("NVIDIA_TF32_OVERRIDE");
        v != nullptr && std::string_view(v) == "0" &&
        std::find(o.precisions.begin(), o.precisions.end(), Prec::tf32) != o.precisions.end())
        std::fprintf(stderr, "%s: warning: NVIDIA_TF32_OVERRIDE=0 is set, which turns TF32 off: the tf32 cases will "
                     "run in plain FP32\n", g_program);
    return cases;
}

int run(const Options& o, const DeviceInfo& dev) {
    Context ctx;
    CHECK(cublasLtCreate(&ctx.lt));
    CHECK(cudaStreamCreate(&ctx.stream));
    CHECK(cudaMalloc(&ctx.workspace, kWorkspaceBytes));
    std::vector<Case> cases = make_cases(o, dev);
    const std::uint64_t seed = seed_or_clock(o.run.seed);
    for (Case& c : cases) {  // pass 1: verify every case
        if (!c.skip_reason.empty()) continue;
        if (!make_plan(c, ctx)) {
            std::fprintf(stderr, "%s: warning: skipping %s %s: %s\n", g_program, c.spec->name,
                         shape_text(c.shape).c_str(), c.skip_reason.c_str());
            continue;
        }
        verify_case(c, ctx, seed, o.samples);
        std::fprintf(stderr, "%s: verified %s %s: %llu elements checked, max rel error %.3g, rel l2 error %.3g\n",
                     g_program, c.spec->name, shape_text(c.shape).c_str(), static_cast<unsigned long long>(c.v.checked),
                     c.v.max_rel_error, c.v.rel_l2_error());
    }
    if (std::all_of(cases.begin(), cases.end(), [](const Case& c) { return !c.skip_reason.empty(); })) {
        std::fprintf(stderr, "%s: error: cuBLASLt offered an algorithm for none of the cases\n", g_program);
        return kExitCudaError;
    }
    for (Case& c : cases) {  // pass 2: time every case
        if (!c.skip_reason.empty()) continue;
        measure_case(c, ctx, dev, o, seed);
        std::fprintf(stderr, "%s: timed %s %s: median %.2f us, %.1f %s%s\n", g_program, c.spec->name,
                     shape_text(c.shape).c_str(), c.t.median_s * 1e6, c.rate, c.spec->rate_unit,
                     fell_behind(c.t.host_kept_ahead));
    }
    for (Case& c : cases) destroy_plan(c.plan);
    CHECK(cudaFree(ctx.workspace));
    CHECK(cudaStreamDestroy(ctx.stream));
    CHECK(cublasLtDestroy(ctx.lt));
    return report(o, dev, seed, cases);
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse_args(argc, argv);
    const DeviceInfo dev = open_device(o.run.device);
    return run_guarded("the host keeps one case's A, B and D", [&] { return run(o, dev); });
}
