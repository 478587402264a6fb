// Calibration (calibration/fit.hpp) on samples read from micro-benchmark reports (io/reports.hpp): the fit recovers
// known parameters, reproduces the recorded H200/H100 runs within the reported residuals, and rejects bad input.
#include <roofplan/calibration/fit.hpp>
#include <roofplan/io/conv_shapes.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/io/operators.hpp>
#include <roofplan/io/reports.hpp>
#include <roofplan/models/zoo.hpp>
#include <roofplan/runtime/runtime.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

using namespace roofplan;

namespace {
/// A kernel class's large-size rate on a GPU as a fraction of the GPU's bandwidth (the memory and SM-side terms
/// together, on 2-byte elements unless told), as the roofline times it.
double streamed(const Device& d, const EfficiencyProfile& p, KernelClass c, double element_bytes = 2) {
    return 1.0 / (Roofline(d, p, MathClass::bf16_tensor).stream_time(c, 0, 1.0, 1.0 / element_bytes).memory_s * d.bandwidth_gb_s * 1e9);
}

/// The samples of reports given as (file, JSON); every report must be a micro-benchmark the fitter takes.
Measurements samples_of(const std::vector<std::pair<std::string, io::json>>& reports) {
    Measurements out;
    for (const auto& [file, report] : reports) {
        const auto read = io::read_reports(file, report);
        io::require_tools(read, {io::report_names::tool::gemm, io::report_names::tool::conv,
                                 io::report_names::tool::bandwidth});
        append(out, io::merged(read));
    }
    return out;
}
io::json stream_record(const char* kernel, double gb_per_s) {
    const double bytes = 1 << 30;
    return {{"kernel", kernel}, {"bytes_per_iteration", bytes}, {"median_s", bytes / (gb_per_s * 1e9)},
            {"gb_per_s", gb_per_s}};
}
io::json synthetic_gemm(const Device& d, double efficiency, double fixed_s) {
    io::json results = io::json::array();
    const EfficiencyProfile p = default_profile(d);
    for (int size : {512, 1024, 2048, 4096, 8192})
        for (const char* precision : {"bf16", "fp32"}) {
            const MathClass m = std::string(precision) == "bf16" ? MathClass::bf16_tensor : MathClass::fp32;
            const double s = size;
            const double t = 2 * s * s * s * Roofline(d, p, m).gemm_slowdown(s, s, s, 1) / (d.peak[m] * 1e12 * efficiency) + fixed_s;
            results.push_back({{"precision", precision}, {"m", size}, {"n", size}, {"k", size}, {"count", 1},
                               {"time_s_median", t}, {"verified", true}});
        }
    results.push_back({{"precision", "bf16"}, {"m", 64}, {"n", 64}, {"k", 64}, {"count", 1}, {"time_s_median", 1.0},
                       {"verified", false}});  // an unverified record never counts
    return {{"tool", "roofplan-gemm"}, {"provenance", {{"date_utc", "synthetic"}}}, {"results", results}};
}
}  // namespace

TEST_CASE("calibration recovers the efficiency and fixed cost that generated the measurements") {
    const Device& d = find_device("h200");
    const io::json bw = {{"tool", "roofplan-bandwidth"},
                         {"results", {stream_record("copy", 0.8 * 4800), stream_record("triad", 0.8 * 4800),
                                      stream_record("memcpy_d2d", 4700)}}};
    const calibration::Calibration c = calibration::fit(samples_of({{"gemm.json", synthetic_gemm(d, 0.73, 5e-6)}, {"bw.json", bw}}), d);
    CHECK(c.profile.gemm_efficiency(MathClass::bf16_tensor) == doctest::Approx(0.73).epsilon(1e-6));
    CHECK(c.profile.gemm_efficiency(MathClass::fp32) == doctest::Approx(0.73).epsilon(1e-6));
    CHECK(c.profile.memory == doctest::Approx(0.8));  // memcpy is the reference, not a fitted kernel
    for (const calibration::FitQuality& q : c.quality) {
        CHECK(q.worst_rel_error < 1e-6);
        if (q.what != "memory") {
            CHECK(q.samples == 5);
            CHECK(q.fixed_s == doctest::Approx(5e-6).epsilon(1e-4));
        }
    }
    CHECK(c.sources == std::vector<std::string>{"gemm.json (roofplan-gemm, synthetic)", "bw.json (roofplan-bandwidth, ?)"});
    // Classes without measurements keep the defaults.
    CHECK(c.profile.gemm_efficiency(MathClass::int8_tensor) == default_profile(d).gemm_efficiency(MathClass::int8_tensor));
    // The written profile is what predict --profile reads.
    const EfficiencyProfile back = io::profile_from_json(io::calibration_json(c), d, "p.json");
    CHECK(back.gemm == c.profile.gemm);
    CHECK(back.memory == c.profile.memory);
}

TEST_CASE("the recorded H200 and H100 runs calibrate to plausible profiles with bounded residuals") {
    for (const std::string dir : {"2026-11-21-h200", "2026-11-21-h100-sxm"}) {
        CAPTURE(dir);
        const std::string base = std::string(ROOFPLAN_SOURCE_DIR "/validation/results/") + dir + "/";
        const std::string tag = dir.find("h200") != std::string::npos ? "h200" : "h100";
        std::vector<io::Report> reports;
        for (const std::string& f : {"gemm_" + tag + ".json", "bandwidth_" + tag + ".json"})
            for (io::Report& r : io::read_report_file(base + f)) reports.push_back(std::move(r));
        const auto device = io::device_id_of_gpu_name(reports[0].device_name);
        REQUIRE(device.has_value());
        CHECK(*device == (tag == "h200" ? "h200" : "h100-sxm"));
        const calibration::Calibration c = calibration::fit(io::merged(reports), find_device(*device));
        CHECK(c.profile.memory > 0.85);
        CHECK(c.profile.memory < 0.90);
        for (const calibration::FitQuality& q : c.quality) {
            CAPTURE(q.what);
            CHECK(q.value > 0.55);
            CHECK(q.value < 0.9);
            CHECK(q.median_rel_error < 0.25);
            CHECK(q.worst_rel_error < 0.35);
        }
    }
}

TEST_CASE("calibration errors: unknown tools, unknown precisions, no data, unknown GPU names") {
    const Device& d = find_device("h100");
    CHECK_THROWS_WITH_AS(samples_of({{"x.json", {{"tool", "nvprof"}, {"results", io::json::array()}}}}),
                         doctest::Contains("x.json: unknown tool 'nvprof'"), invalid_argument);
    CHECK_THROWS_WITH_AS(samples_of({{"x.json", io::json::array()}}), doctest::Contains("x.json: not a roofplan-gemm"),
                         invalid_argument);
    CHECK_THROWS_WITH_AS(calibration::fit(samples_of({{"x.json", {{"tool", "roofplan-gemm"}, {"results", io::json::array()}}}}), d),
                         doctest::Contains("no usable measurements"), invalid_argument);
    io::json bad = {{"tool", "roofplan-gemm"},
                    {"results", {{{"precision", "fp8"}, {"m", 64}, {"n", 64}, {"k", 64}, {"count", 1},
                                  {"time_s_median", 1e-5}, {"verified", true}}}}};
    CHECK_THROWS_WITH_AS(samples_of({{"x.json", bad}}), doctest::Contains("x.json: .results[0]: unknown precision 'fp8'"),
                         invalid_argument);
    CHECK_FALSE(io::device_id_of_gpu_name("Radeon Instinct MI300X").has_value());
    // A GEMM in a class the device lacks.
    io::json tf32 = bad;
    tf32["results"][0]["precision"] = "tf32";
    CHECK_THROWS_WITH_AS(calibration::fit(samples_of({{"x.json", tf32}}), find_device("v100")),
                         doctest::Contains("has no tf32_tensor"), invalid_argument);
    // Fields are named by their JSON path.
    io::json missing = bad;
    missing["results"][0]["precision"] = "bf16";
    missing["results"][0].erase("m");
    CHECK_THROWS_WITH_AS(samples_of({{"x.json", missing}}), doctest::Contains("x.json: .results[0].m: missing"),
                         invalid_argument);
}

TEST_CASE("collective calibration: recovers synthetic link parameters and fits the recorded H200 NCCL runs") {
    const System& s = find_system("hgx-h200-4");
    LinkParameters truth;
    truth.base_s = 12e-6;
    truth.latency_s[LinkKind::nvswitch] = 0.5e-6;
    truth.efficiency[LinkKind::nvswitch] = 0.72;
    truth.collective_factor[Collective::allgather] = 0.8;
    truth.rank_factor[Collective::allgather][2] = 0.7;  // 2 ranks: 0.7, 4 ranks: the default 0.8
    std::vector<CollectiveSample> synthetic;
    for (int ranks : {2, 4})
        for (Collective op : {Collective::allreduce, Collective::broadcast, Collective::allgather})
            for (std::int64_t b = 1 << 20; b <= (std::int64_t{1} << 30); b *= 4) {
                const double t = collective_time(s, op, b, {first_gpus(s, ranks)}, Algorithm::ring, truth).time.value();
                synthetic.push_back({"synthetic", op, ranks, b, t, 0});
            }
    const calibration::LinkCalibration fit = calibration::fit_links(synthetic, s);
    CHECK(fit.kind == LinkKind::nvswitch);
    CHECK(fit.links.base_s == doctest::Approx(12e-6).epsilon(1e-6));
    CHECK(fit.links.latency(LinkKind::nvswitch) == doctest::Approx(0.5e-6).epsilon(1e-6));
    CHECK(fit.links.eff(LinkKind::nvswitch) == doctest::Approx(0.72).epsilon(1e-6));
    // Per rank count, and the largest count measured (4) for the counts not measured.
    CHECK(fit.links.factor(Collective::allgather, 2) == doctest::Approx(0.7).epsilon(1e-6));
    CHECK(fit.links.factor(Collective::allgather, 4) == doctest::Approx(0.8).epsilon(1e-6));
    CHECK(fit.links.factor(Collective::allgather, 8) == doctest::Approx(0.8).epsilon(1e-6));
    CHECK(fit.links.collective_factor[Collective::allreduce] == doctest::Approx(1.0));
    CHECK(fit.quality.worst_rel_error < 1e-6);

    std::vector<io::Report> reports;
    for (const char* f : {"/validation/results/2026-11-21-h200x2/nccl_h200x2.json",
                          "/validation/results/2026-11-21-h200x4/nccl_h200x4.json"})
        for (io::Report& r : io::read_report_file(std::string(ROOFPLAN_SOURCE_DIR) + f)) reports.push_back(std::move(r));
    const Measurements recorded = io::merged(reports);
    const calibration::LinkCalibration h200 = calibration::fit_links(recorded.collectives, s, 16 << 20);
    CHECK(h200.quality.samples == 70);
    CHECK(h200.links.eff(LinkKind::nvswitch) > 0.6);
    CHECK(h200.links.eff(LinkKind::nvswitch) < 0.9);
    // A factor per (collective, rank count): 69 of the 70 within 10% (median 2.5%, worst 11.2% when recorded; one
    // factor per collective gave 55 of 70, median 4.1%, worst 14.8%).
    CHECK(h200.quality.median_rel_error < 0.035);
    CHECK(h200.quality.worst_rel_error < 0.13);
    int within = 0;
    for (const CollectiveSample& r : recorded.collectives) {
        if (r.bytes < (16 << 20)) continue;
        const double t = collective_time(s, r.op, r.bytes, {first_gpus(s, r.ranks)}, Algorithm::ring, h200.links).time.value();
        within += std::abs(t / r.seconds - 1) <= 0.10;
    }
    CHECK(within >= 69);
    // The fitted parameters travel through a profile file.
    const LinkParameters back = io::links_from_json({{"links", io::to_json(h200.links)}}, "p.json");
    CHECK(back.base_s == h200.links.base_s);
    CHECK(back.eff(LinkKind::nvswitch) == h200.links.eff(LinkKind::nvswitch));
    CHECK(back.collective_factor == h200.links.collective_factor);
    CHECK(back.rank_factor == h200.links.rank_factor);
    CHECK_THROWS_WITH_AS(io::links_from_json({{"links", {{"collective_factor_by_ranks", {{"allgather", {{"1", 0.9}}}}}}}},
                                             "p.json"),
                         doctest::Contains("rank count must be an integer in [2, 16]"), invalid_argument);
    CHECK_THROWS_WITH_AS(io::links_from_json({{"links", {{"collective_factor_by_ranks", {{"allgather", {{"4", 1.5}}}}}}}},
                                             "p.json"),
                         doctest::Contains("must be in (0, 1]"), invalid_argument);
    CHECK_THROWS_WITH_AS(calibration::fit_links({}, s), doctest::Contains("need at least 3"), invalid_argument);
}

namespace {
io::json conv_record(const char* pass, const char* precision, std::int64_t n, std::int64_t c, std::int64_t hw,
                     std::int64_t k, std::int64_t rs, std::int64_t stride, double time_s) {
    return {{"label", "synthetic"}, {"pass", pass}, {"precision", precision}, {"layout", "nhwc"}, {"n", n}, {"c", c},
            {"h", hw}, {"w", hw}, {"k", k}, {"r", rs}, {"s", rs}, {"stride", stride}, {"pad", rs / 2},
            {"dilation", 1}, {"time_s_median", time_s}, {"tflops", 1.0}, {"verified", true}};
}
ConvSample conv_sample(const io::json& record) {
    return io::merged(io::read_reports("c.json", {{"tool", "roofplan-conv"}, {"results", {record}}})).conv.at(0);
}
}  // namespace

TEST_CASE("convolution calibration recovers a per-class factor and fits the recorded H200 cuDNN sweep") {
    const Device& d = find_device("h200");
    // Synthetic: times generated by the engine itself with bf16 conv factor 1.3 are fitted back to 1.3.
    EfficiencyProfile truth = default_profile(d);
    truth.conv_by_class[static_cast<std::size_t>(MathClass::bf16_tensor)] = 1.3;
    io::json results = io::json::array();
    for (const char* pass : {"forward", "bwd-data", "bwd-filter"})
        for (const auto& s : {std::array<std::int64_t, 6>{64, 64, 56, 64, 3, 1}, {256, 256, 14, 256, 3, 1},
                              {64, 512, 28, 1024, 1, 2}}) {
            io::json r = conv_record(pass, "bf16", s[0], s[1], s[2], s[3], s[4], s[5], 1.0);
            r["time_s_median"] = predicted_seconds(conv_sample(r), d, truth);
            results.push_back(r);
        }
    io::json nchw = results[0];
    nchw["layout"] = "nchw";
    nchw["time_s_median"] = 1.0;  // another layout never counts
    results.push_back(nchw);
    const calibration::Calibration c =
        calibration::fit(samples_of({{"conv.json", {{"tool", "roofplan-conv"}, {"results", results}}}}), d);
    CHECK(c.profile.conv_factor(MathClass::bf16_tensor) == doctest::Approx(1.3).epsilon(1e-3));
    CHECK(c.profile.conv_factor(MathClass::fp32) == default_profile(d).conv);  // unmeasured classes: the default
    REQUIRE(c.quality.size() == 1);
    CHECK(c.quality[0].samples == 9);
    CHECK(c.quality[0].worst_rel_error < 1e-3);
    // The factor travels through the profile JSON that predict --profile reads.
    const EfficiencyProfile back = io::profile_from_json(io::calibration_json(c), d, "p.json");
    CHECK(back.conv_by_class == c.profile.conv_by_class);
    // A faster convolution factor makes the prediction faster, in proportion while compute-bound.
    const ConvSample big = conv_sample(conv_record("forward", "bf16", 256, 256, 28, 256, 3, 1, 1.0));
    EfficiencyProfile slow = truth;
    slow.conv_by_class[static_cast<std::size_t>(MathClass::bf16_tensor)] = 0.65;
    CHECK(predicted_seconds(big, d, slow) > 1.8 * predicted_seconds(big, d, truth));

    // The recorded sweep (validation/results/2026-11-21-h200-conv): 1440 verified cuDNN cases.  The achieved fit
    // (NHWC, all 45 shapes x 3 passes per class) is pinned as a regression bound; the issue's bar (median 10%,
    // 90th percentile 25%) is not met — see docs/validation.md.
    std::vector<io::Report> reports;
    const std::string base = ROOFPLAN_SOURCE_DIR "/validation/results/";
    for (const std::string f : {"2026-11-21-h200/gemm_h200.json", "2026-11-21-h200/bandwidth_h200.json",
                                "2026-11-21-h200-conv/conv_h200_half.json", "2026-11-21-h200-conv/conv_h200_single.json"})
        for (io::Report& r : io::read_report_file(base + f)) reports.push_back(std::move(r));
    const calibration::Calibration h200 = calibration::fit(io::merged(reports), d);
    int conv_classes = 0;
    for (const calibration::FitQuality& q : h200.quality) {
        if (q.what.rfind("conv.", 0) != 0) continue;
        CAPTURE(q.what);
        ++conv_classes;
        CHECK(q.samples == 180);
        const bool fp32 = q.what.find("conv.fp32") == 0;
        CHECK(q.value > (fp32 ? 1.0 : 0.9));  // FP32 FFT/Winograd algorithms beat the implicit-GEMM count
        CHECK(q.value < (fp32 ? 1.4 : 1.2));
        CHECK(q.median_rel_error < (fp32 ? 0.6 : 0.25));
    }
    CHECK(conv_classes == 4);
}

