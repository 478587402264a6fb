// Device catalog: the JSON data and the built-in constexpr table agree; datasheet arithmetic and ratios hold;
// lookups, precision support and user device files behave, and bad input gets clear errors.
#include <roofplan/io/json.hpp>
#include <roofplan/roofplan.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <set>
#include <string>

using namespace roofplan;

namespace {
const io::json& catalog_json() {
    static const io::json j = io::parse(io::read_text(ROOFPLAN_DATA_DIR "/devices.json"), "devices.json");
    return j;
}
const Device& dev(std::string_view id) { return find_device(id); }
}  // namespace

TEST_CASE("the built-in table equals data/devices.json, field by field, in the same order") {
    const auto from_json = io::devices_from_json(catalog_json(), "devices.json");
    const auto builtin = builtin_devices();
    REQUIRE(from_json.size() == builtin.size());
    for (std::size_t i = 0; i < builtin.size(); ++i) {
        const Device& a = from_json[i];
        const Device& b = builtin[i];
        CAPTURE(b.id.view());
        CHECK(a.id.view() == b.id.view());
        CHECK(a.name.view() == b.name.view());
        for (std::size_t k = 0; k < a.aliases.size(); ++k) CHECK(a.aliases[k].view() == b.aliases[k].view());
        CHECK(a.architecture == b.architecture);
        CHECK(a.cc_major == b.cc_major);
        CHECK(a.cc_minor == b.cc_minor);
        CHECK(a.form_factor.view() == b.form_factor.view());
        CHECK(a.market.view() == b.market.view());
        CHECK(a.sms == b.sms);
        CHECK(a.fp32_cores == b.fp32_cores);
        CHECK(a.tensor_cores == b.tensor_cores);
        CHECK(a.base_clock_mhz == b.base_clock_mhz);
        CHECK(a.boost_clock_mhz == b.boost_clock_mhz);
        CHECK(a.peak == b.peak);
        CHECK(a.memory_gib == b.memory_gib);
        CHECK(a.memory_type.view() == b.memory_type.view());
        CHECK(a.memory_bus_bits == b.memory_bus_bits);
        CHECK(a.bandwidth_gb_s == b.bandwidth_gb_s);
        CHECK(a.l2_mib == b.l2_mib);
        CHECK(a.tdp_w == b.tdp_w);
        CHECK(a.nvlink == b.nvlink);
        CHECK(a.pcie == b.pcie);
    }
}

TEST_CASE("every figure of every device cites a reference that exists") {
    const io::json& j = catalog_json();
    const auto& refs = j.at("references");
    for (const auto& d : j.at("devices")) {
        CAPTURE(d.at("id").get<std::string>());
        const auto& sources = d.at("sources");
        for (const char* key : {"sms", "clocks", "peak.fp32", "peak.fp16_tensor", "peak.int8_dp4a", "memory",
                                "bandwidth", "l2", "tdp", "nvlink", "pcie"}) {
            CAPTURE(key);
            REQUIRE(sources.contains(key));
            CHECK(refs.contains(sources.at(key).get<std::string>()));
        }
        for (const auto& [key, ref] : sources.items()) CHECK(refs.contains(ref.get<std::string>()));
    }
    for (const auto& [key, ref] : refs.items()) CHECK(ref.at("url").get<std::string>().starts_with("http"));
}

TEST_CASE("every device id of SPEC.md section 6 is in the catalog; ids and aliases are unique") {
    for (const char* id : {"v100-sxm2-16gb", "v100-sxm2-32gb", "v100-pcie-16gb", "rtx2060", "rtx2070", "rtx2080",
                           "rtx2080ti", "titan-rtx", "quadro-rtx8000", "p40", "p4", "t4", "a100-sxm4-40gb",
                           "a100-sxm4-80gb", "a100-pcie-80gb", "h100-sxm", "h100-pcie", "h200", "k40",
                           "titan-x-maxwell", "titan-x-pascal", "gtx1080"}) {
        CAPTURE(id);
        CHECK(find_builtin_device(id) != nullptr);
    }
    CHECK(dev("V100").id.view() == "v100-sxm2-32gb");
    CHECK(dev("a100").id.view() == "a100-sxm4-80gb");
    CHECK(dev("H100").id.view() == "h100-sxm");
    std::set<std::string> names;
    for (const Device& d : builtin_devices()) {
        CHECK(names.insert(std::string(d.id.view())).second);
        for (const DeviceId& a : d.aliases)
            if (!a.empty()) CHECK(names.insert(std::string(a.view())).second);
    }
}

