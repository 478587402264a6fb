// libFuzzer target: the ONNX importer must turn any bytes into a model or a roofplan::invalid_argument —
// never a crash, a hang or another exception.
#include <roofplan/io/onnx.hpp>

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    roofplan::io::OnnxOptions options;
    options.seq = 8;
    try {
        const auto imported = roofplan::io::import_onnx_bytes(
            std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.onnx", options);
        (void)imported.model.params();
        (void)imported.model.training_work(3, roofplan::Precision::fp32);
    } catch (const roofplan::invalid_argument&) {
    }
    return 0;
}