TEST_CASE("convolution calibration errors: layout, pass, precision, profile factors") {
    const Device& d = find_device("h200");
    io::json r = conv_record("sideways", "bf16", 8, 16, 8, 16, 3, 1, 1e-5);
    CHECK_THROWS_WITH_AS(conv_sample(r), doctest::Contains("c.json: .results[0].pass: unknown pass 'sideways'"),
                         invalid_argument);
    r["pass"] = "forward";
    r["precision"] = "fp64";
    CHECK_THROWS_WITH_AS(conv_sample(r), doctest::Contains("unknown precision 'fp64'"), invalid_argument);
    r["precision"] = "int8";  // cuDNN INT8 convolutions do not train
    CHECK_THROWS_WITH_AS(conv_sample(r), doctest::Contains("unknown precision 'int8'"), invalid_argument);
    r["precision"] = "bf16";
    Measurements convs;
    convs.conv = {conv_sample(r)};
    CHECK_THROWS_WITH_AS(calibration::fit(convs, d, "chwn"),
                         doctest::Contains("expected nhwc or nchw"), invalid_argument);
    r["k"] = -4;
    CHECK_THROWS_WITH_AS(conv_sample(r), doctest::Contains(".results[0].k: expected an integer"), invalid_argument);
    const io::json bad_factor = {{"conv_by_class", {{"bf16_tensor", 9.5}}}};
    CHECK_THROWS_WITH_AS(io::profile_from_json(bad_factor, d, "p.json"), doctest::Contains("conv_by_class.bf16_tensor"),
                         invalid_argument);
    const io::json bad_class = {{"conv_by_class", {{"fp8_tensor", 1.0}}}};
    CHECK_THROWS_WITH_AS(io::profile_from_json(bad_class, d, "p.json"), doctest::Contains("unknown math class"),
                         invalid_argument);
}

TEST_CASE("an operator report read: timing method as a number or a string, host sections with their own keys") {
    const io::json report = io::json::parse(R"json({"tool": "roofplan-ops", "method": {"inner": 1}, "cases": [],
        "host": [{"case": "view (no kernel)", "host_us_per_op": 1.5}],
        "autocast_host": [{"case": "conv fp32 (grad)", "host_us_per_op": 20.0, "kernels_per_op": 1}],
        "compiled_host": [{"case": "torch.compile default, 8 x (Linear(64,64), GELU): inference (no_grad)",
                           "host_us_per_call": 300.0, "kernels_per_call": 16, "verified": true},
                          {"case": "torch.compile default, 8 x (Linear(64,64), GELU): forward + backward",
                           "host_us_per_call": 2000.0, "kernels_per_call": 42, "verified": false}]})json");
    const Measurements m = io::operator_report(report, "ops.json");
    REQUIRE(m.host.size() == 3);  // the unverified compiled chain is left out
    CHECK(m.host[1].name == "conv fp32 (grad)");
    CHECK(m.host[1].seconds == doctest::Approx(20e-6));
    CHECK(m.host[2].kernels == 16);
    CHECK(m.host[2].seconds == doctest::Approx(300e-6));
}

TEST_CASE("report readers: a field of the wrong type is an error naming it, never a library exception") {
    // Found by the long fuzzing run of 2026-11-24 (tests/fuzz/corpus/files/regression-*.json).
    CHECK_FALSE(io::is_suite_report(io::json::parse(R"({"tool": 0.9, "reports": []})")));
    CHECK(io::read_reports("r.json", io::json::parse(R"({"tool": 0.9})")).front().known == false);
    CHECK_THROWS_WITH_AS(io::operator_report(io::json::parse(R"({"tool": 7, "cases": []})"), "ops.json"),
                         doctest::Contains("ops.json: .tool: expected a string, got 7"), invalid_argument);
    CHECK_THROWS_WITH_AS(io::operator_report(io::json::parse(R"({"tool": "roofplan-gemm", "cases": []})"), "ops.json"),
                         doctest::Contains("ops.json: not a roofplan-ops report"), invalid_argument);
    CHECK_THROWS_WITH_AS(io::operator_report(io::json::parse(R"({"tool": "roofplan-ops", "cases": [{"verified": 1}]})"), "ops.json"),
                         doctest::Contains("ops.json: .cases[0].verified: expected true or false, got 1"), invalid_argument);
    CHECK_THROWS_WITH_AS(io::operator_report(io::json::parse(R"({"tool": "roofplan-ops", "cases": [],
                                                  "host": [{"case": 0, "host_us_per_op": 1}]})"), "ops.json"),
                         doctest::Contains("ops.json: .host[].case: expected a string, got 0"), invalid_argument);
    CHECK_THROWS_WITH_AS(io::operator_report(io::json::parse(R"({"tool": "roofplan-ops", "cases": [],
                                                  "compiled_host": [{"case": "c", "host_us_per_call": 1, "verified": "yes"}]})"), "ops.json"),
                         doctest::Contains("ops.json: .compiled_host[].verified: expected true or false"), invalid_argument);
}

// --- convolutions measured shape by shape (calibration/measured_conv.hpp, io/conv_shapes.hpp) -------------------

namespace {
/// ResNet's 64->64 3x3 convolution at 56x56 (layout `layout`).
ConvGeometry resnet_3x3(ConvLayout layout) {
    return ConvGeometry::of(layers::Conv2D({.in_channels = 64, .out_channels = 64, .in_height = 56, .in_width = 56,
                                            .kernel = 3, .padding = 1, .bias = false}).config(), layout);
}
MeasuredConv measured(const ConvGeometry& g, MathClass m, Pass p, double batch, double efficiency) {
    return {g, g.key(), m, p, false, batch, efficiency, 0};
}
/// A roofplan-conv-shapes report of one shape in one mode with the given runs.
io::json conv_shapes_doc(const char* mode, const char* layout, io::json runs, io::json verified) {
    return {{"tool", "roofplan-conv-shapes"},
            {"provenance", {{"date_utc", "2026-11-24T05:32:48+00:00"}, {"device", "NVIDIA H200"}}},
            {"convolutions",
             {{{"mode", mode}, {"layout", layout}, {"in_channels", 64}, {"out_channels", 64}, {"kernel", {3, 3}},
               {"stride", {1, 1}}, {"padding", {1, 1}}, {"dilation", {1, 1}}, {"groups", 1}, {"input_hw", {56, 56}},
               {"verified", verified}, {"runs", runs}}}}};
}
}  // namespace

TEST_CASE("measured convolutions: linear between measured batches, the nearest outside, 0 for other shapes") {
    const ConvGeometry g = resnet_3x3(ConvLayout::nhwc);
    const MeasuredConvs t = keep({measured(g, MathClass::bf16_tensor, Pass::forward, 32, 0.6),
                                  measured(g, MathClass::bf16_tensor, Pass::forward, 8, 0.2),
                                  measured(g, MathClass::bf16_tensor, Pass::backward_data, 8, 0.5)},
                                 "test");
    const std::uint64_t key = g.key();
    CHECK(t.efficiency(key, MathClass::bf16_tensor, Pass::forward, 8) == doctest::Approx(0.2));
    CHECK(t.efficiency(key, MathClass::bf16_tensor, Pass::forward, 20) == doctest::Approx(0.4));  // 12/24 of the way
    CHECK(t.efficiency(key, MathClass::bf16_tensor, Pass::forward, 1) == doctest::Approx(0.2));
    CHECK(t.efficiency(key, MathClass::bf16_tensor, Pass::forward, 512) == doctest::Approx(0.6));
    CHECK(t.efficiency(key, MathClass::bf16_tensor, Pass::backward_data, 64) == doctest::Approx(0.5));
    CHECK(t.efficiency(key, MathClass::bf16_tensor, Pass::backward_weight, 8) == 0);
    CHECK(t.efficiency(key, MathClass::fp16_tensor_fp32_acc, Pass::forward, 8) == 0);
    CHECK(t.efficiency(resnet_3x3(ConvLayout::nchw).key(), MathClass::bf16_tensor, Pass::forward, 8) == 0);
    CHECK(resnet_3x3(ConvLayout::nchw).key() != g.key());
    CHECK(g.key() != 0);
}

TEST_CASE("measured convolutions: an equal table is kept once") {
    const ConvGeometry g = resnet_3x3(ConvLayout::nhwc);
    const MeasuredConvs a = keep({measured(g, MathClass::bf16_tensor, Pass::forward, 8, 0.25)}, "a");
    const MeasuredConvs b = keep({measured(g, MathClass::bf16_tensor, Pass::forward, 8, 0.25)}, "b");
    const MeasuredConvs c = keep({measured(g, MathClass::bf16_tensor, Pass::forward, 8, 0.26)}, "c");
    CHECK(a.entries.data() == b.entries.data());
    CHECK(a.entries.data() != c.entries.data());
}

TEST_CASE("measured convolutions: a table with a bad entry is an error naming it") {
    const ConvGeometry g = resnet_3x3(ConvLayout::nchw);
    const auto bad = [&](MeasuredConv e) { return keep({e}, "p.json"); };
    CHECK_THROWS_WITH_AS(bad(measured(g, MathClass::fp32, Pass::forward, 8, 0)), doctest::Contains("p.json: a measured convolution's efficiency must be in (0, 8]"), Error);
    CHECK_THROWS_WITH_AS(bad(measured(g, MathClass::fp32, Pass::forward, 8, 9)), doctest::Contains("must be in (0, 8]"), Error);
    CHECK_THROWS_WITH_AS(bad(measured(g, MathClass::fp32, Pass::forward, 8, std::nan(""))), doctest::Contains("must be in (0, 8]"), Error);
    CHECK_THROWS_WITH_AS(bad(measured(g, MathClass::fp32, Pass::forward, 0, 0.5)), doctest::Contains("batch must be in [1, 1e9)"), Error);
    MeasuredConv wrong = measured(g, MathClass::fp32, Pass::forward, 8, 0.5);
    wrong.key ^= 1;
    CHECK_THROWS_WITH_AS(bad(wrong), doctest::Contains("key does not match its geometry"), Error);
    CHECK_THROWS_WITH_AS(keep({measured(g, MathClass::fp32, Pass::forward, 8, 0.5), measured(g, MathClass::fp32, Pass::forward, 8, 0.6)}, "p.json"),
                         doctest::Contains("two measured convolutions of one shape"), Error);
}

TEST_CASE("conv-shapes reports calibrate a pass's efficiency against its own roofline, and the profile keeps it") {
    const Device& d = find_device("h200");
    // TF32 forward at batch 32: 100 us of convolution kernels and 40 us of layout conversions (lowered apart);
    // the filter gradient with a 5 us zeroed workspace (lowered apart too); an unverified backward-data pass.
    const io::json doc = conv_shapes_doc(
        "tf32", "nchw",
        {{{"batch", 32}, {"pass", "forward"}, {"class_time_s", {{"conv", 100e-6}, {"copy/cast", 40e-6}}},
          {"kernels_per_call", 5}},
         {{"batch", 32}, {"pass", "backward_filter"}, {"class_time_s", {{"conv", 150e-6}, {"memset", 5e-6}}},
          {"kernels_per_call", 2}},
         {{"batch", 32}, {"pass", "backward_data"}, {"class_time_s", {{"conv", 1.0}}}},
         {{"batch", 256}, {"error", "out of memory"}}},
        {{"forward", true}, {"backward_filter", true}, {"backward_data", false}});
    Measurements m = io::conv_shapes_report(doc, "c.json");
    REQUIRE(m.conv_shapes.size() == 2);
    CHECK(m.conv_shapes[0].seconds == doctest::Approx(100e-6));
    CHECK(m.conv_shapes[1].seconds == doctest::Approx(155e-6));  // its workspace fill is one of its kernels
    // Kernels per call: the forward's 5 less its 3 conversions (counted apart); the filter gradient's 2.
    CHECK(m.conv_shapes[0].kernels == 2);
    CHECK(m.conv_shapes[1].kernels == 2);
    const calibration::Calibration c = calibration::fit(m, d);
    const MeasuredConvs& t = c.profile.measured_conv;
    REQUIRE(t.entries.size() == 3);  // forward, its conversions, the filter gradient
    // The roofline of the forward, written out: 32·56·56·64·64·9 MACs at the TF32 peak, or its bytes (input,
    // output, weights in FP32) at the datasheet bandwidth, whichever is longer.
    const double macs = 32.0 * 56 * 56 * 64 * 64 * 9;
    const double bytes = 4.0 * (2 * 32.0 * 64 * 56 * 56 + 64.0 * 64 * 9);
    const double basis = std::max(2 * macs / (d.peak.tf32_tensor * 1e12), bytes / (d.bandwidth_gb_s * 1e9));
    const std::uint64_t key = resnet_3x3(ConvLayout::nchw).key();
    CHECK(t.efficiency(key, MathClass::tf32_tensor, Pass::forward, 32) == doctest::Approx(basis / 100e-6));
    CHECK(t.efficiency(key, MathClass::tf32_tensor, Pass::backward_data, 32) == 0);  // unverified: not used
    // The profile file carries the table: written and read back, the same efficiencies.
    const EfficiencyProfile back = io::profile_from_json(io::calibration_json(c), d, "p.json");
    REQUIRE(back.measured_conv.entries.size() == 3);
    for (std::size_t i = 0; i < 3; ++i) {
        CHECK(back.measured_conv.entries[i].key == t.entries[i].key);
        CHECK(back.measured_conv.entries[i].conversions == t.entries[i].conversions);
        CHECK(back.measured_conv.entries[i].efficiency == doctest::Approx(t.entries[i].efficiency));
    }
    // A prediction times that kernel from the table: the roofline over the efficiency (the measured kernels' own
    // time: no fixed cost on top).
    const Roofline r(d, c.profile, MathClass::tf32_tensor);
    const Kernel k = eager::conv_pass_kernel(layers::Conv2D(resnet_3x3(ConvLayout::nchw).config()), 32, Pass::forward,
                                             4.0, ConvLayout::nchw, HostOp::none);
    CHECK(r.time(k).total_s == doctest::Approx(100e-6));
    CHECK(r.time(k).launch_s == 0);
    CHECK(r.time(k).launches == 2);  // what cuDNN launched for it
    // On another GPU the efficiency applies to that GPU's own roofline.
    const Device& h100 = find_device("h100-sxm");
    const double basis_h100 = std::max(2 * macs / (h100.peak.tf32_tensor * 1e12), bytes / (h100.bandwidth_gb_s * 1e9));
    const KernelTime on_h100 = Roofline(h100, c.profile, MathClass::tf32_tensor).time(k);
    CHECK(on_h100.total_s == doctest::Approx(100e-6 * basis_h100 / basis));
    // The filter gradient's workspace fill and split-K reduction, as the eager runtime lowers them, are part of the
    // measured pass: not launched again.
    {
        Model one("one-conv", "a single convolution", Shape{64, 56, 56});
        one.add("conv", layers::Conv2D(resnet_3x3(ConvLayout::nchw).config()));
        const LoweredStep s = lower(one, 32, {Precision::tf32, Mode::train, Optimizer::sgd}, Runtime::eager);
        int fills = 0;
        for (const Kernel& x : s.kernels)
            if (x.what.starts_with("split-K")) {
                ++fills;
                CHECK(x.conv_shape == key);
                CHECK(r.time(x).launches == 0);
                CHECK(Roofline(d, default_profile(find_device("a100")), MathClass::tf32_tensor).time(x).launches == 1);
            }
        CHECK(fills == 2);
    }
    // TF32's layout conversions around the forward (40 us measured) are timed from the table too: the three
    // conversion kernels of the pass, each its bytes over the conversions' efficiency, add up to the measurement.
    REQUIRE(m.conv_shapes[0].conversion_seconds == doctest::Approx(40e-6));
    const eager::ConvConversions moved = eager::conv_conversion_bytes(layers::Conv2D(resnet_3x3(ConvLayout::nchw).config()), 32,
                                                                      Pass::forward, 4.0);
    CHECK(moved.in[0] == doctest::Approx(4.0 * 32 * 64 * 56 * 56));
    CHECK(moved.in[1] == doctest::Approx(4.0 * 64 * 64 * 9));
    double converted = 0;
    for (double b : {moved.in[0], moved.in[1], moved.out}) {
        const Kernel x = eager::conv_conversion(HostOp::none, "conversion", b, key, 32, 4.0);
        converted += r.time(x).total_s;
    }
    CHECK(converted == doctest::Approx(40e-6));
    CHECK(t.efficiency(key, MathClass::tf32_tensor, Pass::backward_weight, 32, true) == 0);  // none measured there
    // The same convolution on channels-last tensors is not in the table: the factor times it.
    const Kernel nhwc = eager::conv_pass_kernel(layers::Conv2D(resnet_3x3(ConvLayout::nchw).config()), 32,
                                                Pass::forward, 4.0, ConvLayout::nhwc, HostOp::none);
    CHECK(r.time(nhwc).total_s == doctest::Approx(Roofline(d, default_profile(d), MathClass::tf32_tensor).time(nhwc).total_s));
}

