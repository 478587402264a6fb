// Validation (validation/compare.hpp, validation/bounds.hpp) on samples read by io/reports.hpp, runner suite
// reports, and the bounds file of a recorded set.  Figures are checked against hand-derived formulas and against
// numbers the CLI printed independently in docs/validation.md before this code existed (roofplan predict /
// roofplan collective).
#include <roofplan/calibration/fit.hpp>
#include <roofplan/io/bounds.hpp>
#include <roofplan/io/reports.hpp>
#include <roofplan/system/collective_kind.hpp>
#include <roofplan/system/systems.hpp>
#include <roofplan/validation/bounds.hpp>
#include <roofplan/validation/compare.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace roofplan;
using validation::CaseComparison;

namespace {
io::json gemm_record(double m, double n, double k, double t, bool verified = true) {
    return {{"precision", "bf16"}, {"m", m}, {"n", n}, {"k", k}, {"count", 1}, {"time_s_median", t},
            {"verified", verified}};
}
std::string results_dir() { return std::string(ROOFPLAN_SOURCE_DIR) + "/validation/results/"; }
Measurements read(const std::string& file, const io::json& report) { return io::merged(io::read_reports(file, report)); }
Measurements read_file(const std::string& file) { return io::merged(io::read_report_file(file)); }

static_assert([] {
    EnumArray<Collective, int> a{{1, 2, 3, 4, 5}};
    a[Collective::reduce] = 7;
    return a[Collective::allreduce] == 1 && a[Collective::reduce] == 7 && a.size() == 5;
}());
}  // namespace

TEST_CASE("error summary: median, nearest-rank 90th percentile, worst") {
    std::vector<CaseComparison> cases;
    for (int i = 1; i <= 10; ++i) cases.push_back({"g", "c", "u", 100.0, 100.0 + i, 0});  // errors 1%..10%
    const validation::ErrorSummary s = validation::summarize(cases);
    CHECK(s.samples == 10);
    CHECK(s.median == doctest::Approx(0.055));  // mean of the 5th and 6th
    CHECK(s.p90 == doctest::Approx(0.09));      // rank ceil(0.9 * 10) = 9
    CHECK(s.worst == doctest::Approx(0.10));
    cases.push_back({"g", "c", "u", 100.0, 50.0, 0});  // -50%: |error| counts
    CHECK(validation::summarize(cases).worst == doctest::Approx(0.5));
    CHECK(validation::summarize({}).samples == 0);
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
    CHECK(predict_gemm_seconds(MathClass::bf16_tensor, s, s, s, 1, bytes, d, p) == doctest::Approx(expected).epsilon(1e-12));
    // A GEMV-like shape is memory-bound: the memory term wins.
    const double tiny_bytes = 2.0 * (1 * 8192 + 8192 * 8192 + 8192);
    CHECK(predict_gemm_seconds(MathClass::bf16_tensor, 1, 8192, 8192, 1, tiny_bytes, d, p) ==
          doctest::Approx(tiny_bytes / (d.bandwidth_gb_s * 1e9 * p.memory) + p.launch_s));
    CHECK_THROWS_WITH_AS((void)predict_gemm_seconds(MathClass::int8_tensor, s, s, s, 1, bytes, find_device("v100"), p),
                         doctest::Contains("has no int8_tensor peak"), invalid_argument);
}

