// libFuzzer target: the roofplan-model/1 JSON reader must turn any input into a model or a
// roofplan::invalid_argument — never a crash, a hang or another exception.
#include <roofplan/io/model_json.hpp>

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        const roofplan::Model m = roofplan::io::model_from_json_text(text, "fuzz.json");
        (void)m.params();
        (void)m.training_work(3, roofplan::Precision::fp32);
    } catch (const roofplan::invalid_argument&) {
    }
    return 0;
}