TEST_CASE("conv-shapes reports and profile tables: bad input is an error naming the field") {
    const io::json ok_runs = {{{"batch", 8}, {"pass", "forward"}, {"class_time_s", {{"conv", 1e-5}}}}};
    const io::json ok_verified = {{"forward", true}};
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(conv_shapes_doc("int8", "nchw", ok_runs, ok_verified), "c.json"),
                         doctest::Contains("c.json: .convolutions[0].mode: 'int8' is not one of fp32, tf32, bf16, fp16"), Error);
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(conv_shapes_doc("fp32", "chwn", ok_runs, ok_verified), "c.json"),
                         doctest::Contains(".layout: 'chwn' is not one of nchw, nhwc"), Error);
    io::json bad = conv_shapes_doc("fp32", "nchw", ok_runs, ok_verified);
    bad["convolutions"][0]["kernel"] = {0, 3};
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(bad, "c.json"), doctest::Contains(".convolutions[0].kernel: expected [h, w], integers in [1, 2^20)"), Error);
    bad = conv_shapes_doc("fp32", "nchw", ok_runs, ok_verified);
    bad["convolutions"][0]["input_hw"] = {1, 1};  // a 3x3 kernel without padding reaches past a 1x1 input
    bad["convolutions"][0]["padding"] = {0, 0};
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(bad, "c.json"), doctest::Contains("c.json: .convolutions[0]: conv2d: kernel 3x3"), Error);
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(conv_shapes_doc("fp32", "nchw", {{{"batch", 8}, {"pass", "sideways"}}}, ok_verified), "c.json"),
                         doctest::Contains(".runs[0].pass: 'sideways' is not one of forward, backward_data, backward_filter"), Error);
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(conv_shapes_doc("fp32", "nchw", {{{"batch", 8}, {"pass", "forward"}}}, ok_verified), "c.json"),
                         doctest::Contains(".runs[0].class_time_s: missing"), Error);
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(conv_shapes_doc("fp32", "nchw", {{{"batch", 0.5}, {"pass", "forward"}, {"class_time_s", {{"conv", 1e-5}}}}}, ok_verified), "c.json"),
                         doctest::Contains(".runs[0].batch: expected an integer in [1, 1e9)"), Error);
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(conv_shapes_doc("tf32", "nchw", {{{"batch", 8}, {"pass", "forward"}, {"class_time_s", {{"copy/cast", 1e-5}}}}}, ok_verified), "c.json"),
                         doctest::Contains("the pass's own kernels must take (0, 60) seconds"), Error);
    CHECK_THROWS_WITH_AS(io::conv_shapes_report(io::json{{"tool", "roofplan-conv-shapes"}}, "c.json"),
                         doctest::Contains("c.json: not a roofplan-conv-shapes report"), Error);
    // Profile files: the columns, the rows' length and names, and the geometry are checked.
    const Device& d = find_device("h200");
    const auto profile = [&](io::json table) { return io::profile_from_json({{"measured_conv", table}}, d, "p.json"); };
    const io::json columns = io::measured_conv_columns;
    const io::json row = {"bf16_tensor", "forward", "kernels", "nhwc", 64, 64, 56, 56, 3, 3, 1, 1, 1, 1, 1, 1, 1, 32, 0.5, 1};
    CHECK(profile({{"columns", columns}, {"rows", {row}}}).measured_conv.entries.size() == 1);
    CHECK_THROWS_WITH_AS(profile({{"columns", {"math"}}, {"rows", {row}}}), doctest::Contains("p.json: .measured_conv.columns: expected [math, pass, part, layout"), Error);
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", io::json::array({io::json::array({"bf16_tensor", "forward"})})}}), doctest::Contains(".measured_conv.rows[0]: expected a row of 20 values"), Error);
    io::json r2 = row;
    r2[0] = "bf17";
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", {r2}}}), doctest::Contains(".measured_conv.rows[0]: unknown math class 'bf17'"), Error);
    r2 = row;
    r2[8] = -3;
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", {r2}}}), doctest::Contains(".measured_conv.rows[0][8] (kernel_h): expected an integer"), Error);
    r2 = row;
    r2[2] = "both";
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", {r2}}}), doctest::Contains(".measured_conv.rows[0][2] (part): 'both' is not one of kernels, conversions"), Error);
    r2 = row;
    r2[18] = 12;
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", {r2}}}), doctest::Contains("p.json: .measured_conv: a measured convolution's efficiency must be in (0, 8]"), Error);
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", {row}}, {"extra", 1}}), doctest::Contains("extra"), Error);
}

TEST_CASE("the Hopper default profile's measured convolutions: sorted, keyed by their geometry, Hopper only") {
    const MeasuredConvs& t = default_profile(find_device("h200")).measured_conv;
    REQUIRE(t.entries.size() > 1000);
    CHECK(std::is_sorted(t.entries.begin(), t.entries.end(),
                         [](const MeasuredConv& a, const MeasuredConv& b) { return a.order() < b.order(); }));
    for (std::size_t i = 0; i < t.entries.size(); ++i) {
        const MeasuredConv& e = t.entries[i];
        CHECK(e.key == e.geometry.key());
        CHECK((e.efficiency > 0 && e.efficiency <= 8));
        if (i > 0) CHECK(t.entries[i - 1].order() != e.order());
    }
    CHECK(default_profile(find_device("h100-sxm")).measured_conv.entries.size() == t.entries.size());
    CHECK(default_profile(find_device("a100")).measured_conv.empty());
    CHECK(default_profile(find_device("v100")).measured_conv.empty());
    // ResNet-50's 3x3 64->64 convolution at 56x56, BF16 channels-last forward, is among them.
    const ConvGeometry g = resnet_3x3(ConvLayout::nhwc);
    CHECK(t.efficiency(g.key(), MathClass::bf16_tensor, Pass::forward, 64) > 0);
}

namespace {
MeasuredGemm measured_gemm(GemmGeometry g, MathClass m, Pass p, double rows, double efficiency, double kernels = 1) {
    return {g, g.key(), m, p, rows, efficiency, kernels};
}
io::json gemm_shapes_doc(const char* mode, io::json runs, io::json verified, std::int64_t in = 768, std::int64_t out = 3072) {
    return {{"tool", "roofplan-gemm-shapes"},
            {"provenance", {{"date_utc", "2026-11-24T09:00:00+00:00"}, {"device", "NVIDIA H200"}}},
            {"gemms",
             {{{"mode", mode}, {"in_features", in}, {"out_features", out}, {"bias", true}, {"models", {"bert-qa"}},
               {"verified", verified}, {"runs", runs}}}}};
}
}  // namespace

TEST_CASE("measured GEMMs: linear between measured rows, the nearest outside, 0 for other shapes; kept once") {
    const GemmGeometry g{768, 3072, true};
    const MeasuredGemms t = keep({measured_gemm(g, MathClass::fp32, Pass::forward, 4096, 0.8),
                                 measured_gemm(g, MathClass::fp32, Pass::forward, 128, 0.2, 4),
                                 measured_gemm(g, MathClass::fp32, Pass::backward_weight, 128, 0.5)},
                                "test");
    CHECK(t.at(g.key(), MathClass::fp32, Pass::forward, 128).efficiency == doctest::Approx(0.2));
    CHECK(t.at(g.key(), MathClass::fp32, Pass::forward, 128).kernels == 4);  // split-K at 128 rows
    CHECK(t.at(g.key(), MathClass::fp32, Pass::forward, 2112).efficiency == doctest::Approx(0.5));  // half way
    CHECK(t.at(g.key(), MathClass::fp32, Pass::forward, 4000).kernels == 1);  // the nearest point's kernels
    CHECK(t.at(g.key(), MathClass::fp32, Pass::forward, 1).efficiency == doctest::Approx(0.2));
    CHECK(t.at(g.key(), MathClass::fp32, Pass::forward, 1e6).efficiency == doctest::Approx(0.8));
    CHECK(t.at(g.key(), MathClass::fp32, Pass::backward_data, 128).efficiency == 0);
    CHECK(t.at(g.key(), MathClass::tf32_tensor, Pass::forward, 128).efficiency == 0);
    CHECK(t.at(GemmGeometry{768, 3072, false}.key(), MathClass::fp32, Pass::forward, 128).efficiency == 0);
    CHECK(GemmGeometry{3072, 768, true}.key() != g.key());
    const MeasuredGemms again = keep({measured_gemm(g, MathClass::fp32, Pass::forward, 128, 0.2, 4),
                                     measured_gemm(g, MathClass::fp32, Pass::forward, 4096, 0.8),
                                     measured_gemm(g, MathClass::fp32, Pass::backward_weight, 128, 0.5)},
                                    "again");
    CHECK(again.entries.data() == t.entries.data());
    CHECK_THROWS_WITH_AS(keep({measured_gemm(g, MathClass::fp32, Pass::forward, 0, 0.5)}, "p.json"),
                         doctest::Contains("p.json: a measured GEMM's rows must be in [1, 1e9)"), Error);
    CHECK_THROWS_WITH_AS(keep({measured_gemm(g, MathClass::fp32, Pass::forward, 8, 0.5), measured_gemm(g, MathClass::fp32, Pass::forward, 8, 0.6)}, "p.json"),
                         doctest::Contains("two measured GEMMs of one shape, math class, pass, part and rows"), Error);
}

TEST_CASE("gemm-shapes reports calibrate a linear pass against its own roofline; the eager runtime uses it") {
    const Device& d = find_device("h200");
    // FP32 forward of a 768 -> 3072 linear at 128 rows: cuBLAS's split-K path, four kernels, 30 us in all.
    const io::json doc = gemm_shapes_doc(
        "fp32",
        {{{"rows", 128}, {"pass", "forward"}, {"class_time_s", {{"gemm", 26e-6}, {"memset", 2e-6}, {"elementwise", 2e-6}}},
          {"kernels_per_call", 4}},
         {{"rows", 128}, {"pass", "backward_weight"}, {"class_time_s", {{"gemm", 20e-6}}}, {"kernels_per_call", 1}},
         {{"rows", 128}, {"pass", "backward_data"}, {"class_time_s", {{"gemm", 1.0}}}},
         {{"rows", 32768}, {"error", "out of memory"}}},
        {{"forward", true}, {"backward_weight", true}, {"backward_data", false}});
    const Measurements m = io::gemm_shapes_report(doc, "g.json");
    REQUIRE(m.gemm_shapes.size() == 2);
    CHECK(m.gemm_shapes[0].seconds == doctest::Approx(30e-6));  // every kernel of the call
    CHECK(m.gemm_shapes[0].kernels == 4);
    const calibration::Calibration c = calibration::fit(m, d);
    const MeasuredGemms& t = c.profile.measured_gemm;
    REQUIRE(t.entries.size() == 2);
    // The forward's roofline written out: 128·768·3072 MACs at the FP32 peak, or its bytes (input, weights, bias,
    // output in FP32) at the datasheet bandwidth, whichever is longer.
    const double macs = 128.0 * 768 * 3072;
    const double bytes = 4.0 * (128.0 * 768 + 768.0 * 3072 + 3072 + 128.0 * 3072);
    const double basis = std::max(2 * macs / (d.peak.fp32 * 1e12), bytes / (d.bandwidth_gb_s * 1e9));
    const std::uint64_t key = GemmGeometry{768, 3072, true}.key();
    CHECK(t.at(key, MathClass::fp32, Pass::forward, 128).efficiency == doctest::Approx(basis / 30e-6).epsilon(0.02));
    // Written to a profile file and read back.
    const EfficiencyProfile back = io::profile_from_json(io::calibration_json(c), d, "p.json");
    REQUIRE(back.measured_gemm.entries.size() == 2);
    CHECK(back.measured_gemm.entries[0].efficiency == doctest::Approx(t.entries[0].efficiency));
    CHECK(back.measured_gemm.entries[0].kernels == t.entries[0].kernels);
    // A linear layer of a model, lowered by the eager runtime at batch 1 and sequence 128, is timed from the table
    // and counts the four kernels cuBLAS launched; its backward's workspace fills are part of the measured passes.
    Model one("one-linear", "a single linear layer", Shape{128, 768});
    layers::Linear::Config lc;
    lc.in_features = 768, lc.out_features = 3072, lc.rows = 128;
    one.add("fc", layers::Linear(lc));
    const Roofline r(d, c.profile, MathClass::fp32);
    const LoweredStep s = lower(one, 1, {Precision::fp32, Mode::train, Optimizer::sgd}, Runtime::eager);
    int forward = 0, fills = 0;
    for (const Kernel& k : s.kernels) {
        if (k.what == "linear") {
            ++forward;
            CHECK(k.gemm_shape == key);
            CHECK(k.rows == 128);
            CHECK(r.time(k).total_s == doctest::Approx(30e-6).epsilon(0.02));
            CHECK(r.time(k).launches == 4);
        }
        if (k.what == "GEMM workspace") {
            ++fills;
            CHECK(r.time(k).launches == 0);
            CHECK(Roofline(d, default_profile(find_device("a100")), MathClass::fp32).time(k).launches == 1);
        }
    }
    CHECK(forward == 1);
    CHECK(fills == 2);
    // At batch 2 the rows double (Program keeps them affine) and the table's nearest point gives the kernels.
    const Program program(one, {Precision::fp32, Mode::train, Optimizer::sgd}, Runtime::eager);
    for (const Kernel& k : program.at(2))
        if (k.what == "linear") CHECK(k.rows == 256);
}

