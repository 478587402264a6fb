// Bad input (issue 17), below the CLI: the readers' limits and strict schemas, the device catalog's duplicate ids,
// and the CLI's last line of defence (check_figures) and number formatter, each with the message it gives.
#include "../../tools/roofplan/format.hpp"
#include "../../tools/roofplan/report.hpp"

#include <roofplan/io/json.hpp>
#include <roofplan/io/model_json.hpp>
#include <roofplan/roofplan.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>

using namespace roofplan;

TEST_CASE("JSON nesting is limited before parsing, in linear time, strings excepted") {
    const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
    CHECK_THROWS_WITH_AS(io::parse(deep, "deep.json"),
                         doctest::Contains("deep.json: nested deeper than 64 levels"), Error);
    std::string ok = std::string(64, '[') + std::string(64, ']');
    CHECK_NOTHROW((void)io::parse(ok, "ok.json"));
    ok = std::string(65, '[') + std::string(65, ']');
    CHECK_THROWS_AS((void)io::parse(ok, "x.json"), Error);
    CHECK_NOTHROW((void)io::parse("{\"name\": \"[[[[\\\"[[[[\"}", "s.json"));  // brackets inside strings do not count
    CHECK_THROWS_WITH_AS(io::parse("[1e400]", "big.json"), doctest::Contains("big.json: a number out of range"), Error);
}

TEST_CASE("files are read up to the size limit") {
    CHECK_THROWS_WITH_AS((void)io::read_text("/dev/zero", 1 << 20), doctest::Contains("/dev/zero: larger than 1 MiB"),
                         Error);
}

TEST_CASE("unknown fields are errors with the closest accepted field") {
    const io::json j = {{"gem", 1}};
    CHECK_THROWS_WITH_AS(io::reject_unknown_fields(j, "f.json: ", {"gemm", "conv"}),
                         doctest::Contains("f.json: .gem: unknown field; did you mean 'gemm'? Accepted: gemm conv"),
                         Error);
    CHECK_THROWS_WITH_AS(io::reject_unknown_fields(io::json{{"zzz", 1}}, "f", {"gemm"}),
                         doctest::Contains("f.zzz: unknown field. Accepted: gemm"), Error);
    io::json device = io::to_json(find_device("h100"));
    device["peak"]["fp33"] = 1;
    CHECK_THROWS_WITH_AS(io::device_from_json(device, "d.json: .devices[0]"),
                         doctest::Contains("d.json: .devices[0].peak.fp33: unknown field; did you mean 'fp32'?"), Error);
}

TEST_CASE("device figures lie within physical ranges; names are printable") {
    const io::json base = io::to_json(find_device("h100"));
    for (const auto& [key, value] : {std::pair<const char*, double>{"memory_gib", 1e15}, {"memory_gib", 5e-324},
                                     {"bandwidth_gb_s", 5e-324}, {"tdp_w", 1e9}, {"boost_clock_mhz", 1e12}}) {
        io::json bad = base;
        bad[key] = value;
        const std::string expected = std::string(key) + " must be a positive number in";
        CHECK_THROWS_WITH_AS(io::device_from_json(bad), doctest::Contains(expected.c_str()), Error);
    }
    io::json bad = base;
    bad["peak"]["bf16_tensor"] = 5e-324;
    CHECK_THROWS_WITH_AS(io::device_from_json(bad), doctest::Contains("peak.bf16_tensor must be in [1e-4, 1e5] TFLOPS"),
                         Error);
    bad = base;
    bad["compute_capability"] = "9.x";
    CHECK_THROWS_WITH_AS(io::device_from_json(bad), doctest::Contains("compute_capability: expected \"major.minor\""),
                         Error);
    bad = base;
    bad["name"] = "a\nb";
    CHECK_THROWS_WITH_AS(io::device_from_json(bad), doctest::Contains("device.name: contains a control character"), Error);
    for (const Device& d : builtin_devices()) CHECK_NOTHROW(validate(d));
}

TEST_CASE("the device catalog: a user's duplicate id is an error, a built-in id is replaced, lookups are hashed") {
    DeviceCatalog catalog;
    io::json mine = io::to_json(find_device("h100"));
    mine["id"] = "mine";
    mine["aliases"] = io::json::array();
    catalog.add(io::device_from_json(mine), "a.json");
    CHECK_THROWS_WITH_AS(catalog.add(io::device_from_json(mine), "b.json"),
                         doctest::Contains("b.json: device id 'mine' is given twice (first at a.json)"), Error);
    CHECK(catalog.find("MINE").id.view() == "mine");
    io::json h100 = io::to_json(find_device("h100"));
    h100["tdp_w"] = 650;
    catalog.add(io::device_from_json(h100), "c.json");
    CHECK(catalog.find("h100").tdp_w == 650);
    CHECK(catalog.try_find("nothing") == nullptr);
}

TEST_CASE("systems: duplicate ids and unknown fields are errors") {
    io::json s = io::to_json(find_system("dgx2"));
    s["id"] = "twin";
    CHECK_THROWS_WITH_AS(io::systems_from_json(io::json{{"systems", {s, s}}}, "s.json"),
                         doctest::Contains("s.json: .systems[1]: system id 'twin' is given twice"), Error);
    s["network"]["latency"] = 1;
    CHECK_THROWS_WITH_AS(io::systems_from_json(io::json{{"systems", {s}}}, "s.json"),
                         doctest::Contains("network.latency: unknown field; did you mean 'latency_s'?"), Error);
}

