// Validation: predicted vs measured per case (io/validate.hpp) and runner suite reports (io/suite.hpp).
// Figures are checked against hand-derived formulas and against numbers the CLI printed independently in
// docs/validation.md before this code existed (roofplan predict / roofplan collective).
#include <roofplan/io/calibrate.hpp>
#include <roofplan/io/suite.hpp>
#include <roofplan/io/validate.hpp>
#include <roofplan/system/systems.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace roofplan;

namespace {
io::json gemm_record(double m, double n, double k, double t, bool verified = true) {
    return {{"precision", "bf16"}, {"m", m}, {"n", n}, {"k", k}, {"count", 1}, {"time_s_median", t},
            {"verified", verified}};
}
std::string results_dir() { return std::string(ROOFPLAN_SOURCE_DIR) + "/validation/results/"; }
}  // namespace

TEST_CASE("error summary: median, nearest-rank 90th percentile, worst") {
    std::vector<io::CaseComparison> cases;
    for (int i = 1; i <= 10; ++i) cases.push_back({"g", "c", "u", 100.0, 100.0 + i, 0});  // errors 1%..10%
    const io::ErrorSummary s = io::summarize(cases);
    CHECK(s.samples == 10);
    CHECK(s.median == doctest::Approx(0.055));  // mean of the 5th and 6th
    CHECK(s.p90 == doctest::Approx(0.09));      // rank ceil(0.9 * 10) = 9
    CHECK(s.worst == doctest::Approx(0.10));
    cases.push_back({"g", "c", "u", 100.0, 50.0, 0});  // -50%: |error| counts
    CHECK(io::summarize(cases).worst == doctest::Approx(0.5));
    CHECK(io::summarize({}).samples == 0);
}

TEST_CASE("a GEMM is predicted with the engine's formula: quantized compute vs memory, plus launch") {
    const Device& d = find_device("h200");
    const EfficiencyProfile p = default_profile(d);
    // 8192^3 with 128x128 tiles: 64 x 64 = 4096 tiles on 132 SMs -> 32 waves instead of 31.03: slowdown 32*132/4096.
    const double slowdown = 32.0 * 132.0 / 4096.0;
    const double s = 8192;
    const double bytes = 3 * s * s * 2;
    const double expected = 2 * s * s * s * slowdown / (d.peak.bf16_tensor * 1e12 * p.gemm_efficiency(MathClass::bf16_tensor)) +
                            p.launch_s;
    CHECK(io::predict_gemm_seconds(MathClass::bf16_tensor, s, s, s, 1, bytes, d, p) == doctest::Approx(expected).epsilon(1e-12));
    // A GEMV-like shape is memory-bound: the memory term wins.
    const double tiny_bytes = 2.0 * (1 * 8192 + 8192 * 8192 + 8192);
    CHECK(io::predict_gemm_seconds(MathClass::bf16_tensor, 1, 8192, 8192, 1, tiny_bytes, d, p) ==
          doctest::Approx(tiny_bytes / (d.bandwidth_gb_s * 1e9 * p.memory) + p.launch_s));
    CHECK_THROWS_WITH_AS((void)io::predict_gemm_seconds(MathClass::int8_tensor, s, s, s, 1, bytes, find_device("v100"), p),
                         doctest::Contains("has no int8_tensor peak"), invalid_argument);
}

TEST_CASE("compare_gemm: verified records only, error positive when the model is optimistic") {
    const Device& d = find_device("h200");
    const EfficiencyProfile p = default_profile(d);
    const double s = 4096;
    const double predicted = io::predict_gemm_seconds(MathClass::bf16_tensor, s, s, s, 1, 3 * s * s * 2, d, p);
    const io::json report = {{"tool", "roofplan-gemm"},
                             {"results", {gemm_record(s, s, s, 2 * predicted), gemm_record(64, 64, 64, 1.0, false)}}};
    const auto cases = io::compare_gemm("r.json", report, d, p);
    REQUIRE(cases.size() == 1);
    CHECK(cases[0].group == "bf16_tensor");
    CHECK(cases[0].label == "4096x4096x4096");
    CHECK(cases[0].error() == doctest::Approx(1.0));  // measured twice as slow: the model is 100% optimistic
    CHECK(cases[0].measured == doctest::Approx(2 * s * s * s / (2 * predicted) / 1e12));
    CHECK_THROWS_WITH_AS((void)io::compare_gemm("x.json", io::json{{"tool", "roofplan-nccl"}, {"results", io::json::array()}}, d, p),
                         doctest::Contains("x.json: not a roofplan-gemm report"), invalid_argument);
}