TEST_CASE("gemm-shapes reports and profile tables: bad input is an error naming the field") {
    const io::json ok_runs = {{{"rows", 8}, {"pass", "forward"}, {"class_time_s", {{"gemm", 1e-5}}}}};
    const io::json ok_verified = {{"forward", true}};
    CHECK(io::gemm_shapes_report(gemm_shapes_doc("bf16", ok_runs, ok_verified), "g.json").gemm_shapes.size() == 1);
    CHECK_THROWS_WITH_AS(io::gemm_shapes_report(gemm_shapes_doc("int8", ok_runs, ok_verified), "g.json"),
                         doctest::Contains("g.json: .gemms[0].mode: 'int8' is not one of fp32, tf32, bf16, fp16"), Error);
    CHECK_THROWS_WITH_AS(io::gemm_shapes_report(gemm_shapes_doc("fp32", ok_runs, ok_verified, 0), "g.json"),
                         doctest::Contains(".gemms[0].in_features: expected an integer in [1, 2^24)"), Error);
    io::json bad = gemm_shapes_doc("fp32", ok_runs, ok_verified);
    bad["gemms"][0]["bias"] = "yes";
    CHECK_THROWS_WITH_AS(io::gemm_shapes_report(bad, "g.json"), doctest::Contains(".gemms[0].bias: expected true or false"), Error);
    CHECK_THROWS_WITH_AS(io::gemm_shapes_report(gemm_shapes_doc("fp32", {{{"rows", 8}, {"pass", "backward_filter"}}}, ok_verified), "g.json"),
                         doctest::Contains(".runs[0].pass: 'backward_filter' is not one of forward, backward_data, backward_weight"), Error);
    CHECK_THROWS_WITH_AS(io::gemm_shapes_report(gemm_shapes_doc("fp32", {{{"rows", 2.5}, {"pass", "forward"}, {"class_time_s", {{"gemm", 1e-5}}}}}, ok_verified), "g.json"),
                         doctest::Contains(".runs[0].rows: expected an integer in [1, 1e9)"), Error);
    CHECK_THROWS_WITH_AS(io::gemm_shapes_report(gemm_shapes_doc("fp32", {{{"rows", 8}, {"pass", "forward"}, {"class_time_s", {{"gemm", 1e-5}}}, {"kernels_per_call", 0}}}, ok_verified), "g.json"),
                         doctest::Contains(".runs[0].kernels_per_call: expected a number in [1, 1e4]"), Error);
    CHECK_THROWS_WITH_AS(io::gemm_shapes_report(io::json{{"tool", "roofplan-gemm-shapes"}}, "g.json"),
                         doctest::Contains("g.json: not a roofplan-gemm-shapes report"), Error);
    const Device& d = find_device("h200");
    const auto profile = [&](io::json table) { return io::profile_from_json({{"measured_gemm", table}}, d, "p.json"); };
    const io::json columns = io::measured_gemm_columns;
    const io::json row = {"fp32", "forward", 768, 3072, true, 128, 0.2, 4};
    CHECK(profile({{"columns", columns}, {"rows", {row}}}).measured_gemm.entries.size() == 1);
    CHECK_THROWS_WITH_AS(profile({{"columns", {"math"}}, {"rows", {row}}}), doctest::Contains("p.json: .measured_gemm.columns: expected [math, pass, in_features"), Error);
    io::json r2 = row;
    r2[4] = 1;
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", {r2}}}), doctest::Contains(".measured_gemm.rows[0]: expected a row of 8 values"), Error);
    r2 = row;
    r2[3] = 0;
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", {r2}}}), doctest::Contains(".measured_gemm.rows[0][3] (out_features): expected an integer in [1, 2^24)"), Error);
    r2 = row;
    r2[6] = 0;
    CHECK_THROWS_WITH_AS(profile({{"columns", columns}, {"rows", {r2}}}), doctest::Contains("p.json: .measured_gemm: a measured GEMM's efficiency must be in (0, 8]"), Error);
    // The table is a fraction of the roofline of the GPU that measured it: the profile's device.
    const io::json table = {{"columns", columns}, {"rows", {row}}};
    const Device& h100 = find_device("h100-sxm");
    const EfficiencyProfile on_h100 = io::profile_from_json({{"device", "h200"}, {"measured_gemm", table}}, h100, "p.json");
    CHECK(on_h100.measured_gemm.on.bandwidth_gb_s == d.bandwidth_gb_s);
    CHECK(on_h100.measured_gemm.on.peak.fp32 == d.peak.fp32);
    CHECK(io::profile_from_json({{"measured_gemm", table}}, h100, "p.json").measured_gemm.on.bandwidth_gb_s == h100.bandwidth_gb_s);
    CHECK_THROWS_WITH_AS(io::profile_from_json({{"device", "my-gpu"}, {"measured_gemm", table}}, h100, "p.json"),
                         doctest::Contains("p.json: .device: 'my-gpu' is not a built-in GPU"), Error);
    // The Hopper default's tables were measured on an H200, whichever Hopper GPU it is for.
    CHECK(default_profile(h100).measured_gemm.on.bandwidth_gb_s == d.bandwidth_gb_s);
    CHECK(default_profile(h100).measured_conv.on.bandwidth_gb_s == d.bandwidth_gb_s);
}

TEST_CASE("the Hopper default profile's measured GEMMs: sorted, keyed by their geometry, Hopper only") {
    const MeasuredGemms& t = default_profile(find_device("h200")).measured_gemm;
    REQUIRE(t.entries.size() > 1000);
    CHECK(std::is_sorted(t.entries.begin(), t.entries.end(),
                         [](const MeasuredGemm& a, const MeasuredGemm& b) { return a.order() < b.order(); }));
    for (std::size_t i = 0; i < t.entries.size(); ++i) {
        const MeasuredGemm& e = t.entries[i];
        CHECK(e.key == e.geometry.key());
        CHECK((e.efficiency > 0 && e.efficiency <= 8));
        CHECK(e.kernels >= 1);
        if (i > 0) CHECK(t.entries[i - 1].order() != e.order());
    }
    CHECK(default_profile(find_device("h100-sxm")).measured_gemm.entries.size() == t.entries.size());
    CHECK(default_profile(find_device("a100")).measured_gemm.empty());
    // BERT-base's 768 -> 3072 intermediate layer in FP32 at 128 tokens (a batch of one question), and the FP32
    // attention projections there run cuBLAS's split-K path: more than one kernel per call.
    const MeasuredPoint fc = t.at(GemmGeometry{768, 3072, true}.key(), MathClass::fp32, Pass::forward, 128);
    CHECK(fc.efficiency > 0);
    CHECK(t.at(GemmGeometry{768, 768, true}.key(), MathClass::fp32, Pass::forward, 128).kernels > 1);
}

TEST_CASE("the H200 tables predict the H100's own shape-by-shape measurements (cross-GPU transfer)") {
    // validation/results/2026-11-24-h100-shapes: the same GEMM and BF16/FP16 convolution micro-benchmarks run on an
    // H100.  Predicted with the Hopper default profile (the H200's tables moved by each pass's bound), against the
    // H100's measured time of every verified pass.
    const Device& h100 = find_device("h100-sxm");
    const EfficiencyProfile profile = default_profile(h100);
    const std::string dir = ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-24-h100-shapes/";
    const Measurements gemm = io::gemm_shapes_report(io::parse(io::read_text(dir + "gemm_shapes_h100.json"), "g"), "g");
    const Measurements conv = io::conv_shapes_report(io::parse(io::read_text(dir + "conv_shapes_bf16_fp16_h100.json"), "c"), "c");
    std::vector<double> small, large;  // predicted / measured - 1
    for (const GemmShapeSample& s : gemm.gemm_shapes) {
        const MathClass math = math_class(h100, s.precision, Mode::train);
        layers::Linear::Config c;
        c.in_features = s.geometry.in_features, c.out_features = s.geometry.out_features, c.bias = s.geometry.bias;
        c.rows = s.rows;
        const auto width = static_cast<double>(element_bytes(s.precision));
        const Kernel k = eager::linear_pass_kernel(layers::Linear(c), 1, s.pass, width, HostOp::none);
        const KernelTime t = Roofline(h100, profile, math).time(k);
        (s.rows <= 1024 ? small : large).push_back(t.total_s / s.seconds - 1);
    }
    for (const ConvShapeSample& s : conv.conv_shapes) {
        const MathClass math = math_class(h100, s.precision, Mode::train);
        const Kernel k = eager::conv_pass_kernel(layers::Conv2D(s.geometry.config()), s.batch, s.pass, 2.0,
                                                 s.geometry.layout, HostOp::none);
        const KernelTime t = Roofline(h100, profile, math).time(k);
        if (profile.measured_conv.at(k.conv_shape, math, s.pass, static_cast<double>(s.batch)).efficiency <= 0) continue;
        (s.batch <= 8 ? small : large).push_back(t.total_s / s.seconds - 1);
    }
    const auto at = [](std::vector<double> v, double q) {
        std::sort(v.begin(), v.end());
        return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
    };
    REQUIRE(small.size() > 500);
    REQUIRE(large.size() > 1000);
    MESSAGE("H200 tables on the H100: small passes median ", at(small, 0.5), " p10 ", at(small, 0.1), " p90 ", at(small, 0.9),
            "; large passes median ", at(large, 0.5), " p10 ", at(large, 0.1), " p90 ", at(large, 0.9));
    // Treating every pass as a fraction of the roofline predicted the small, latency-bound ones up to 43% slow (the
    // bandwidth ratio); the bound-aware transfer keeps both within a few percent in the median.
    CHECK(std::abs(at(small, 0.5)) < 0.06);
    CHECK(std::abs(at(large, 0.5)) < 0.04);
    CHECK(at(small, 0.9) < 0.15);
    CHECK(at(large, 0.9) < 0.15);
    CHECK(at(small, 0.1) > -0.2);
    CHECK(at(large, 0.1) > -0.2);
}

TEST_CASE("a measured table's hash index finds what a search of the table finds, hits and misses") {
    // The built-in tables and one kept at run time carry an index (groups, samples, hash slots); the same lookups
    // without it search the sorted table.  Every group is looked up below, between and above its coordinates.
    const EfficiencyProfile p = default_profile(find_device("h200"));
    const auto check = [](const auto& table) {
        REQUIRE(!table.index.slots.empty());
        int looked = 0;
        for (const auto& e : table.entries)
            for (const double x : {0.5, e.coordinate(), e.coordinate() * 1.37 + 0.5, 1e9}) {
                const MeasuredPoint a = detail::measured_point(table.entries, table.index, e.key, e.math, e.pass, e.conversions, x);
                const MeasuredPoint b = detail::measured_point(table.entries, {}, e.key, e.math, e.pass, e.conversions, x);
                CHECK(a.efficiency == b.efficiency);
                CHECK(a.kernels == b.kernels);
                CHECK(a.efficiency > 0);
                ++looked;
            }
        const auto& e = table.entries.front();
        CHECK(detail::measured_point(table.entries, table.index, e.key + 1, e.math, e.pass, e.conversions, 8.0).efficiency == 0);
        CHECK(detail::measured_point(table.entries, table.index, e.key, MathClass::int8_dp4a, e.pass, e.conversions, 8.0).efficiency == 0);
        return looked;
    };
    CHECK(check(p.measured_conv) > 4000);
    CHECK(check(p.measured_gemm) > 1000);
    std::vector<MeasuredConv> some(p.measured_conv.entries.begin(), p.measured_conv.entries.begin() + 50);
    std::reverse(some.begin(), some.end());
    const MeasuredConvs kept = keep(std::move(some), "test");
    CHECK(check(kept) == 200);
}

TEST_CASE("batch norm in eval mode: the native transform's class, fitted from the recorded bn_infer cases") {
    // validation/results/2026-11-24-h200-bn-infer: PyTorch's native kernels (bf16 channels-last) get their own
    // class; cuDNN's (FP32 NCHW, fp16 NHWC) are recorded but inform no class.
    const std::string file = ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-24-h200-bn-infer/ops_bn_infer_h200.json";
    const Measurements m = io::operator_report(io::parse(io::read_text(file), file), file);
    int native = 0;
    for (const OperatorSample& s : m.operators) {
        const auto c = calibration::class_of(s);
        if (s.backend == "Native") {
            REQUIRE(c);
            CHECK(c->first == KernelClass::batch_norm_inference);
            ++native;
        } else {
            CHECK(!c);
        }
    }
    CHECK(native == 7);
    const Device& d = find_device("h200");
    EfficiencyProfile p = default_profile(d);
    calibration::fit_kernel_classes(m.operators, d, p);
    CHECK(p.kernel_class[KernelClass::batch_norm_inference].memory == doctest::Approx(0.461).epsilon(0.01));
    CHECK(p.kernel_class[KernelClass::batch_norm_inference].fixed_s == doctest::Approx(3.2e-6).epsilon(0.05));
    // The eager runtime uses it for the native transform in inference only.
    const Model r50 = models::build("resnet50");
    const auto kinds = [&](Precision pr, Mode mode) {
        std::map<KernelClass, int> n;
        for (const Kernel& k : lower(r50, 8, {pr, mode, Optimizer::sgd, false}, Runtime::eager).kernels)
            if (k.what == "batch norm" || k.what == "batch norm transform") ++n[k.kind];
        return n;
    };
    CHECK(kinds(Precision::amp_bf16, Mode::infer)[KernelClass::batch_norm_inference] == 53);
    CHECK(kinds(Precision::amp_bf16, Mode::train)[KernelClass::batch_norm_inference] == 0);
    CHECK(kinds(Precision::fp32, Mode::infer)[KernelClass::batch_norm_nchw] == 53);  // cuDNN's NCHW kernel
}

TEST_CASE("GradScaler's host costs from the recorded interleaved pairs (three runs, pooled)") {
    // validation/results/2026-11-24-h200-scaler-interleaved: the fit the defaults (HostCosts) were set from.
    std::vector<HostSample> all;
    for (const char* run : {"1", "2", "3"}) {
        const std::string file = std::string(ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-24-h200-scaler-interleaved/"
                                             "ops_scaler_host_h200_run") + run + ".json";
        const Measurements m = io::operator_report(io::parse(io::read_text(file), file), file);
        std::size_t pairs = 0;
        for (const HostSample& h : m.host) pairs += h.name.starts_with("scaler: ") ? 1 : 0;
        CHECK(pairs == 6);
        all.insert(all.end(), m.host.begin(), m.host.end());
    }
    HostCosts h;
    h.scaler_per_tensor_s = h.scaler_s = 0;
    CHECK(calibration::fit_scaler_host(all, h) == 2);
    CHECK(h.scaler_per_tensor_s == doctest::Approx(HostCosts{}.scaler_per_tensor_s).epsilon(0.01));
    CHECK(h.scaler_s == doctest::Approx(HostCosts{}.scaler_s).epsilon(0.01));
}

namespace {
/// A block_host section whose rounds all read `probe_us` and time each case as `host_us[case]`.
io::json block_host_report(const std::map<std::string, double>& host_us, const std::vector<double>& probes) {
    io::json cases = io::json::array(), rounds = io::json::array();
    for (const auto& [name, t] : host_us) cases.push_back(name);
    for (double p : probes) {
        io::json per = io::json::object();
        for (const auto& [name, t] : host_us) per[name] = {t, t};
        rounds.push_back({{"probe_us", {p, p}}, {"host_wall_us", per}});
    }
    return {{"tool", "roofplan-ops"}, {"schema", 1}, {"provenance", {{"date_utc", "synthetic"}}}, {"cases", io::json::array()},
            {"block_host", {{"cases", cases}, {"rounds", rounds}}}};
}
}  // namespace