TEST_CASE("compare_gemm: verified records only, error positive when the model is optimistic") {
    const Device& d = find_device("h200");
    const EfficiencyProfile p = default_profile(d);
    const double s = 4096;
    const double predicted = predict_gemm_seconds(MathClass::bf16_tensor, s, s, s, 1, 3 * s * s * 2, d, p);
    const io::json report = {{"tool", "roofplan-gemm"},
                             {"results", {gemm_record(s, s, s, 2 * predicted), gemm_record(64, 64, 64, 1.0, false)}}};
    const Measurements m = read("r.json", report);
    REQUIRE(m.gemm.size() == 1);
    CHECK(m.gemm[0].bytes == 3 * s * s * 2);  // no bytes_a/b/d: A, B and D at BF16
    const auto cases = validation::compare_gemm(m.gemm, d, p);
    REQUIRE(cases.size() == 1);
    CHECK(cases[0].group == "bf16_tensor");
    CHECK(cases[0].label == "4096x4096x4096");
    CHECK(cases[0].error() == doctest::Approx(1.0));  // measured twice as slow: the model is 100% optimistic
    CHECK(cases[0].measured == doctest::Approx(2 * s * s * s / (2 * predicted) / 1e12));
    // A report of another tool has no GEMM samples; one without .results is an error that names the file.
    CHECK(read("x.json", io::json{{"tool", "roofplan-nccl"}, {"results", io::json::array()}}).gemm.empty());
    CHECK_THROWS_WITH_AS((void)read("x.json", io::json{{"tool", "roofplan-gemm"}}),
                         doctest::Contains("x.json: a roofplan-gemm report needs a .results array"), invalid_argument);
}

TEST_CASE("compare_bandwidth: streaming kernels at bandwidth x memory efficiency (+ launch)") {
    const Device& d = find_device("h100-sxm");
    const EfficiencyProfile p = default_profile(d);
    const double bytes = 1 << 30;
    const double t = bytes / (d.bandwidth_gb_s * 1e9 * p.memory) + p.launch_s;
    const io::json report = {{"tool", "roofplan-bandwidth"},
                             {"results", {{{"kernel", "triad"}, {"bytes_per_iteration", bytes}, {"median_s", t},
                                           {"gb_per_s", bytes / t / 1e9}},
                                          {{"kernel", "memcpy_d2d"}, {"bytes_per_iteration", bytes}, {"median_s", t},
                                           {"gb_per_s", bytes / t / 1e9}}}}};
    const auto cases = validation::compare_bandwidth(read("bw.json", report).streams, d, p);
    REQUIRE(cases.size() == 1);  // memcpy is a reference, not a modelled kernel
    CHECK(cases[0].label == "triad 1 GiB");
    CHECK(cases[0].error() == doctest::Approx(0.0).epsilon(1e-12));
}

TEST_CASE("recorded runs: predictions agree with the CLI's figures in docs/validation.md") {
    // NCCL, default link model: 4 x H200 all-reduce of 1 GiB, `roofplan collective` printed 359.1 GB/s busbw.
    const Measurements nccl = read_file(results_dir() + "2026-11-21-h200x4/nccl_h200x4.json");
    const auto cases = validation::compare_nccl(nccl.collectives, find_system("hgx-h200-4"), LinkParameters{});
    bool found = false;
    for (const CaseComparison& c : cases)
        if (c.group == "allreduce" && c.size == 1073741824.0) {
            found = true;
            CHECK(c.predicted == doctest::Approx(359.1).epsilon(0.0005));
            CHECK(c.measured == doctest::Approx(354.3).epsilon(0.0005));
        }
    CHECK(found);
    // End to end, default H200 profile, eager runtime (what the records ran): `roofplan predict --runtime eager`
    // printed 4659.8 img/s (ResNet-50 b256 amp-bf16 sgd) and 1763.6 seq/s (bert-squad seq 128 b64 amp-bf16 adam).
    const Measurements e2e = read_file(results_dir() + "2026-11-21-h200-e2e/e2e_h200.json");
    const auto runs = validation::compare_e2e(e2e.e2e, find_device("h200"), default_profile(find_device("h200")));
    REQUIRE(runs.size() == 2);
    CHECK(runs[0].predicted == doctest::Approx(4659.8).epsilon(0.0005));
    CHECK(runs[0].measured == doctest::Approx(4668.06).epsilon(1e-5));
    CHECK(runs[1].label.find("bert-squad seq 128") != std::string::npos);
    CHECK(runs[1].predicted == doctest::Approx(1763.6).epsilon(0.0005));
    CHECK_THROWS_WITH_AS((void)validation::e2e_model_of("vgg"), doctest::Contains("unknown end-to-end case 'vgg'"),
                         invalid_argument);
    // The DP4A program's reports are read too (issue rate and its own INT8 GEMM).
    const Measurements dp4a = read_file(results_dir() + "2026-11-21-h200/dp4a_h200.json");
    REQUIRE(dp4a.dp4a.size() == 5);
    CHECK(dp4a.dp4a[0].test == "issue-rate");
    CHECK(dp4a.dp4a[4].m == 8192);
}