TEST_CASE("compare_bandwidth: streaming kernels at bandwidth x memory efficiency (+ launch)") {
    const Device& d = find_device("h100-sxm");
    const EfficiencyProfile p = default_profile(d);
    const double bytes = 1 << 30;
    const double t = bytes / (d.bandwidth_gb_s * 1e9 * p.memory) + p.launch_s;
    const io::json report = {{"tool", "roofplan-bandwidth"},
                             {"results", {{{"kernel", "triad"}, {"bytes_per_iteration", bytes}, {"median_s", t}},
                                          {{"kernel", "memcpy_d2d"}, {"bytes_per_iteration", bytes}, {"median_s", t}}}}};
    const auto cases = io::compare_bandwidth("bw.json", report, d, p);
    REQUIRE(cases.size() == 1);  // memcpy is a reference, not a modelled kernel
    CHECK(cases[0].label == "triad 1 GiB");
    CHECK(cases[0].error() == doctest::Approx(0.0).epsilon(1e-12));
}

TEST_CASE("recorded runs: predictions agree with the CLI's figures in docs/validation.md") {
    // NCCL, default link model: 4 x H200 all-reduce of 1 GiB, `roofplan collective` printed 359.1 GB/s busbw.
    const io::json nccl = io::parse(io::read_text(results_dir() + "2026-11-21-h200x4/nccl_h200x4.json"), "nccl");
    const auto cases = io::compare_nccl("nccl", nccl, find_system("hgx-h200-4"), LinkParameters{});
    bool found = false;
    for (const io::CaseComparison& c : cases)
        if (c.group == "allreduce" && c.size == 1073741824.0) {
            found = true;
            CHECK(c.predicted == doctest::Approx(359.1).epsilon(0.0005));
            CHECK(c.measured == doctest::Approx(354.3).epsilon(0.0005));
        }
    CHECK(found);
    // End to end, default H200 profile: `roofplan predict` printed 7397 img/s (ResNet-50) and 5167 seq/s (BERT QA).
    const io::json e2e = io::parse(io::read_text(results_dir() + "2026-11-21-h200-e2e/e2e_h200.json"), "e2e");
    const auto runs = io::compare_e2e("e2e", e2e, find_device("h200"), default_profile(find_device("h200")));
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].predicted == doctest::Approx(7397).epsilon(0.0005));
    CHECK(runs[0].measured == doctest::Approx(4668.06).epsilon(1e-5));
    CHECK(runs[1].label.find("bert-squad seq 128") != std::string::npos);
    CHECK(runs[1].predicted == doctest::Approx(5167).epsilon(0.0005));
    CHECK_THROWS_WITH_AS((void)io::e2e_model_of("vgg"), doctest::Contains("unknown end-to-end case 'vgg'"), invalid_argument);
}

TEST_CASE("suite reports expand into their programs' reports and calibrate like them") {
    const Device& d = find_device("h200");
    const EfficiencyProfile p = default_profile(d);
    io::json results = io::json::array();
    for (double s : {1024.0, 2048.0, 4096.0, 8192.0})
        results.push_back(gemm_record(s, s, s, 1.25 * io::predict_gemm_seconds(MathClass::bf16_tensor, s, s, s, 1, 0, d, p)));
    const io::json gemm = {{"tool", "roofplan-gemm"}, {"results", results}};
    const io::json bw = {{"tool", "roofplan-bandwidth"}, {"results", {{{"kernel", "copy"}, {"gb_per_s", 4000.0}}}}};
    const io::json suite = {{"tool", "roofplan-bench"}, {"provenance", {{"date_utc", "2026-11-21T00:00:00Z"}}},
                            {"reports", {gemm, bw}}};
    const auto expanded = io::expand_reports("s.json", suite);
    REQUIRE(expanded.size() == 2);
    CHECK(expanded[0].first == "s.json#roofplan-gemm");
    CHECK(expanded[1].second.at("provenance").at("date_utc") == "2026-11-21T00:00:00Z");  // inherited
    CHECK(io::expand_reports("g.json", gemm).size() == 1);
    const io::Calibration direct = io::calibrate({{"g", gemm}, {"b", bw}}, d);
    const io::Calibration through = io::calibrate(expanded, d);
    CHECK(through.profile.gemm_efficiency(MathClass::bf16_tensor) == direct.profile.gemm_efficiency(MathClass::bf16_tensor));
    CHECK(through.profile.memory == doctest::Approx(4000.0 / 4800.0));
    CHECK_FALSE(io::suite_device("s.json", suite).has_value());
    CHECK_THROWS_WITH_AS((void)io::expand_reports("bad.json", io::json{{"tool", "roofplan-bench"}}),
                         doctest::Contains("bad.json: a roofplan-bench report needs a .reports array"), invalid_argument);
    io::json with_device = suite;
    with_device["device"] = io::to_json(find_device("t4"));
    with_device["device"]["id"] = "host-cpu";
    with_device["device"]["aliases"] = io::json::array();
    const auto host = io::suite_device("s.json", with_device);
    REQUIRE(host.has_value());
    CHECK(host->id.view() == "host-cpu");
    with_device["device"]["bandwidth_gb_s"] = -1;
    CHECK_THROWS_AS((void)io::suite_device("s.json", with_device), invalid_argument);
}