TEST_CASE("a transformer block's own Python: the recorded block_host rounds give the defaults; known residuals come back") {
    const Device& d = find_device("h200");
    // validation/results/2026-11-24-h200-block-host: the fit the defaults (HostCosts::block_*_s) were set from.
    const std::string dir = ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-24-h200-block-host/";
    const std::string file = dir + "ops_block_host_h200.json";
    const Measurements m = io::operator_report(io::parse(io::read_text(file), file), file);
    std::size_t blocks = 0;
    for (const HostSample& h : m.host) blocks += h.name.starts_with("block: ") ? 1 : 0;
    CHECK(blocks == 20);  // 16 model cases, 4 optimizer cases
    EfficiencyProfile fitted = default_profile(d);
    const calibration::BlockHostFit fit = calibration::fit_block_host(m.host, d, fitted);
    CHECK(fit.fitted == 3);
    CHECK(fitted.host.block_python_s == doctest::Approx(HostCosts{}.block_python_s).epsilon(0.02));
    CHECK(fitted.host.block_autocast_s == doctest::Approx(HostCosts{}.block_autocast_s).epsilon(0.02));
    CHECK(fitted.host.block_autograd_s == doctest::Approx(HostCosts{}.block_autograd_s).epsilon(0.02));
    // The measured slopes (README's table): BERT 405/756/901 us a layer, GPT-2 515/821/981.
    CHECK(fit.measured[0][0] * 1e6 == doctest::Approx(404.8).epsilon(0.01));
    CHECK(fit.measured[1][2] * 1e6 == doctest::Approx(981.1).epsilon(0.01));
    // The kernel gap: the median of the five chains' medians.
    const std::string gaps = dir + "ops_kernel_gap_h200.json";
    const Measurements g = io::operator_report(io::parse(io::read_text(gaps), gaps), gaps);
    REQUIRE(g.kernel_gaps.size() == 5);
    const calibration::Calibration c = calibration::fit(g, d);
    CHECK(c.profile.kernel_gap_s == doctest::Approx(0.99e-6).epsilon(0.05));

    // Synthetic: the runtime's own charge for each tiny model plus residuals per layer that the fit must return.
    EfficiencyProfile bare = default_profile(d);
    bare.host.block_python_s = bare.host.block_autocast_s = bare.host.block_autograd_s = 0;
    const std::array<std::array<double, 3>, 2> residual{{{50e-6, 120e-6, 200e-6}, {70e-6, 160e-6, 260e-6}}};
    const std::array<std::pair<const char*, std::pair<Precision, Mode>>, 3> modes{
        {{"infer fp32", {Precision::fp32, Mode::infer}}, {"infer amp-bf16", {Precision::amp_bf16, Mode::infer}},
         {"train forward amp-bf16", {Precision::amp_bf16, Mode::train}}}};
    std::map<std::string, double> host_us;
    for (int family = 0; family < 2; ++family)
        for (int layers : {1, 4})
            for (std::size_t i = 0; i < modes.size(); ++i) {
                const Model model = calibration::block_host_model(family == 1, layers);
                const auto [precision, mode] = modes[i].second;
                const double t = calibration::predicted_forward_host(model, d, bare, precision, mode) + 300e-6 +
                                 layers * residual[family][i];
                host_us[std::string(family == 1 ? "gpt2" : "bert") + " L" + std::to_string(layers) + " " + modes[i].first] = t * 1e6;
            }
    const io::json synthetic = block_host_report(host_us, std::vector<double>(12, 1.2));
    const Measurements s = io::operator_report(synthetic, "synthetic.json");
    EfficiencyProfile recovered = default_profile(d);
    CHECK(calibration::fit_block_host(s.host, d, recovered).fitted == 3);
    CHECK(recovered.host.block_python_s == doctest::Approx(60e-6).epsilon(1e-6));
    CHECK(recovered.host.block_autocast_s == doctest::Approx(80e-6).epsilon(1e-6));
    CHECK(recovered.host.block_autograd_s == doctest::Approx(90e-6).epsilon(1e-6));
    // ... and `roofplan calibrate` on the report alone fits them (no operator cases needed).
    CHECK(calibration::fit(s, d).profile.host.block_python_s == doctest::Approx(60e-6).epsilon(1e-6));

    // Bad input: too few rounds in the fast state; a missing case; a probe that is not a number.
    std::vector<double> spread;
    for (int i = 1; i <= 12; ++i) spread.push_back(i);
    CHECK_THROWS_WITH_AS(io::operator_report(block_host_report(host_us, spread), "few.json"),
                         doctest::Contains("few.json: .block_host: 1 rounds in the host's fast state"), Error);
    std::map<std::string, double> partial = host_us;
    partial.erase("gpt2 L4 infer fp32");
    const Measurements p = io::operator_report(block_host_report(partial, std::vector<double>(12, 1.2)), "partial.json");
    EfficiencyProfile untouched = default_profile(d);
    CHECK_THROWS_WITH_AS(calibration::fit_block_host(p.host, d, untouched), doctest::Contains("gpt2 L1/L4 infer fp32"), Error);
    io::json bad = block_host_report(host_us, std::vector<double>(12, 1.2));
    bad["block_host"]["rounds"][3]["probe_us"][1] = "fast";
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "bad.json"),
                         doctest::Contains("bad.json: .block_host.rounds[3].probe_us[1]: expected a non-negative finite number"),
                         Error);
}

