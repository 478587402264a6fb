// libFuzzer target: the device, system and profile readers (io/json.hpp, through io/read.hpp) and the readers of
// measurement reports (io/reports.hpp, io/operators.hpp, io/conv_shapes.hpp: what `calibrate` and `validate` read)
// must turn any input into their values or a roofplan::invalid_argument — never a crash, a hang or another
// exception.  Each input is read as every kind.
#include <roofplan/io/conv_shapes.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/io/operators.hpp>
#include <roofplan/io/reports.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    nlohmann::json j;
    try {
        j = roofplan::io::parse(text, "fuzz.json");
    } catch (const roofplan::invalid_argument&) {
        return 0;
    }
    try {
        roofplan::DeviceCatalog catalog;
        for (const roofplan::Device& d : roofplan::io::devices_from_json(j, "fuzz.json")) catalog.add(d, "fuzz.json");
    } catch (const roofplan::invalid_argument&) {
    }
    try {
        (void)roofplan::io::systems_from_json(j, "fuzz.json");
    } catch (const roofplan::invalid_argument&) {
    }
    try {
        (void)roofplan::io::profile_from_json(j, roofplan::find_device("h100"), "fuzz.json");
        (void)roofplan::io::links_from_json(j, "fuzz.json");
    } catch (const roofplan::invalid_argument&) {
    }
    try {
        (void)roofplan::io::read_reports("fuzz.json", j);
    } catch (const roofplan::invalid_argument&) {
    }
    try {
        (void)roofplan::io::operator_report(j, "fuzz.json");
    } catch (const roofplan::invalid_argument&) {
    }
    try {
        (void)roofplan::io::conv_shapes_report(j, "fuzz.json");
    } catch (const roofplan::invalid_argument&) {
    }
    try {
        (void)roofplan::io::gemm_shapes_report(j, "fuzz.json");
    } catch (const roofplan::invalid_argument&) {
    }
    return 0;
}
