// tools/roofplan-bench/host_suite.hpp — the host backend: an Eigen FP32 GEMM and STREAM copy/scale/triad on the CPU,
// each checked against a reference before it is timed, written as roofplan-gemm and roofplan-bandwidth reports
// (the same schemas as the CUDA kernels', so `roofplan calibrate` and `roofplan validate` read them unchanged).
//
// GEMM: C = A·B with Eigen (column-major MatrixXf, one thread unless Eigen was built with OpenMP).  Inputs are
// fresh random numbers of magnitude in [0.25, 1] with random signs (never zero); C is filled with NaN before the
// checked run, which must overwrite every element; sampled elements are compared with a double-precision dot
// product:  |c − ref| ≤ γ_k · Σ|a_i·b_i|,  γ_k = k·u / (1 − k·u), u = 2⁻²⁴ (the standard bound for any summation order).
// Then warm-up runs (at least one, for at least warmup_ms), then `repeats` timed runs: median, min, max.
//
// STREAM (McCalpin's kernels, double precision): copy c = a, scale b = s·c, triad a = b + s·c on arrays of at
// least 4 × the last-level cache each, so that every pass comes from DRAM.  Bytes per iteration follow STREAM's
// convention (2 or 3 arrays; write-allocate traffic is not counted).  Each kernel is checked against its
// expression on fresh random non-zero inputs with a NaN-poisoned output before it is timed.
#pragma once

#include "host_info.hpp"

#include <roofplan/detail/checked.hpp>

#include <Eigen/Dense>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace roofplan::bench {

struct GemmShape {
    std::int64_t m = 0, n = 0, k = 0;
    std::string label;
};

/// Shapes of a file in validation/shapes/zoo_gemm.txt's format: "M N K [count] label" per line, '#' comments.
inline std::vector<GemmShape> read_shapes_file(const std::string& file) {
    std::ifstream in(file);
    if (!in) roofplan::detail::fail("cannot open shapes file '", file, "'");
    std::vector<GemmShape> out;
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        line = trim(line.substr(0, line.find('#')));
        if (line.empty()) continue;
        std::istringstream s(line);
        GemmShape g;
        std::int64_t count = 1;
        std::string fourth;
        if (!(s >> g.m >> g.n >> g.k) || g.m < 1 || g.n < 1 || g.k < 1 || g.m > 65536 || g.n > 65536 || g.k > 65536)
            roofplan::detail::fail(file, ":", number, ": expected 'M N K [count] label' with sizes in 1..65536");
        if (s >> fourth) {
            if (!fourth.empty() && std::isdigit(static_cast<unsigned char>(fourth[0]))) {
                count = std::atoll(fourth.c_str());
                std::getline(s, g.label);
            } else {
                std::string rest;
                std::getline(s, rest);
                g.label = fourth + rest;
            }
        }
        if (count != 1) roofplan::detail::fail(file, ":", number, ": the host backend runs count 1 only");
        g.label = trim(g.label);
        out.push_back(g);
    }
    return out;
}

struct Timing {
    double median = 0, min = 0, max = 0;
    int warm_runs = 0;
};

/// Runs `body` for warm-up (>= 1 run and >= warmup_ms), then `repeats` timed runs.
inline Timing time_runs(const std::function<void()>& body, int repeats, double warmup_ms) {
    using clock = std::chrono::steady_clock;
    Timing t;
    const auto start = clock::now();
    do {
        body();
        ++t.warm_runs;
    } while (std::chrono::duration<double, std::milli>(clock::now() - start).count() < warmup_ms);
    std::vector<double> s;
    for (int i = 0; i < repeats; ++i) {
        const auto a = clock::now();
        body();
        s.push_back(std::chrono::duration<double>(clock::now() - a).count());
    }
    std::sort(s.begin(), s.end());
    const std::size_t n = s.size();
    t.median = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    t.min = s.front();
    t.max = s.back();
    return t;
}

/// A random non-zero value, |x| in [0.25, 1], random sign.
template <class Rng>
double nonzero(Rng& rng) {
    std::uniform_real_distribution<double> mag(0.25, 1.0);
    return (rng() & 1u) ? mag(rng) : -mag(rng);
}

struct HostOptions {
    int repeats = 9;
    double warmup_ms = 100;
    std::uint64_t seed = 20261121;
    int samples = 512;  ///< GEMM elements checked against the double reference
    double stream_bytes = 0;  ///< bytes per STREAM array (0: 4 x LLC, at least 64 MiB)
};