TEST_CASE("reductions: a class of their own from op_bench's reduce cases, the semaphore fill taken off first") {
    const Device& d = find_device("h200");
    const double bw = d.bandwidth_gb_s * 1e9;
    EfficiencyProfile p = default_profile(d);
    // Synthetic: a memset class (fitted from its own cases, which set its fixed cost), then column sums that
    // launch the fill and the reduction, and global pools that launch the reduction alone.
    std::vector<OperatorSample> samples;
    for (double n : {1e5, 1e6, 1e7}) {
        OperatorSample z;
        z.op = "zero_";
        z.dtype = "fp32";
        z.numel = n;
        z.bytes = 4 * n;
        z.seconds = 2e-6 + z.bytes / (0.9 * bw);
        samples.push_back(z);
    }
    for (double n : {1e5, 1e6, 1e7, 1e8}) {
        OperatorSample s;
        s.op = "sum_dim0";
        s.dtype = "bf16";
        s.numel = n;
        s.bytes = 2 * n;
        s.kernels = 2;
        s.seconds = 2e-6 + 6e-6 + s.bytes / (0.45 * bw);
        samples.push_back(s);
        OperatorSample a = s;
        a.op = "adaptive_avg_pool2d";
        a.kernels = 1;
        a.seconds = 6e-6 + a.bytes / (0.45 * bw);
        samples.push_back(a);
    }
    calibration::fit_kernel_classes(samples, d, p);
    CHECK(p.kernel_class[KernelClass::memset].fixed_s == doctest::Approx(2e-6).epsilon(1e-6));
    CHECK(p.kernel_class[KernelClass::reduction].memory == doctest::Approx(0.45).epsilon(1e-6));
    CHECK(p.kernel_class[KernelClass::reduction].fixed_s == doctest::Approx(6e-6).epsilon(1e-6));

    // The recorded H200 cases (validation/results/2026-11-25-h200-reduce), with the operator reports' memset class.
    const auto read = [](const std::string& file) {
        return io::operator_report(io::parse(io::read_text(file), file), file).operators;
    };
    std::vector<OperatorSample> recorded =
        read(ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-23-h200-ops/ops_inner_h200.json");
    const std::vector<OperatorSample> reduce =
        read(ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-25-h200-reduce/ops_reduce_h200.json");
    REQUIRE(reduce.size() == 66);
    for (const OperatorSample& s : reduce) {
        const auto c = calibration::class_of(s);
        REQUIRE(c);
        CHECK(c->first == KernelClass::reduction);
    }
    EfficiencyProfile without = default_profile(d);
    calibration::fit_kernel_classes(recorded, d, without);
    // Without reduction cases the class keeps its prior (the Hopper defaults: this fit with the H100's cases) ...
    CHECK(without.kernel_class[KernelClass::reduction].memory == default_profile(d).kernel_class[KernelClass::reduction].memory);
    CHECK(streamed(d, without, KernelClass::reduction) < 0.6 * streamed(d, without, KernelClass::elementwise));
    CHECK(streamed(d, without, KernelClass::reduction) == doctest::Approx(0.456).epsilon(0.05));
    recorded.insert(recorded.end(), reduce.begin(), reduce.end());
    EfficiencyProfile with = default_profile(d);
    const auto fits = calibration::fit_kernel_classes(recorded, d, with);
    // ... with them, its own: under half the bandwidth on bf16 (memory and SM sides, the FP32 and bf16 cases
    // separating them) and 6 us a kernel (a bias gradient is far slower than an elementwise kernel moving the same
    // bytes).
    CHECK(with.kernel_class[KernelClass::reduction].memory == doctest::Approx(0.494).epsilon(0.02));
    CHECK(with.kernel_class[KernelClass::reduction].sm_elements_per_cycle > 0);
    CHECK(streamed(d, with, KernelClass::reduction) == doctest::Approx(0.442).epsilon(0.02));
    CHECK(with.kernel_class[KernelClass::reduction].fixed_s == doctest::Approx(5.9e-6).epsilon(0.05));
    CHECK(with.kernel_class[KernelClass::elementwise].memory == without.kernel_class[KernelClass::elementwise].memory);
    const auto fit = std::find_if(fits.begin(), fits.end(), [](const auto& f) { return f.kind == KernelClass::reduction; });
    REQUIRE(fit != fits.end());
    CHECK(fit->samples == 66);
    CHECK(fit->median_rel_error < 0.35);
    // BERT's bias gradient ([8192, 768] bf16, a batch of 64 at 128 tokens) against its recorded time, 17.7 us for
    // the fill and the sum (taken back to back): within the fit's median error.
    const Roofline with_r(d, with, MathClass::bf16_tensor);
    Kernel k;
    k.kind = KernelClass::reduction;
    k.bytes_read = 2.0 * 8192 * 768;
    k.bytes_written = 2.0 * 768;
    Kernel fill;
    fill.kind = KernelClass::memset;
    fill.bytes_written = 4.0 * 768;
    const double predicted = with_r.time(k).total_s + with_r.time(fill).total_s;
    CHECK(predicted == doctest::Approx(17.7e-6).epsilon(0.3));
    // The elementwise curve the class had before its own cases: far too fast.
    EfficiencyProfile elementwise = with;
    elementwise.kernel_class[KernelClass::reduction] = with.kernel_class[KernelClass::elementwise];
    const Roofline elementwise_r(d, elementwise, MathClass::bf16_tensor);
    CHECK(elementwise_r.time(k).total_s + elementwise_r.time(fill).total_s < 0.7 * 17.7e-6);
}

TEST_CASE("casts: to FP32 a class of its own (PyTorch's unrolled copy), to fp16/bf16 the vectorized copy_cast") {
    // validation/results/2026-11-23-h200-ops: the cast cases of op_bench, back to back.
    const std::string file = ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-23-h200-ops/ops_inner_h200.json";
    const Measurements m = io::operator_report(io::parse(io::read_text(file), file), file);
    int widening = 0, narrowing = 0;
    for (const OperatorSample& s : m.operators) {
        if (!s.op.starts_with("cast_")) continue;
        const auto c = calibration::class_of(s);
        REQUIRE(c);
        if (s.op == "cast_bf16_to_fp32" || s.op == "cast_fp16_to_fp32") {
            CHECK(c->first == KernelClass::widening_cast);
            ++widening;
        } else {
            CHECK(c->first == KernelClass::copy_cast);
            ++narrowing;
        }
    }
    CHECK(widening == 16);
    CHECK(narrowing == 16);
    const Device& d = find_device("h200");
    EfficiencyProfile p = default_profile(d);
    const auto fits = calibration::fit_kernel_classes(m.operators, d, p);
    CHECK(p.kernel_class[KernelClass::widening_cast].memory == doctest::Approx(0.464).epsilon(0.01));
    CHECK(p.kernel_class[KernelClass::widening_cast].fixed_s == doctest::Approx(4.2e-6).epsilon(0.02));
    CHECK(p.kernel_class[KernelClass::copy_cast].memory == doctest::Approx(0.884).epsilon(0.01));
    CHECK(p.kernel_class[KernelClass::copy_cast].fixed_s == doctest::Approx(2.65e-6).epsilon(0.02));
    // Split by direction, each curve reproduces its cases closely (pooled they were off by 23% at the median).
    for (const auto& f : fits)
        if (f.kind == KernelClass::copy_cast || f.kind == KernelClass::widening_cast) CHECK(f.median_rel_error < 0.07);
    // The Hopper defaults fit these cases with the H100's (an SM-side term): on the H200 within 12% of this fit.
    const EfficiencyProfile defaults = default_profile(d);
    CHECK(streamed(d, defaults, KernelClass::widening_cast) == doctest::Approx(0.464).epsilon(0.12));
    CHECK(defaults.kernel_class[KernelClass::widening_cast].fixed_s == doctest::Approx(4.2e-6).epsilon(0.08));
    // The eager runtime: under autocast a linear layer's weight and bias are cast down in the forward and their
    // gradients up in the backward; an FP32 run casts nothing.
    // Every kernel of a name has one class (a name maps to one direction): a name with two classes is absent.
    const auto casts = [](Precision pr, const char* model = "bert-base") {
        std::map<std::string, KernelClass> out;
        std::set<std::string> mixed;
        for (const Kernel& k : lower(models::build(model), 8, {pr, Mode::train, Optimizer::adam, false}, Runtime::eager).kernels)
            if (k.what.starts_with("cast")) {
                const auto [it, fresh] = out.emplace(std::string(k.what), k.kind);
                if (!fresh && it->second != k.kind) mixed.insert(it->first);
            }
        for (const std::string& m : mixed) out.erase(m);
        return out;
    };
    const auto amp = casts(Precision::amp_bf16);
    CHECK(amp.at("cast weight") == KernelClass::copy_cast);
    CHECK(amp.at("cast weight gradient") == KernelClass::widening_cast);
    CHECK(amp.at("cast bias gradient") == KernelClass::widening_cast);
    CHECK(amp.at("cast input") == KernelClass::copy_cast);               // layer norm's FP32 output into a linear
    CHECK(amp.at("cast input gradient") == KernelClass::widening_cast);  // ... and its gradient back
    CHECK(amp.at("cast logits to fp32") == KernelClass::widening_cast);
    CHECK(amp.at("cast gradient") == KernelClass::copy_cast);  // every gradient cast back down (layer norm's, the loss's)
    const auto gpt2 = casts(Precision::amp_bf16, "gpt2");
    CHECK(gpt2.at("cast to fp32") == KernelClass::widening_cast);  // the tanh GELU's input, up
    CHECK(gpt2.at("cast gradient") == KernelClass::copy_cast);
    CHECK(casts(Precision::fp32).empty());
}

TEST_CASE("a class curve's three terms are recovered from two GPUs' or two dtypes' synthetic cases; bounds and one of each") {
    using calibration::detail::ClassPoint;
    using calibration::detail::fit_class_curve;
    const std::array<std::pair<double, double>, 2> gpus{{{4.8e12, 261.36e9}, {3.35e12, 261.36e9}}};  // H200, H100
    // Cases on the first `n_gpus` GPUs in the given element widths: the SM side goes by the element.
    const auto cases = [&](double fixed, double memory, double sm, std::size_t n_gpus, std::vector<double> widths = {2.0}) {
        std::vector<ClassPoint> out;
        for (std::size_t g = 0; g < n_gpus; ++g)
            for (double width : widths)
                for (double bytes : {1e5, 1e6, 1e7, 1e8, 1e9})
                    for (double kernels : {1.0, 2.0}) {
                        const double elements = bytes / width;
                        out.push_back({kernels, bytes,
                                       kernels * fixed + bytes / (gpus[g].first * memory) + (sm > 0 ? elements / (gpus[g].second * sm) : 0),
                                       gpus[g].first, gpus[g].second, true, elements});
                    }
        return out;
    };
    // Inside the bounds: all three terms back, from two GPUs or from two dtypes on one.
    auto c = fit_class_curve(cases(3e-6, 0.7, 20, 2), 0.9);
    CHECK(c.fixed == doctest::Approx(3e-6).epsilon(1e-6));
    CHECK(1.0 / c.a == doctest::Approx(0.7).epsilon(1e-6));
    CHECK(1.0 / c.c == doctest::Approx(20).epsilon(1e-6));
    c = fit_class_curve(cases(3e-6, 0.7, 20, 1, {2.0, 4.0}), 0.9);
    CHECK(c.fixed == doctest::Approx(3e-6).epsilon(1e-6));
    CHECK(1.0 / c.a == doctest::Approx(0.7).epsilon(1e-6));
    CHECK(1.0 / c.c == doctest::Approx(20).epsilon(1e-6));
    // A memory fraction above the bound: pinned at it, the SM term takes up what it can.
    c = fit_class_curve(cases(3e-6, 0.95, 40, 2), 0.877);
    CHECK(1.0 / c.a == doctest::Approx(0.877).epsilon(1e-9));
    CHECK(c.c > 0);
    // The vertex: no fixed cost, the bound, no SM term.
    c = fit_class_curve(cases(0, 0.877, 0, 2), 0.877);
    CHECK(c.fixed == doctest::Approx(0).scale(1e-6));
    CHECK(1.0 / c.a == doctest::Approx(0.877).epsilon(1e-9));
    CHECK(c.c == 0);
    // One GPU and one dtype: the memory term alone (the SM term folds into it), as the two-term fit always did.
    c = fit_class_curve(cases(3e-6, 0.7, 20, 1), 0.9);
    CHECK(c.c == 0);
    CHECK(c.fixed == doctest::Approx(3e-6).epsilon(1e-6));
    CHECK(1.0 / c.a == doctest::Approx(1.0 / (1.0 / 0.7 + 4.8e12 / (261.36e9 * 20 * 2))).epsilon(1e-6));
    // Cases whose elements are unknown (0) cannot inform an SM side: the two-term fit, whatever the widths.
    auto unknown = cases(3e-6, 0.7, 20, 1, {2.0, 4.0});
    for (ClassPoint& p : unknown) p.elements = 0;
    CHECK(fit_class_curve(unknown, 0.9).c == 0);
}

TEST_CASE("two GPUs: the SM side of streaming classes, from an H200's and an H100's operator cases") {
    // Same SMs and clock (132 at 1,980 MHz), 4.8 against 3.35 TB/s: a layer norm takes nearly the same time on both,
    // a vectorized add 1.43x.  One GPU's cases cannot tell the two terms apart; the two GPUs' can.
    const auto ops = [](const char* path) {
        const std::string file = std::string(ROOFPLAN_SOURCE_DIR "/validation/results/") + path;
        return io::operator_report(io::parse(io::read_text(file), file), file).operators;
    };
    const Device& h200 = find_device("h200");
    const Device& h100 = find_device("h100-sxm");
    std::vector<OperatorSample> own;
    for (const char* f : {"2026-11-23-h200-ops/ops_inner_h200.json", "2026-11-25-h200-reduce/ops_reduce_h200.json",
                          "2026-11-25-h200-copy/ops_copy_h200.json", "2026-11-23-h200-pool/ops_pool_h200.json",
                          "2026-11-24-h200-bn-infer/ops_bn_infer_h200.json"})
        for (const OperatorSample& s : ops(f)) own.push_back(s);
    std::vector<OperatorSample> other;  // the H100's, marked with its GPU as `roofplan calibrate` marks them
    for (const char* f : {"2026-11-23-h100-e2e/ops_inner_h100.json", "2026-11-25-h100-reduce-copy-cast/ops_reduce_copy_cast_h100.json"})
        for (OperatorSample s : ops(f))
            if (calibration::class_of(s)) {
                s.bandwidth_b_s = h100.bandwidth_gb_s * 1e9;
                s.sm_cycles_s = h100.sms * h100.boost_clock_mhz * 1e6;
                other.push_back(s);
            }
    REQUIRE(other.size() > 300);
    // The copy fraction of the H200's bandwidth report, as `roofplan calibrate` fits it first.
    const std::string bw = ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-21-h200/bandwidth_h200.json";
    const double copy = calibration::fit(samples_of({{bw, io::parse(io::read_text(bw), bw)}}), h200).profile.memory;
    CHECK(copy == doctest::Approx(0.877).epsilon(0.002));

    EfficiencyProfile alone = default_profile(h200);
    alone.memory = copy;
    calibration::fit_kernel_classes(own, h200, alone);
    EfficiencyProfile both = alone;
    std::vector<OperatorSample> all = own;
    all.insert(all.end(), other.begin(), other.end());
    const auto fits = calibration::fit_kernel_classes(all, h200, both);
    // One GPU: an SM side only where its cases have two dtypes (FP32 and bf16); casts, fills and the optimizer's
    // cases are of one (or one mix), whose two sides only a second GPU separates.
    for (KernelClass c : {KernelClass::copy_cast, KernelClass::widening_cast, KernelClass::optimizer, KernelClass::memset,
                          KernelClass::loss, KernelClass::gather})
        CHECK(alone.kernel_class[c].sm_elements_per_cycle == 0);
    for (KernelClass c : {KernelClass::layer_norm, KernelClass::layer_norm_backward, KernelClass::layout_copy})
        CHECK(alone.kernel_class[c].sm_elements_per_cycle > 0);

    // The Hopper defaults are this fit (memory fraction, SM-side rate, fixed cost), rounded.
    const EfficiencyProfile defaults = default_profile(h200);
    for (KernelClass c : {KernelClass::elementwise, KernelClass::reduction, KernelClass::normalization, KernelClass::batch_norm,
                          KernelClass::softmax, KernelClass::copy_cast, KernelClass::widening_cast, KernelClass::layout_copy,
                          KernelClass::optimizer, KernelClass::memset, KernelClass::gather, KernelClass::loss,
                          KernelClass::layer_norm, KernelClass::layer_norm_backward, KernelClass::concat,
                          KernelClass::batch_norm_nchw, KernelClass::batch_norm_backward}) {
        CAPTURE(to_string(c));
        CHECK(defaults.kernel_class[c].memory == doctest::Approx(both.kernel_class[c].memory).epsilon(0.002));
        CHECK(defaults.kernel_class[c].sm_elements_per_cycle == doctest::Approx(both.kernel_class[c].sm_elements_per_cycle).epsilon(0.005));
        CHECK(defaults.kernel_class[c].fixed_s == doctest::Approx(both.kernel_class[c].fixed_s).epsilon(0.05));
        // No class that reads and writes streams faster than the copy kernel; a fill may.
        CHECK(both.kernel_class[c].memory <= (c == KernelClass::memset ? 1.0 : copy) + 1e-12);
    }
    // Classes the H100 lacks keep the H200's fit alone.
    CHECK(both.kernel_class[KernelClass::pooling].memory == alone.kernel_class[KernelClass::pooling].memory);
    CHECK(both.kernel_class[KernelClass::pooling].sm_elements_per_cycle == 0);

    // The physics: the large-size time ratio H100 / H200 the fit predicts, against the bandwidths' 1.43.
    const auto ratio = [&](KernelClass c) { return streamed(h200, both, c) * h200.bandwidth_gb_s / (streamed(h100, both, c) * h100.bandwidth_gb_s); };
    CHECK(ratio(KernelClass::elementwise) > 1.38);
    CHECK(ratio(KernelClass::copy_cast) == doctest::Approx(4.8 / 3.35).epsilon(0.01));
    for (KernelClass c : {KernelClass::layer_norm, KernelClass::layer_norm_backward, KernelClass::batch_norm,
                          KernelClass::batch_norm_backward, KernelClass::batch_norm_nchw, KernelClass::layout_copy,
                          KernelClass::widening_cast}) {
        CAPTURE(to_string(c));
        CHECK(ratio(c) < 1.3);
        CHECK(ratio(c) > 1.0);
    }
    CHECK(ratio(KernelClass::normalization) < 1.4);  // cuDNN's channels-last batch norm: 1.03-1.44x measured
    CHECK(ratio(KernelClass::normalization) > 1.0);
    // On the H200 the two-GPU curves stream each class within 12% of its one-GPU fit.
    for (KernelClass c : {KernelClass::reduction, KernelClass::normalization, KernelClass::batch_norm, KernelClass::softmax,
                          KernelClass::widening_cast, KernelClass::layout_copy, KernelClass::loss}) {
        CAPTURE(to_string(c));
        CHECK(streamed(h200, both, c) == doctest::Approx(streamed(h200, alone, c)).epsilon(0.12));
    }
    // The H100's own cases: its layer norms and batch norms, casts up and losses, timed with the H200's fit alone
    // (scaled by the bandwidth) and with the two-GPU fit, median |error| per class.
    const auto median_error = [&](const EfficiencyProfile& p, KernelClass kind) {
        const Roofline r(h100, p, MathClass::bf16_tensor);
        const KernelClassCost& k = p.kernel_class[kind];
        std::vector<double> errors;
        for (const OperatorSample& s : other)
            if (const auto c = calibration::class_of(s); c && c->first == kind)
                errors.push_back(std::abs((s.kernels * k.fixed_s + r.stream_time(kind, 0, s.bytes * c->second, s.bytes * c->second / calibration::element_bytes_of(s)).memory_s) / s.seconds - 1));
        std::sort(errors.begin(), errors.end());
        return errors[errors.size() / 2];
    };
    for (KernelClass c : {KernelClass::normalization, KernelClass::widening_cast, KernelClass::loss, KernelClass::optimizer}) {
        CAPTURE(to_string(c));
        MESSAGE(to_string(c), " on the H100: median |error| ", median_error(alone, c), " -> ", median_error(both, c));
        CHECK(median_error(both, c) < median_error(alone, c));
    }
    CHECK(median_error(both, KernelClass::widening_cast) < 0.08);  // 25% with the H200's fit alone
    const auto fit = std::find_if(fits.begin(), fits.end(), [](const auto& f) { return f.kind == KernelClass::normalization; });
    REQUIRE(fit != fits.end());
    CHECK(fit->sm_elements_per_cycle == doctest::Approx(both.kernel_class[KernelClass::normalization].sm_elements_per_cycle));
    CHECK(fit->samples == 56);
    CHECK(fit->own_gpu_samples == 28);  // the H200's half
    // The other GPU's cases alone: every class fitted from them is marked as that GPU's fit (no own case).
    EfficiencyProfile other_only = alone;
    for (const calibration::ClassFit& f : calibration::fit_kernel_classes(other, h200, other_only)) {
        CAPTURE(to_string(f.kind));
        CHECK(f.samples > 0);
        CHECK(f.own_gpu_samples == 0);
    }
    // A profile file keeps the terms together: written and read back, the two-GPU fit is the same; a class given a
    // memory fraction without an SM-side rate (one GPU's fit, or a file older than the field) has none, whatever
    // the defaults carry.
    EfficiencyProfile named = both;
    named.kernel_class_source = FixedString<127>("two GPUs");
    const EfficiencyProfile back = io::profile_from_json(io::to_json(named), h200, "two.json");
    CHECK(back.kernel_class[KernelClass::normalization].sm_elements_per_cycle > 0);
    for (KernelClass c : all_kernel_classes)
        CHECK(back.kernel_class[c].sm_elements_per_cycle == doctest::Approx(both.kernel_class[c].sm_elements_per_cycle));
    const io::json memory_only = {{"schema", "roofplan-profile/1"},
                                  {"kernel_class", {{"normalization", {{"memory", 0.44}}}, {"layer_norm", {{"memory", 0.5}}}}}};
    const EfficiencyProfile old = io::profile_from_json(memory_only, h200, "old.json");
    CHECK(defaults.kernel_class[KernelClass::normalization].sm_elements_per_cycle > 0);
    CHECK(old.kernel_class[KernelClass::normalization].sm_elements_per_cycle == 0);
    CHECK(old.kernel_class[KernelClass::normalization].memory == 0.44);
    CHECK(old.kernel_class[KernelClass::batch_norm].sm_elements_per_cycle == defaults.kernel_class[KernelClass::batch_norm].sm_elements_per_cycle);
}

TEST_CASE("layout copies: a class of their own from op_bench's copy cases; the lowerings' copies take it") {
    // validation/results/2026-11-25-h200-copy: heads made contiguous, the KV-cache cat, a channels-last flatten
    // (non-vectorized kernels, far below the casts' rate, their time set by their elements: about the same in FP32
    // as in bf16), and a last-axis cat (a class of its own, `concat`).
    const std::string file = ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-25-h200-copy/ops_copy_h200.json";
    const Measurements m = io::operator_report(io::parse(io::read_text(file), file), file);
    REQUIRE(m.operators.size() == 42);
    int copies = 0, cats = 0;
    for (const OperatorSample& s : m.operators) {
        const auto c = calibration::class_of(s);
        REQUIRE(c);
        CHECK(c->first == (s.op == "cat_last" ? KernelClass::concat : KernelClass::layout_copy));
        ++(s.op == "cat_last" ? cats : copies);
    }
    CHECK(copies == 32);
    CHECK(cats == 10);
    const Device& d = find_device("h200");
    EfficiencyProfile p = default_profile(d);
    const auto fits = calibration::fit_kernel_classes(m.operators, d, p);
    CHECK(p.kernel_class[KernelClass::layout_copy].sm_elements_per_cycle == doctest::Approx(3.37).epsilon(0.02));
    CHECK(streamed(d, p, KernelClass::layout_copy, 2) == doctest::Approx(0.259).epsilon(0.03));  // bf16
    CHECK(streamed(d, p, KernelClass::layout_copy, 4) == doctest::Approx(0.411).epsilon(0.03));  // FP32: fewer elements a byte
    // A concatenation's time follows its bytes (FP32 twice the bf16 time), the other copies' their elements.
    CHECK(streamed(d, p, KernelClass::concat, 4) == doctest::Approx(streamed(d, p, KernelClass::concat, 2)).epsilon(0.1));
    CHECK(streamed(d, p, KernelClass::layout_copy, 4) > 1.5 * streamed(d, p, KernelClass::layout_copy, 2));
    for (const calibration::ClassFit& f : fits) {
        CAPTURE(to_string(f.kind));
        if (f.kind == KernelClass::layout_copy) CHECK(f.median_rel_error < 0.22);  // per byte, one rate: 24%
        if (f.kind == KernelClass::concat) CHECK(f.median_rel_error < 0.03);
    }
    // The Hopper defaults (H200 and H100 cases together) are of the same kind.
    CHECK(streamed(d, default_profile(d), KernelClass::layout_copy) == doctest::Approx(0.272).epsilon(0.05));
    // The copies of the lowerings: GPT-2's heads and KV-cache cat, a TF32 ResNet's layout conversions.
    const auto kinds = [](const char* model, Precision pr) {
        std::map<std::string, KernelClass> out;
        for (const Kernel& k : lower(models::build(model), 8, {pr, Mode::train, Optimizer::sgd, false}, Runtime::eager).kernels)
            out.emplace(std::string(k.what), k.kind);
        return out;
    };
    const auto gpt2 = kinds("gpt2", Precision::amp_bf16);
    CHECK(gpt2.at("heads contiguous") == KernelClass::layout_copy);
    CHECK(gpt2.at("kv cache append (keys)") == KernelClass::layout_copy);
    CHECK(gpt2.at("concatenate qkv gradient") == KernelClass::concat);
    const auto tf32 = kinds("resnet50", Precision::tf32);
    CHECK(tf32.at("nchw to nhwc") == KernelClass::layout_copy);
}

TEST_CASE("torch.compile's generated kernels: two classes and the random draw from op_bench's generated cases") {
    // validation/results/2026-11-25-h200-generated: chains torch.compile'd alone (bf16): batch norm + residual +
    // ReLU and erf GELU (pointwise), add + layer norm and GELU backward with its bias sum (reducing), dropout and
    // dropout + add + layer norm (their time is the random draws').  Also the compiled host with CUDA graphs.
    const std::string file = ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-25-h200-generated/ops_generated_h200.json";
    const Measurements m = io::operator_report(io::parse(io::read_text(file), file), file);
    REQUIRE(m.operators.size() == 36);
    std::map<KernelClass, int> classes;
    int random = 0;
    for (const OperatorSample& s : m.operators) {
        const auto c = calibration::class_of(s);
        if (c) ++classes[c->first];
        else random += s.op.find("dropout") != std::string::npos;
    }
    CHECK(classes[KernelClass::generated] == 20);
    CHECK(classes[KernelClass::generated_reduction] == 8);
    CHECK(random == 8);
    const Device& d = find_device("h200");
    EfficiencyProfile p = default_profile(d);
    p.kernel_class[KernelClass::generated] = p.kernel_class[KernelClass::generated_reduction] = {0.9, 1e-6};
    const auto fits = calibration::fit_kernel_classes(m.operators, d, p);
    CHECK(fits.size() == 2);
    // The fit is the Hopper default's.
    for (const KernelClass c : {KernelClass::generated, KernelClass::generated_reduction}) {
        CHECK(p.kernel_class[c].memory == doctest::Approx(default_profile(d).kernel_class[c].memory).epsilon(0.01));
        CHECK(p.kernel_class[c].fixed_s == doctest::Approx(default_profile(d).kernel_class[c].fixed_s).epsilon(0.05));
    }
    CHECK(p.kernel_class[KernelClass::generated].memory == doctest::Approx(0.661).epsilon(0.01));
    CHECK(p.kernel_class[KernelClass::generated_reduction].memory == doctest::Approx(0.694).epsilon(0.01));
    // The random draw: a large dropout's time in a training forward is its draws at the vector rate, as the
    // recorded cases measured (dropout + add + layer norm, inputs requiring gradients; within 10% at 8192 and 32768
    // rows, events included); the CUDA-graph kernel gap is the Hopper default's.
    const std::string train = ROOFPLAN_SOURCE_DIR "/validation/results/2026-11-25-h200-generated/ops_generated_train_h200.json";
    const Measurements mt = io::operator_report(io::parse(io::read_text(train), train), train);
    const Roofline r(d, default_profile(d), MathClass::bf16_tensor);
    int timed = 0;
    for (const OperatorSample& s : mt.operators) {
        if (s.op != "gen_dropout_add_ln_train" || s.numel < 8192 * 768) continue;
        const KernelTime t = r.stream_time(KernelClass::generated_reduction, s.numel * compiled::random_draw_flops, s.bytes, s.bytes / 2.0);
        CHECK(t.bound == Bound::compute);
        CHECK(t.total_s == doctest::Approx(s.seconds).epsilon(0.10));
        ++timed;
    }
    CHECK(timed == 2);
    REQUIRE(mt.graph_kernel_gaps.size() == 6);
    std::vector<double> gaps = mt.graph_kernel_gaps;
    std::sort(gaps.begin(), gaps.end());
    CHECK(gaps[gaps.size() / 2] == doctest::Approx(default_profile(d).graph_kernel_gap_s).epsilon(0.02));
    CHECK(gaps.back() < 0.5 * default_profile(d).kernel_gap_s);
    // The host with CUDA graphs: the call and the share per kernel are the Hopper defaults' (HostCosts{}).
    HostCosts h;
    h.compiled_graph_call_s = h.graph_node_s = 0;
    CHECK(calibration::fit_compiled_host(m.host, h) == 4);  // default mode: 3; with CUDA graphs: the call
    CHECK(h.compiled_graph_call_s == doctest::Approx(HostCosts{}.compiled_graph_call_s).epsilon(0.01));
    CHECK(h.graph_node_s == doctest::Approx(HostCosts{}.graph_node_s).epsilon(0.02));
    // The compiled runtime's chains take the classes: BERT training's layer norms reduce, its GELU does not, and its
    // dropout chains carry their draws; ResNet-50's eval-mode batch norm + ReLU chains are pointwise.
    const auto lowered = [](const char* model, Mode mode) {
        return lower(models::build(model), 8, {Precision::amp_bf16, mode, Optimizer::adam, true}, Runtime::compiled).kernels;
    };
    const auto bert = lowered("bert-base", Mode::train);
    int dropout_chains = 0, gelu = 0, reducing = 0;
    for (const Kernel& k : bert) {
        CHECK(k.kind != KernelClass::elementwise);
        CHECK(k.kind != KernelClass::normalization);
        if (k.part == StepPart::forward && k.what == "dropout") {
            ++dropout_chains;
            CHECK(k.vector_flops > compiled::random_draw_flops * 8 * 128 * 768 * 0.99);
        }
        gelu += k.what == "gelu" && k.kind == KernelClass::generated;
        reducing += k.kind == KernelClass::generated_reduction;
    }
    CHECK(dropout_chains >= 24);
    CHECK(gelu == 12);
    CHECK(reducing >= 24);
    const auto resnet = lowered("resnet50", Mode::infer);
    CHECK(std::count_if(resnet.begin(), resnet.end(), [](const Kernel& k) { return k.kind == KernelClass::generated_reduction; }) == 1);
    CHECK(std::count_if(resnet.begin(), resnet.end(), [](const Kernel& k) { return k.kind == KernelClass::generated; }) > 50);
    // In training, PyTorch's native batch norm (amp-bf16, channels-last) splits into its statistics (a reduction)
    // and its transform (pointwise, as Inductor generates it): 53 of each, the backward alike.
    // (The statistics chain is named after its first kernel, the module's batch count.)
    int statistics = 0, transforms = 0;
    for (const Kernel& k : lowered("resnet50", Mode::train)) {
        if (k.part == StepPart::forward && k.kind == KernelClass::generated_reduction) ++statistics;
        if (k.what == "batch norm transform") transforms += k.kind == KernelClass::generated;
    }
    CHECK(statistics == 53 + 2);  // and the chain into the global average pool, and the loss
    CHECK(transforms == 53);
}

TEST_CASE("the H200's reduction, cast and layout-copy classes predict the H100's own single operators") {
    // Fitted on the H200 (fractions of its bandwidth), applied to the H100's: validation/results/
    // 2026-11-25-h100-reduce-copy-cast holds the same cases run on an H100 (validation only, never fitted).
    const auto read = [](const char* relative) {
        const std::string file = std::string(ROOFPLAN_SOURCE_DIR "/validation/results/") + relative;
        return io::operator_report(io::parse(io::read_text(file), file), file).operators;
    };
    std::vector<OperatorSample> h200 = read("2026-11-23-h200-ops/ops_inner_h200.json");
    for (const char* more : {"2026-11-25-h200-reduce/ops_reduce_h200.json", "2026-11-25-h200-copy/ops_copy_h200.json"}) {
        const auto s = read(more);
        h200.insert(h200.end(), s.begin(), s.end());
    }
    const Device& d200 = find_device("h200");
    EfficiencyProfile p = default_profile(d200);
    calibration::fit_kernel_classes(h200, d200, p);
    // Timed on the H100 as the roofline times them there: the memory side at its bandwidth, the SM side (where the
    // H200's FP32 and bf16 cases gave one) at its SMs' cycles.
    const Roofline r(find_device("h100-sxm"), p, MathClass::bf16_tensor);
    std::map<KernelClass, std::vector<double>> errors;
    for (const OperatorSample& s : read("2026-11-25-h100-reduce-copy-cast/ops_reduce_copy_cast_h100.json")) {
        const auto c = calibration::class_of(s);
        REQUIRE(c);
        const KernelClassCost& cost = p.kernel_class[c->first];
        const double fills = s.op == "sum_dim0" && s.kernels >= 1.5 ? 1.0 : 0.0;
        const double t = (s.kernels - fills) * cost.fixed_s +
                         r.stream_time(c->first, 0, s.bytes, s.bytes / calibration::element_bytes_of(s)).memory_s +
                         fills * p.kernel_class[KernelClass::memset].fixed_s;
        errors[c->first].push_back(std::abs(t / s.seconds - 1));
    }
    const auto median = [](std::vector<double> v) {
        std::sort(v.begin(), v.end());
        return v[v.size() / 2];
    };
    CHECK(errors[KernelClass::reduction].size() == 66);
    CHECK(errors[KernelClass::layout_copy].size() == 32);
    CHECK(errors[KernelClass::concat].size() == 10);
    CHECK(median(errors[KernelClass::reduction]) < 0.30);
    CHECK(median(errors[KernelClass::copy_cast]) < 0.05);
    CHECK(median(errors[KernelClass::widening_cast]) < 0.25);
    CHECK(median(errors[KernelClass::layout_copy]) < 0.20);
    // The H200's FP32 and bf16 cases alone separate the SM side, which the H100 (same SMs and clock, 30% less
    // bandwidth) runs at the H200's rate: its own layer norm backwards are predicted within 8% at the median (16%
    // with the H200's curve moved by bandwidth alone), its cuDNN channels-last batch norms within 9% (10%).
    std::map<KernelClass, std::vector<double>> inner;
    for (const OperatorSample& s : read("2026-11-23-h100-e2e/ops_inner_h100.json")) {
        const auto c = calibration::class_of(s);
        if (!s.back_to_back || !c || (c->first != KernelClass::layer_norm_backward && c->first != KernelClass::normalization))
            continue;
        const double bytes = s.bytes * c->second;
        const double t = s.kernels * p.kernel_class[c->first].fixed_s +
                         r.stream_time(c->first, 0, bytes, bytes / calibration::element_bytes_of(s)).memory_s;
        inner[c->first].push_back(std::abs(t / s.seconds - 1));
    }
    CHECK(inner[KernelClass::layer_norm_backward].size() == 10);
    CHECK(median(inner[KernelClass::layer_norm_backward]) < 0.08);
    CHECK(median(inner[KernelClass::normalization]) < 0.10);
}

TEST_CASE("host-speed sensitivities from op_bench's host_speed rounds: the recorded runs, one state, bad rounds") {
    const auto read = [](const char* relative) {
        const std::string file = std::string(ROOFPLAN_SOURCE_DIR "/validation/results/") + relative;
        return io::operator_report(io::parse(io::read_text(file), file), file);
    };
    // Run 1 gives the defaults; run 2 (the models lease) its own.
    const Measurements run1 = read("2026-11-24-h200-host-speed/ops_host_speed_h200.json");
    REQUIRE(run1.host_speed.size() == 3000);
    HostCosts h;
    const calibration::SpeedFit f1 = calibration::fit_speed_sensitivity(run1.host_speed, h);
    CHECK(f1.classes == 4);
    CHECK(f1.reports == 1);
    CHECK(f1.fast == 466);
    CHECK(f1.slow == 1733);
    CHECK(f1.view_ratio == doctest::Approx(1.98).epsilon(0.02));
    const HostCosts defaults;
    for (std::size_t c = 0; c < 4; ++c) CHECK(h.speed_sensitivity[c] == doctest::Approx(defaults.speed_sensitivity[c]).epsilon(0.005));
    const Measurements run2 = read("2026-11-24-h200-host-speed/ops_host_speed_models_h200.json");
    HostCosts h2;
    CHECK(calibration::fit_speed_sensitivity(run2.host_speed, h2).classes == 4);
    CHECK(h2.speed_sensitivity[0] == doctest::Approx(0.534).epsilon(0.01));
    CHECK(h2.speed_sensitivity[1] == doctest::Approx(0.148).epsilon(0.02));
    CHECK(h2.speed_sensitivity[2] == doctest::Approx(0.753).epsilon(0.01));
    // Two reports (two leases) are fitted one at a time and averaged, never pooled into one set of states.
    Measurements both = run1;
    append(both, run2);
    HostCosts h12;
    const calibration::SpeedFit f12 = calibration::fit_speed_sensitivity(both.host_speed, h12);
    CHECK(f12.reports == 2);
    for (std::size_t c = 0; c < 3; ++c)
        CHECK(h12.speed_sensitivity[c] == doctest::Approx((h.speed_sensitivity[c] + h2.speed_sensitivity[c]) / 2));
    // `roofplan calibrate` on the report alone writes them into a profile's host block, which reads back.
    const Device& h200 = find_device("h200");
    const calibration::Calibration cal = calibration::fit(run1, h200);
    CHECK(cal.profile.host.speed_sensitivity[0] == doctest::Approx(0.447).epsilon(0.005));
    CHECK(!cal.profile.host.source.view().starts_with("default"));
    const io::json written = io::calibration_json(cal);
    REQUIRE(written.contains("host"));
    CHECK(!written.contains("kernel_class"));  // nothing else was fitted
    const EfficiencyProfile back = io::profile_from_json(written, h200, "host-only.json");
    for (std::size_t c = 0; c < 4; ++c) CHECK(back.host.speed_sensitivity[c] == cal.profile.host.speed_sensitivity[c]);
    CHECK(!back.kernel_classes_calibrated());
    // A host that stayed in its fast state: nothing fitted, the values kept.
    std::vector<HostSpeedRound> steady(run1.host_speed.begin(), run1.host_speed.end());
    steady.erase(std::remove_if(steady.begin(), steady.end(),
                                [](const HostSpeedRound& r) { return std::max(r.probe_s[0], r.probe_s[1]) > 1.7e-6; }),
                 steady.end());
    HostCosts kept;
    kept.speed_sensitivity = {0.1, 0.2, 0.3, 1.0};
    CHECK(calibration::fit_speed_sensitivity(steady, kept).classes == 0);
    CHECK(kept.speed_sensitivity[0] == 0.1);
    // A round without a case's time, a probe that is not a number: errors naming what is wrong.
    std::vector<HostSpeedRound> missing = run1.host_speed;
    for (HostSpeedRound& r : missing) r.per_op_s.clear();  // the states are there, the view op's times are not
    HostCosts any;
    CHECK_THROWS_WITH_AS(calibration::fit_speed_sensitivity(missing, any),
                         doctest::Contains("ops_host_speed_h200.json: .host_speed: case 'view (no kernel)' is missing"),
                         std::exception);
    io::json zero = io::json::parse(R"J({"tool": "roofplan-ops", "provenance": {"date_utc": "x"}, "cases": [],
        "host_speed": {"rounds": [{"probe_us": [1.2, 1.3], "host_us_per_op": {"view (no kernel)": 0}}]}})J");
    CHECK_THROWS_WITH_AS(io::operator_report(zero, "z.json"),
                         doctest::Contains("z.json: .host_speed.rounds[0].host_us_per_op.view (no kernel): expected a positive"),
                         std::exception);
    io::json bad = io::json::parse(R"({"tool": "roofplan-ops", "provenance": {"date_utc": "x"}, "cases": [],
        "host_speed": {"rounds": [{"probe_us": [1.2, "fast"], "host_us_per_op": {}}]}})");
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "x.json"), doctest::Contains("x.json: .host_speed.rounds[0].probe_us[1]"), std::exception);
}