TEST_CASE("profiles: an array is not a profile, unknown fields are errors, everywhere a profile is read") {
    const Device& h200 = find_device("h200");
    CHECK_THROWS_WITH_AS(io::profile_from_json(io::json::array(), h200, "p.json"),
                         doctest::Contains("p.json: expected a profile object"), Error);
    CHECK_THROWS_WITH_AS(io::links_from_json(io::json::array(), "p.json"),
                         doctest::Contains("p.json: expected a profile object"), Error);
    CHECK_THROWS_WITH_AS(io::links_from_json(io::json{{"links", {{"base", 1}}}}, "p.json"),
                         doctest::Contains("p.json: .links.base: unknown field; did you mean 'base_s'?"), Error);
    // Attention efficiencies: fractions, named fields only; they survive a round trip through a written profile.
    CHECK_THROWS_WITH_AS(io::profile_from_json(io::json{{"attention", {{"forwards", 0.5}}}}, h200, "p.json"),
                         doctest::Contains("p.json: .attention.forwards: unknown field; did you mean 'forward'?"), Error);
    CHECK_THROWS_WITH_AS(io::profile_from_json(io::json{{"attention", {{"backward", 1.5}}}}, h200, "p.json"),
                         doctest::Contains("attention.backward must be a fraction in (0, 1]"), Error);
    CHECK_THROWS_WITH_AS(io::profile_from_json(io::json{{"attention", 0.5}}, h200, "p.json"),
                         doctest::Contains("p.json: .attention: expected {"), Error);
    EfficiencyProfile p = default_profile(h200);
    p.attention = {0.61, 0.43, 0.52, 0.57, 0.41, 0.33, 0.0, 0.0};
    p.kernel_class_source = FixedString<127>("ops.json");
    const EfficiencyProfile back = io::profile_from_json(io::to_json(p), h200, "r.json");
    CHECK(back.attention.forward == 0.61);
    CHECK(back.attention.backward == 0.43);
    CHECK(back.attention.simt_forward == 0.52);
    CHECK(back.attention.simt_backward == 0.57);
    CHECK(back.attention.dropout_forward == 0.41);
    CHECK(back.attention.dropout_backward == 0.33);
    CHECK(back.attention.dropout_simt_forward == 0);
    CHECK_THROWS_WITH_AS(io::profile_from_json(io::json{{"attention", {{"dropout_forward", 2.0}}}}, h200, "p.json"),
                         doctest::Contains("attention.dropout_forward must be a fraction in (0, 1]"), Error);
}

TEST_CASE("model files: a model beyond 2^40 parameters is an error; 99,999 layers read in linear time") {
    const io::json huge = {{"schema", "roofplan-model/1"}, {"id", "huge"}, {"input", {1}},
                           {"layers", {{{"name", "emb"}, {"type", "embedding"}, {"vocabulary", 1LL << 31},
                                        {"width", 1LL << 31}}}}};
    CHECK_THROWS_WITH_AS(io::model_from_json(huge, "h.json"),
                         doctest::Contains("h.json: 4611686018427387904 trainable parameters, more than 2^40"), Error);
    io::json layers = io::json::array();
    for (int i = 0; i < 99'999; ++i)
        layers.push_back({{"name", "fc" + std::to_string(i)}, {"type", "linear"}, {"out_features", 16}});
    const io::json many = {{"schema", "roofplan-model/1"}, {"id", "many"}, {"input", {16}}, {"layers", layers}};
    CHECK(io::model_from_json(many, "m.json").size() == 99'999);
}

TEST_CASE("the report layer's last line of defence: non-finite or impossible negative figures are errors") {
    using cli::check_figures;
    CHECK_NOTHROW(check_figures(nlohmann::json{{"step_time_s", 0.5}, {"error", -0.2}, {"layers", {{{"time_s", 1}}}}}));
    CHECK_THROWS_WITH_AS(check_figures(nlohmann::json{{"step_time_s", std::numeric_limits<double>::infinity()}}),
                         doctest::Contains("the report's step_time_s is not a finite number"), Error);
    CHECK_THROWS_WITH_AS(check_figures(nlohmann::json{{"memory", {{"weights", -5}}}}),
                         doctest::Contains("the report's memory.weights came out negative (-5)"), Error);
    CHECK_THROWS_WITH_AS(check_figures(nlohmann::json{{"layers", {{{"time_s", std::nan("")}}}}}),
                         doctest::Contains("layers[0].time_s is not a finite number"), Error);
}

TEST_CASE("the formatter prints any double correctly") {
    CHECK(cli::fixed(3.14159, 2) == "3.14");
    const std::string big = cli::fixed(1e300, 1);
    CHECK(big.size() == 303);  // 301 digits, the point, one decimal
    CHECK(big.substr(0, 4) == "1000");
    CHECK(std::stod(big) == 1e300);
    CHECK(cli::fixed(-1e70, 0).size() == 72);
    CHECK(std::stod(cli::value_label(1e300, "FLOP/s")) == doctest::Approx(1e282));
}