TEST_CASE("datasheet arithmetic: FP32 peak = cores x 2 x boost clock; dense tensor peaks, not sparse") {
    for (const Device& d : builtin_devices()) {
        CAPTURE(d.id.view());
        const double derived = d.fp32_cores * 2.0 * d.boost_clock_mhz * 1e6 / 1e12;
        CHECK(d.peak.fp32 == doctest::Approx(derived).epsilon(0.07));
        // DP4A: 4 INT8 multiply-adds per lane; never more than 4x the FP32 rate in operations.
        if (d.peak.int8_dp4a > 0) CHECK(d.peak.int8_dp4a <= 4.0 * d.peak.fp32 * 1.01);
        // INT8 tensor peaks are twice FP16 tensor (FP16 accumulate) peaks wherever both exist.
        if (d.peak.int8_tensor > 0)
            CHECK(d.peak.int8_tensor == doctest::Approx(2 * d.peak.fp16_tensor_fp16_acc).epsilon(0.01));
        CHECK(d.peak.fp16_tensor_fp32_acc <= d.peak.fp16_tensor_fp16_acc);
        CHECK(d.ridge(MathClass::fp32).value() > 1.0);
    }
    CHECK(dev("h100-sxm").peak.fp16_tensor_fp32_acc == doctest::Approx(989.4));  // not the sparse 1979
    CHECK(dev("a100-sxm4-80gb").peak.bf16_tensor == doctest::Approx(312));     // not the sparse 624
    CHECK(dev("a100-sxm4-80gb").peak.tf32_tensor == doctest::Approx(156));
    CHECK(dev("v100").peak.fp16_tensor_fp32_acc == doctest::Approx(125));
    CHECK(dev("v100").memory().value() == 32LL * 1024 * 1024 * 1024);
    CHECK(dev("v100").bandwidth().value() == doctest::Approx(900e9));
}

TEST_CASE("ratios between entries") {
    CHECK(dev("p4").peak.int8_dp4a / dev("p40").peak.int8_dp4a == doctest::Approx(0.46).epsilon(0.03));
    const Device& h100 = dev("h100-sxm");
    const Device& h200 = dev("h200");
    CHECK(h200.peak == h100.peak);
    CHECK(h200.sms == h100.sms);
    CHECK(h200.bandwidth_gb_s / h100.bandwidth_gb_s == doctest::Approx(1.43).epsilon(0.01));
    CHECK(h200.memory_gib > 1.7 * h100.memory_gib);
    // Turing GeForce halves FP32-accumulate tensor math; Titan RTX, Quadro and T4 do not.
    for (const char* id : {"rtx2060", "rtx2070", "rtx2080", "rtx2080ti"})
        CHECK(dev(id).peak.fp16_tensor_fp32_acc == doctest::Approx(dev(id).peak.fp16_tensor_fp16_acc / 2).epsilon(0.01));
    for (const char* id : {"titan-rtx", "quadro-rtx8000", "t4"})
        CHECK(dev(id).peak.fp16_tensor_fp32_acc == dev(id).peak.fp16_tensor_fp16_acc);
    CHECK(dev("a100-sxm4-80gb").peak.tf32_tensor * 2 == dev("a100-sxm4-80gb").peak.fp16_tensor_fp32_acc);
    CHECK(dev("v100-sxm2-16gb").peak == dev("v100-sxm2-32gb").peak);
    CHECK(dev("quadro-rtx8000").memory_gib == 2 * dev("titan-rtx").memory_gib);
}

TEST_CASE("precision modes are honoured per device; unsupported modes are errors, never a fallback") {
    CHECK(math_class(dev("v100"), Precision::amp_fp16, Mode::train) == MathClass::fp16_tensor_fp32_acc);
    CHECK(math_class(dev("rtx2080ti"), Precision::amp_fp16, Mode::infer) == MathClass::fp16_tensor_fp16_acc);
    CHECK(math_class(dev("v100"), Precision::int8, Mode::infer) == MathClass::int8_dp4a);   // no INT8 tensor cores
    CHECK(math_class(dev("p40"), Precision::int8, Mode::infer) == MathClass::int8_dp4a);
    CHECK(math_class(dev("t4"), Precision::int8, Mode::infer) == MathClass::int8_tensor);
    CHECK(math_class(dev("h200"), Precision::amp_bf16, Mode::train) == MathClass::bf16_tensor);
    CHECK_THROWS_WITH_AS(math_class(dev("p40"), Precision::amp_fp16, Mode::train),
                         doctest::Contains("has no FP16 tensor cores"), invalid_argument);
    CHECK_THROWS_WITH_AS(math_class(dev("v100"), Precision::tf32, Mode::train),
                         doctest::Contains("it supports fp32, amp-fp16, int8"), invalid_argument);
    CHECK_THROWS_AS(math_class(dev("rtx2080ti"), Precision::amp_bf16, Mode::train), invalid_argument);
    CHECK_THROWS_AS(math_class(dev("k40"), Precision::int8, Mode::infer), invalid_argument);
    CHECK_THROWS_AS(math_class(dev("titan-x-maxwell"), Precision::amp_fp16, Mode::infer), invalid_argument);
    CHECK_THROWS_WITH_AS(math_class(dev("h100"), Precision::int8, Mode::train), doctest::Contains("inference only"),
                         invalid_argument);
}