TEST_CASE("suite reports expand into their programs' reports and calibrate like them") {
    const Device& d = find_device("h200");
    const EfficiencyProfile p = default_profile(d);
    io::json results = io::json::array();
    for (double s : {1024.0, 2048.0, 4096.0, 8192.0})
        results.push_back(gemm_record(s, s, s, 1.25 * predict_gemm_seconds(MathClass::bf16_tensor, s, s, s, 1, 0, d, p)));
    const io::json gemm = {{"tool", "roofplan-gemm"}, {"results", results}};
    const io::json bw = {{"tool", "roofplan-bandwidth"},
                         {"results", {{{"kernel", "copy"}, {"bytes_per_iteration", 4e9}, {"median_s", 1e-3},
                                       {"gb_per_s", 4000.0}}}}};
    const io::json suite = {{"tool", "roofplan-bench"}, {"provenance", {{"date_utc", "2026-11-21T00:00:00Z"}}},
                            {"reports", {gemm, bw}}};
    const auto expanded = io::read_reports("s.json", suite);
    REQUIRE(expanded.size() == 2);
    CHECK(expanded[0].file == "s.json#roofplan-gemm");
    CHECK(expanded[1].date == "2026-11-21T00:00:00Z");  // inherited
    CHECK(io::read_reports("g.json", gemm).size() == 1);
    const auto direct = calibration::fit(io::merged({io::read_reports("g", gemm)[0], io::read_reports("b", bw)[0]}), d);
    const auto through = calibration::fit(io::merged(expanded), d);
    CHECK(through.profile.gemm_efficiency(MathClass::bf16_tensor) == direct.profile.gemm_efficiency(MathClass::bf16_tensor));
    CHECK(through.profile.memory == doctest::Approx(4000.0 / 4800.0));
    CHECK_FALSE(io::suite_device("s.json", suite).has_value());
    CHECK_THROWS_WITH_AS((void)io::read_reports("bad.json", io::json{{"tool", "roofplan-bench"}}),
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
    // Documents that are not reports, and tools the reader does not know, come back without samples.
    CHECK_FALSE(io::read_reports("d.json", io::json{{"devices", io::json::array()}})[0].known);
    CHECK(io::read_reports("o.json", io::json{{"tool", "roofplan-ops"}})[0].tool == "roofplan-ops");
}

TEST_CASE("bounds: figures judged against bars and held regression bounds; the project's file reads") {
    validation::Bounds bounds{"t", {{"a", "A", 0.10, 0}, {"b", "B", 0.10, 0.20}, {"c", "C", 0.10, 0.20}, {"d", "D", 0.1, 0}}};
    const auto results = validation::judge({{"a", 0.05}, {"b", 0.15}, {"c", 0.25}}, bounds);
    REQUIRE(results.size() == 4);
    CHECK((results[0].met && results[0].ok));
    CHECK((!results[1].met && results[1].ok));  // missed, within the held bound
    CHECK((!results[2].met && !results[2].ok)); // broken
    CHECK((!results[3].measured && results[3].ok));
    CHECK_FALSE(validation::all_ok(results));
    const validation::Bounds project = io::load_bounds(results_dir() + "bounds.json");
    CHECK(project.title == "Accuracy bars (H200)");
    CHECK(project.bounds.size() == 21);
    CHECK(project.bounds[5].held == 0.445);
    CHECK_THROWS_WITH_AS(io::bounds_from_json({{"schema", "roofplan-bounds/1"}, {"title", "t"}, {"bounds", {{{"id", "x"}}}}},
                                              "b.json"),
                         doctest::Contains("b.json: .bounds[0].what: missing"), invalid_argument);
}