namespace {
/// A roofplan-ops report with only a dp_host section: replicate's Python and the threaded forwards as op_bench.py
/// writes them (microseconds keyed by the replica count).
io::json dp_host_report(const std::vector<std::tuple<std::string, double, double, double>>& replicate,
                        const std::vector<std::pair<std::string, std::map<int, double>>>& forwards,
                        const std::map<std::string, std::map<int, double>>& replicate_us) {
    io::json rep = io::json::array(), fwd = io::json::array();
    for (const auto& [model, modules, params, buffers] : replicate) {
        io::json t = io::json::object();
        for (const auto& [n, us] : replicate_us.at(model)) t[std::to_string(n)] = us;
        rep.push_back({{"model", model}, {"modules", modules}, {"parameters", params}, {"buffers", buffers}, {"host_us", t}});
    }
    for (const auto& [model, times] : forwards) {
        io::json t = io::json::object();
        for (const auto& [n, us] : times) t[std::to_string(n)] = us;
        fwd.push_back({{"model", model}, {"precision", "fp32"}, {"wall_us", t}});
    }
    return {{"tool", "roofplan-ops"}, {"schema", 1}, {"provenance", {{"date_utc", "synthetic"}}}, {"cases", io::json::array()},
            {"dp_host", {{"replicate", rep}, {"parallel_apply", fwd}, {"meta_threads", io::json::array()}}}};
}
}  // namespace