TEST_CASE("unknown devices suggest close matches and list the catalog") {
    CHECK_THROWS_WITH_AS((void)find_device("rtx2080-ti"), doctest::Contains("did you mean"), invalid_argument);
    CHECK_THROWS_WITH_AS((void)find_device("a1000"), doctest::Contains("Known devices: v100-sxm2-16gb"), invalid_argument);
    CHECK_THROWS_AS((void)DeviceCatalog().find(""), invalid_argument);
}

TEST_CASE("user devices: added, replacing by id, validated with the JSON path of the bad field") {
    DeviceCatalog catalog;
    io::load_devices(catalog, ROOFPLAN_TEST_DATA_DIR "/custom_device.json");
    const Device& mine = catalog.find("my-gpu");
    CHECK(mine.peak.bf16_tensor == 400);
    CHECK(catalog.find("MINE").id.view() == "my-gpu");
    CHECK(catalog.devices().size() == builtin_devices().size() + 1);

    io::json base = io::to_json(dev("h100"));
    base["id"] = "h100-sxm";
    base["tdp_w"] = 650;
    catalog.add(io::device_from_json(base), "test");  // replaces the built-in
    CHECK(catalog.find("h100").tdp_w == 650);
    CHECK(catalog.devices().size() == builtin_devices().size() + 1);

    io::json clash = io::to_json(dev("h200"));
    clash["id"] = "another";
    clash["aliases"] = {"v100"};
    CHECK_THROWS_WITH_AS(catalog.add(io::device_from_json(clash), "f.json"), doctest::Contains("alias 'v100'"),
                         invalid_argument);

    io::json bad = base;
    bad["peak"].erase("fp32");
    CHECK_THROWS_WITH_AS(io::device_from_json(bad, "f.json: .devices[0]"),
                         doctest::Contains("f.json: .devices[0].peak.fp32: missing"), invalid_argument);
    bad = base;
    bad["sms"] = "many";
    CHECK_THROWS_WITH_AS(io::device_from_json(bad), doctest::Contains("device.sms: expected an integer"),
                         invalid_argument);
    bad = base;
    bad["bandwidth_gb_s"] = -1;
    CHECK_THROWS_WITH_AS(io::device_from_json(bad), doctest::Contains("bandwidth_gb_s must be a positive number"),
                         invalid_argument);
    bad = base;
    bad["architecture"] = "blackwell";
    CHECK_THROWS_WITH_AS(io::device_from_json(bad), doctest::Contains("accepted: kepler"), invalid_argument);
    bad = base;
    bad["id"] = "Has Spaces";
    CHECK_THROWS_AS(io::device_from_json(bad), invalid_argument);
    CHECK_THROWS_WITH_AS(io::parse("{\"devices\": [", "broken.json"), doctest::Contains("broken.json: not valid JSON"),
                         invalid_argument);
    CHECK_THROWS_WITH_AS(io::read_text("/nonexistent/devices.json"), doctest::Contains("cannot open"),
                         invalid_argument);
    CHECK_THROWS_AS(io::devices_from_json(io::json::array(), "x.json"), invalid_argument);
}

TEST_CASE("efficiency profiles: defaults per generation, JSON overrides, validation") {
    const EfficiencyProfile v = default_profile(dev("v100"));
    CHECK(v.source.view() == "default (volta generation)");
    validate(v);
    for (const Device& d : builtin_devices()) validate(default_profile(d));
    const io::json j = {{"schema", "roofplan-profile/1"}, {"device", "h200"}, {"memory", 0.9},
                        {"gemm", {{"bf16_tensor", 0.72}}}, {"power_w", 610}};
    const EfficiencyProfile p = io::profile_from_json(j, dev("h200"), "p.json");
    CHECK(p.memory == 0.9);
    CHECK(p.gemm_efficiency(MathClass::bf16_tensor) == 0.72);
    CHECK(p.gemm_efficiency(MathClass::fp32) == default_profile(dev("h200")).gemm_efficiency(MathClass::fp32));
    CHECK(p.power_w == 610);
    // A profile fitted on another GPU applies as fractions of this GPU's own peaks, and says so.
    CHECK(std::string(io::profile_from_json(j, dev("v100"), "p.json").source.view()) ==
          "p.json (fitted on h200, applied to v100-sxm2-32gb)");
    io::json bad = j;
    bad["memory"] = 1.5;
    CHECK_THROWS_WITH_AS(io::profile_from_json(bad, dev("h200"), "p.json"), doctest::Contains("memory must be a fraction"),
                         invalid_argument);
    bad = j;
    bad["gemm"] = {{"fp128", 0.5}};
    CHECK_THROWS_WITH_AS(io::profile_from_json(bad, dev("h200"), "p.json"), doctest::Contains("unknown math class"),
                         invalid_argument);
    const io::json round = io::to_json(p);
    CHECK(io::profile_from_json(round, dev("h200"), "r.json").gemm == p.gemm);
}