/// One roofplan-gemm record for an Eigen FP32 GEMM.
inline json host_gemm_case(const GemmShape& g, const HostOptions& o, std::mt19937_64& rng) {
    const auto m = static_cast<Eigen::Index>(g.m), n = static_cast<Eigen::Index>(g.n), k = static_cast<Eigen::Index>(g.k);
    Eigen::MatrixXf a(m, k), b(k, n), c(m, n);
    for (Eigen::Index j = 0; j < k; ++j)
        for (Eigen::Index i = 0; i < m; ++i) a(i, j) = static_cast<float>(nonzero(rng));
    for (Eigen::Index j = 0; j < n; ++j)
        for (Eigen::Index i = 0; i < k; ++i) b(i, j) = static_cast<float>(nonzero(rng));
    c.setConstant(std::numeric_limits<float>::quiet_NaN());
    c.noalias() = a * b;
    const bool all_written = c.allFinite();
    const double u = std::ldexp(1.0, -24);
    const double kd = static_cast<double>(g.k);
    const double gamma = kd * u / (1.0 - kd * u);
    double max_rel = 0;
    std::uniform_int_distribution<Eigen::Index> row(0, m - 1), col(0, n - 1);
    int checked = 0;
    for (int s = 0; s < o.samples; ++s) {
        const Eigen::Index i = s == 0 ? 0 : s == 1 ? m - 1 : row(rng);
        const Eigen::Index j = s == 0 ? 0 : s == 1 ? n - 1 : col(rng);
        double ref = 0, scale = 0;
        for (Eigen::Index p = 0; p < k; ++p) {
            const double prod = static_cast<double>(a(i, p)) * static_cast<double>(b(p, j));
            ref += prod;
            scale += std::abs(prod);
        }
        const double err = std::abs(static_cast<double>(c(i, j)) - ref) / scale;
        max_rel = std::isfinite(err) ? std::max(max_rel, err) : std::numeric_limits<double>::infinity();
        ++checked;
    }
    const bool verified = all_written && max_rel <= gamma;
    json r = {{"precision", "fp32"}, {"m", g.m}, {"n", g.n}, {"k", g.k}, {"count", 1}, {"label", g.label},
              {"verified", verified}, {"checked_elements", checked}, {"all_elements_written", all_written},
              {"max_rel_error", std::isfinite(max_rel) ? json(max_rel) : json(nullptr)}, {"element_bound", gamma},
              {"bytes_a", 4 * g.m * g.k}, {"bytes_b", 4 * g.k * g.n}, {"bytes_d", 4 * g.m * g.n},
              {"rate_unit", "TFLOPS"}, {"backend", "eigen"}};
    if (!verified) {
        r["note"] = "not timed: the result failed the check";
        return r;
    }
    const Timing t = time_runs([&] { c.noalias() = a * b; }, o.repeats, o.warmup_ms);
    if (!c.allFinite()) roofplan::detail::fail("host GEMM ", g.m, "x", g.n, "x", g.k, ": timed result not finite");
    r["time_s_median"] = t.median;
    r["time_s_min"] = t.min;
    r["time_s_max"] = t.max;
    r["warm_runs"] = t.warm_runs;
    r["tflops"] = 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) / t.median / 1e12;
    return r;
}

/// The three STREAM kernels as roofplan-bandwidth records.  Throws if a kernel's output is wrong.
inline json host_stream_cases(const HostOptions& o, double llc_bytes, std::mt19937_64& rng,
                              const std::function<void(const std::string&)>& progress) {
    double array_bytes = o.stream_bytes > 0 ? o.stream_bytes : std::max(4.0 * llc_bytes, 64.0 * 1048576.0);
    const auto n = static_cast<std::size_t>(array_bytes / sizeof(double));
    array_bytes = static_cast<double>(n * sizeof(double));
    std::unique_ptr<double[]> a(new double[n]), b(new double[n]), c(new double[n]);
    const double scalar = 3.0;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    json out = json::array();
    struct Kernel {
        const char* name;
        int arrays;
        std::function<void()> body;
        std::function<double(std::size_t)> expected;  // element i of the output after one run on fresh inputs
        double* output;
    };
    double *pa = a.get(), *pb = b.get(), *pc = c.get();
    std::vector<double> in1, in2;  // copies of the inputs for the reference
    const std::vector<Kernel> kernels = {
        {"copy", 2, [=] { for (std::size_t i = 0; i < n; ++i) pc[i] = pa[i]; }, [&](std::size_t i) { return pa[i]; }, pc},
        {"scale", 2, [=] { for (std::size_t i = 0; i < n; ++i) pb[i] = scalar * pc[i]; },
         [&](std::size_t i) { return scalar * pc[i]; }, pb},
        {"triad", 3, [=] { for (std::size_t i = 0; i < n; ++i) pa[i] = pb[i] + scalar * pc[i]; },
         [&](std::size_t i) { return in1[i] + scalar * in2[i]; }, pa},
    };
    for (const Kernel& kernel : kernels) {
        if (progress) progress(std::string("stream ") + kernel.name + " (" + std::to_string(n * sizeof(double) >> 20) + " MiB arrays)");
        // Fresh random non-zero inputs, poisoned output.
        for (std::size_t i = 0; i < n; ++i) {
            pa[i] = nonzero(rng);
            pb[i] = nonzero(rng);
            pc[i] = nonzero(rng);
        }
        if (std::string(kernel.name) == "triad") in1.assign(pb, pb + n), in2.assign(pc, pc + n);
        std::fill(kernel.output, kernel.output + n, nan);
        kernel.body();
        double worst = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double want = kernel.expected(i);
            const double err = std::abs(kernel.output[i] - want) / std::abs(want);
            worst = std::isfinite(err) ? std::max(worst, err) : std::numeric_limits<double>::infinity();
        }
        in1.clear();
        in1.shrink_to_fit();
        in2.clear();
        in2.shrink_to_fit();
        // Exact but for one rounding when the compiler fuses b + s·c into an FMA.
        if (!(worst <= 4 * std::numeric_limits<double>::epsilon()))
            roofplan::detail::fail("host STREAM ", kernel.name, " produced wrong results (relative error ", std::to_string(worst), ")");
        const Timing t = time_runs(kernel.body, o.repeats, o.warmup_ms);
        const double bytes = kernel.arrays * array_bytes;
        out.push_back({{"kernel", kernel.name}, {"bytes_per_iteration", bytes}, {"array_bytes", array_bytes},
                       {"median_s", t.median}, {"min_s", t.min}, {"max_s", t.max}, {"gb_per_s", bytes / t.median / 1e9},
                       {"warm_runs", t.warm_runs}, {"verified", true}, {"max_rel_error", worst}});
    }
    return out;
}

}  // namespace roofplan::bench