TEST_CASE("nn.DataParallel's host costs: the fit returns known costs from op_bench's dp_host records; bad records are errors") {
    const Device& d = find_device("h200");
    // Known costs: replicate = 150 us + modules x 2 us + N (modules x 6 us + tensors x 2.5 us); N forwards
    // = N (1.3 T1 + 80 us).
    const double c0 = 150, m1 = 2, m = 6, t = 2.5, share = 1.3, thread = 80;
    const std::vector<std::tuple<std::string, double, double, double>> models{
        {"resnet18", 68, 62, 60}, {"resnet50", 151, 161, 159}, {"bert-base", 229, 199, 2}, {"chain64", 65, 128, 0}};
    std::map<std::string, std::map<int, double>> replicate_us;
    for (const auto& [model, modules, params, buffers] : models)
        for (int n : {1, 2, 4, 8})
            replicate_us[model][n] = c0 + modules * m1 + n * (modules * m + (params + buffers) * t);
    std::vector<std::pair<std::string, std::map<int, double>>> forwards;
    for (const auto& [model, t1] : {std::pair<std::string, double>{"resnet18", 2500}, {"resnet50", 6000}, {"bert-base", 4500}}) {
        std::map<int, double> times{{1, t1}};
        for (int n : {2, 4, 8}) times[n] = n * (share * t1 + thread);
        forwards.emplace_back(model, times);
    }
    const Measurements s = io::operator_report(dp_host_report(models, forwards, replicate_us), "dp.json");
    CHECK(s.data_parallel_host.size() == 4 * 4 + 3 * 4);
    HostCosts h;
    const calibration::DataParallelHostFit fit = calibration::fit_data_parallel_host(s.data_parallel_host, h);
    CHECK(fit.replicate_samples == 16);
    CHECK(fit.forward_samples == 9);
    CHECK(h.dp_replicate_call_s == doctest::Approx(c0 * 1e-6).epsilon(1e-6));
    CHECK(h.dp_replicate_module_once_s == doctest::Approx(m1 * 1e-6).epsilon(1e-6));
    CHECK(h.dp_replicate_module_s == doctest::Approx(m * 1e-6).epsilon(1e-6));
    CHECK(h.dp_replicate_tensor_s == doctest::Approx(t * 1e-6).epsilon(1e-6));
    CHECK(h.dp_lock_share == doctest::Approx(share).epsilon(1e-6));
    CHECK(h.dp_thread_s == doctest::Approx(thread * 1e-6).epsilon(1e-6));
    CHECK(fit.replicate_worst < 1e-9);
    CHECK(fit.forward_worst < 1e-9);
    // `roofplan calibrate` on the report alone fits them and says how well, and the profile carries them.
    const calibration::Calibration c = calibration::fit(s, d);
    CHECK(c.profile.host.dp_lock_share == doctest::Approx(share).epsilon(1e-6));
    const bool reported = std::any_of(c.quality.begin(), c.quality.end(),
                                      [](const calibration::FitQuality& q) { return q.what.starts_with("nn.DataParallel lock share"); });
    CHECK(reported);
    const io::json written = io::to_json(c.profile);
    CHECK(written.at("host").at("dp_lock_share").get<double>() == doctest::Approx(share));
    CHECK(io::profile_from_json(written, d, "round.json").host == c.profile.host);

    // The recorded run (validation/results/2026-12-07-devvm-dp-host) gives the defaults of HostCosts.
    const std::string recorded = ROOFPLAN_SOURCE_DIR "/validation/results/2026-12-07-devvm-dp-host/ops_dp_host_devvm.json";
    const Measurements r = io::operator_report(io::parse(io::read_text(recorded), recorded), recorded);
    CHECK(r.data_parallel_host.size() == 6 * 4 + 1);  // replicate and a bare thread: the forwards need CUDA devices
    HostCosts from_record;
    const calibration::DataParallelHostFit recorded_fit = calibration::fit_data_parallel_host(r.data_parallel_host, from_record);
    CHECK(recorded_fit.replicate_samples == 24);
    CHECK(recorded_fit.forward_samples == 0);
    CHECK(recorded_fit.thread_samples == 1);
    const HostCosts defaults;
    CHECK(from_record.dp_thread_s == doctest::Approx(defaults.dp_thread_s).epsilon(0.01));
    CHECK(from_record.dp_replicate_module_s == doctest::Approx(defaults.dp_replicate_module_s).epsilon(0.01));
    CHECK(from_record.dp_replicate_tensor_s == doctest::Approx(defaults.dp_replicate_tensor_s).epsilon(0.02));
    CHECK(from_record.dp_replicate_call_s == doctest::Approx(defaults.dp_replicate_call_s).epsilon(0.02));
    CHECK(from_record.dp_replicate_module_once_s == doctest::Approx(defaults.dp_replicate_module_once_s).epsilon(0.02));
    CHECK(from_record.dp_lock_share == defaults.dp_lock_share);  // no forwards recorded: the prior stays
    CHECK(recorded_fit.replicate_median < 0.2);
    // The H200 lease's host (validation/results/2026-12-07-h200-dp-host): replicate and parallel_apply whole, no bare
    // thread (the run ended in its meta-device part). Its fit, as that folder's README quotes it, is the slow
    // host state's and is not adopted: the defaults stay the dev VM's (they match this host's fast rounds).
    const std::string h200_run = ROOFPLAN_SOURCE_DIR "/validation/results/2026-12-07-h200-dp-host/ops_dp_host_h200.json";
    const Measurements h200 = io::operator_report(io::parse(io::read_text(h200_run), h200_run), h200_run);
    HostCosts from_h200;
    const calibration::DataParallelHostFit h200_fit = calibration::fit_data_parallel_host(h200.data_parallel_host, from_h200);
    CHECK(h200_fit.replicate_samples == 24);
    CHECK(h200_fit.forward_samples == 18);
    CHECK(h200_fit.thread_samples == 0);
    CHECK(from_h200.dp_replicate_module_s == doctest::Approx(16.4e-6).epsilon(0.01));
    CHECK(from_h200.dp_replicate_tensor_s == doctest::Approx(11.64e-6).epsilon(0.01));
    CHECK(from_h200.dp_replicate_call_s == doctest::Approx(47.99e-6).epsilon(0.01));
    CHECK(from_h200.dp_replicate_module_once_s == doctest::Approx(13.49e-6).epsilon(0.01));
    CHECK(from_h200.dp_lock_share == doctest::Approx(1.579).epsilon(0.01));
    CHECK(from_h200.dp_thread_s == doctest::Approx(1.811e-3).epsilon(0.01));
    CHECK(h200_fit.replicate_median == doctest::Approx(0.069).epsilon(0.05));
    // The slow state: a ResNet-50 replica's Python about twice the defaults'.
    const double slow = from_h200.dp_replicate_s(151, 320, 2) - from_h200.dp_replicate_s(151, 320, 1);
    const double kept = defaults.dp_replicate_s(151, 320, 2) - defaults.dp_replicate_s(151, 320, 1);
    CHECK(slow / kept == doctest::Approx(1.93).epsilon(0.02));

    // A single model's threaded forwards cannot separate a thread's cost from the share: not fitted.
    std::vector<DataParallelHostSample> one_model;
    for (const DataParallelHostSample& x : s.data_parallel_host)
        if (x.part == DataParallelHostSample::Part::forward && x.model.starts_with("resnet50")) one_model.push_back(x);
    HostCosts untouched;
    CHECK(calibration::fit_data_parallel_host(one_model, untouched).forward_samples == 0);
    CHECK(untouched == HostCosts{});

    // Bad input: a replica count that is not one, a time that is not positive, a profile's share above 8.
    io::json bad = dp_host_report(models, forwards, replicate_us);
    bad["dp_host"]["replicate"][1]["host_us"]["two"] = 5.0;
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "bad.json"),
                         doctest::Contains("bad.json: .dp_host.replicate[1].host_us.two: expected a replica count in [1, 1024]"), Error);
    bad = dp_host_report(models, forwards, replicate_us);
    bad["dp_host"]["parallel_apply"][0]["wall_us"]["4"] = -3.0;
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "neg.json"),
                         doctest::Contains("neg.json: .dp_host.parallel_apply[0].wall_us.4: expected a positive finite time"), Error);
    io::json profile = written;
    profile["host"]["dp_lock_share"] = 9.5;
    CHECK_THROWS_WITH_AS((void)io::profile_from_json(profile, d, "share.json"), doctest::Contains("dp_lock_share must be a number in [0, 8]"), Error);
}

TEST_CASE("AdamW's split from op_bench's adam_split_host records: a share before each operation, written and read back; bad records are errors") {
    const Device& d = find_device("h200");
    // Known Python: before the first call 40 us + 4 us a tensor; the bias corrections (the gap before
    // _foreach_sqrt) 5 us + 6 us a tensor; each call 10 us + 0.25 us a tensor; 2 us between calls, 1 us after.
    const std::vector<std::string> calls{"_foreach_add_(cpu)", "_foreach_mul_(cuda)", "_foreach_lerp_(cuda)", "_foreach_mul_(cuda)",
                                         "_foreach_addcmul_(cuda)", "_foreach_sqrt(cuda)", "_foreach_div_(cuda)",
                                         "_foreach_add_(cuda)", "_foreach_addcdiv_(cuda)"};
    io::json cases = io::json::array();
    for (int n : {16, 64, 256}) {
        io::json gaps = io::json::array(), inside = io::json::array();
        gaps.push_back(40 + 4.0 * n);
        double step = gaps[0].get<double>();
        for (std::size_t i = 0; i < calls.size(); ++i) {
            inside.push_back(10 + 0.25 * n);
            gaps.push_back(i + 1 == calls.size() ? 1.0 : (calls[i + 1].starts_with("_foreach_sqrt") ? 5 + 6.0 * n : 2.0));
            step += inside[i].get<double>() + gaps[i + 1].get<double>();
        }
        cases.push_back({{"case", "adamw split: " + std::to_string(n) + " tensors of 256"}, {"tensors", n}, {"foreach_calls", calls},
                         {"gap_us", gaps}, {"call_us", inside}, {"host_us_step_instrumented", step}});
    }
    cases.push_back({{"case", "adamw split: 1024 tensors of 256"}, {"skipped", "deadline"}});
    const io::json report{{"tool", "roofplan-ops"}, {"schema", 1}, {"provenance", {{"date_utc", "synthetic"}}},
                          {"cases", io::json::array()}, {"adam_split_host", cases}};
    const Measurements s = io::operator_report(report, "split.json");
    CHECK(s.host.size() == 3 * 9);
    // Per tensor: the first operation 4 + 0.25 (the CPU step counts' call) + 0.25; the square root 6 + 0.25; the
    // six others 0.25 each: 12.25 us in all.
    const calibration::Calibration c = calibration::fit(s, d);
    const std::array<double, 8> expected{4.5, 0.25, 0.25, 0.25, 6.25, 0.25, 0.25, 0.25};
    for (std::size_t k = 0; k < 8; ++k) CHECK(c.profile.host.adam_op_shares[k] == doctest::Approx(expected[k] / 12.25).epsilon(1e-6));
    const bool reported = std::any_of(c.quality.begin(), c.quality.end(), [](const calibration::FitQuality& q) {
        return q.what.starts_with("AdamW per-tensor Python: share before its first op") && q.samples == 3;
    });
    CHECK(reported);
    const io::json written = io::to_json(c.profile);
    CHECK(written.at("host").at("adam_op_shares").size() == 8);
    CHECK(written.at("host").at("adam_op_shares")[4].get<double>() == doctest::Approx(6.25 / 12.25));
    CHECK(io::profile_from_json(written, d, "round.json").host == c.profile.host);

    io::json bad = report;
    bad["adam_split_host"][0]["foreach_calls"][5] = "_foreach_exp(cuda)";
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "nosqrt.json"),
                         doctest::Contains("nosqrt.json: .adam_split_host[0].foreach_calls: expected AdamW's 8 foreach operations on the GPU, the fifth _foreach_sqrt (found 8"), Error);
    bad = report;
    bad["adam_split_host"][0]["foreach_calls"][2] = "_foreach_lerp_(cpu)";
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "seven.json"), doctest::Contains("(found 7 on the GPU)"), Error);
    bad = report;
    bad["adam_split_host"][1]["gap_us"].erase(0);
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "short.json"),
                         doctest::Contains("short.json: .adam_split_host[1]: .call_us needs one time per foreach call and .gap_us one more"), Error);
    bad = report;
    bad["adam_split_host"][2]["call_us"][7] = -1.0;
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "neg.json"),
                         doctest::Contains("neg.json: .adam_split_host[2].call_us[7]: expected a non-negative finite number"), Error);
    bad = report;
    bad["adam_split_host"][0]["host_us_step_instrumented"] = 10.0;
    CHECK_THROWS_WITH_AS(io::operator_report(bad, "small.json"), doctest::Contains("must be positive and at least the sum of its gaps and calls"), Error);
    io::json profile = written;
    profile["host"]["adam_op_shares"][0] = 1.5;
    CHECK_THROWS_WITH_AS((void)io::profile_from_json(profile, d, "share.json"),
                         doctest::Contains("adam_op_shares: each must be a number in [0, 1]"), Error);
    profile = written;
    profile["host"]["adam_op_shares"][0] = 0.9;
    CHECK_THROWS_WITH_AS((void)io::profile_from_json(profile, d, "sum.json"), doctest::Contains("adam_op_shares must sum to 1"), Error);
    profile = written;
    profile["host"]["adam_op_shares"] = {0.5, 0.5};
    CHECK_THROWS_WITH_AS((void)io::profile_from_json(profile, d, "two.json"), doctest::Contains("expected an array of 8 shares"), Error);
    profile = written;
    profile["host"]["adam_late_share"] = 0.5;  // this session's first form of the split: now an unknown field
    CHECK_THROWS_AS((void)io::profile_from_json(profile, d, "old.json"), Error);
}

TEST_CASE("AdamW's split: the recorded runs (validation/results/2026-12-07-h100-adam-split) give HostCosts' default shares") {
    const std::string dir = std::string(ROOFPLAN_SOURCE_DIR) + "/validation/results/2026-12-07-h100-adam-split/";
    std::vector<HostSample> pooled;
    std::vector<std::array<double, 8>> runs;
    for (const char* run : {"1", "2"}) {
        const std::string file = dir + "ops_adam_split_host_run" + run + ".json";
        const Measurements m = io::operator_report(io::parse(io::read_text(file), file), file);
        CHECK(m.host.size() == 3 * 9);
        HostCosts h;
        CHECK(calibration::fit_adam_split_host(m.host, h) == 3);
        runs.push_back(h.adam_op_shares);
        pooled.insert(pooled.end(), m.host.begin(), m.host.end());
    }
    HostCosts h;
    h.adam_op_shares = {1, 0, 0, 0, 0, 0, 0, 0};
    CHECK(calibration::fit_adam_split_host(pooled, h) == 6);
    for (std::size_t k = 0; k < 8; ++k) {
        CHECK(h.adam_op_shares[k] == doctest::Approx(HostCosts{}.adam_op_shares[k]).epsilon(0.005));  // the default
        CHECK(std::abs(runs[0][k] - runs[1][k]) < 0.03);  // the two runs agree
    }
    // After the moment updates (the square root on): about half, as the first form of this split had it.
    CHECK(h.adam_op_shares[4] + h.adam_op_shares[5] + h.adam_op_shares[6] + h.adam_op_shares[7] == doctest::Approx(0.51).epsilon(0.03));
}
