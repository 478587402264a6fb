// A consumer of the whole package (roofplan::roofplan: core + calibration + io; roofplan::onnx when installed).
#include <roofplan/calibration/fit.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/io/reports.hpp>
#include <roofplan/roofplan.hpp>
#if defined(ROOFPLAN_HAS_ONNX)
#include <roofplan/io/onnx.hpp>
#endif

#include <cstdio>

int main() {
    static_assert(roofplan::models::resnet50().params() == 25'557'032);
    const auto model = roofplan::models::build("bert-base", {.seq = 128});
    // io: a bandwidth report read into samples; calibration: the memory efficiency fitted to them.
    const roofplan::Device& h100 = roofplan::find_device("h100");
    const auto report = roofplan::io::json::parse(R"({"tool": "roofplan-bandwidth", "results": [
        {"kernel": "copy", "bytes_per_iteration": 1e9, "median_s": 4e-4, "gb_per_s": 2500}]})");
    const auto reports = roofplan::io::read_reports("bw.json", report);
    const auto fitted = roofplan::calibration::fit(roofplan::io::merged(reports), h100);
    bool onnx = true;
#if defined(ROOFPLAN_HAS_ONNX)
    try {  // the compiled importer links and rejects bytes that are not ONNX
        (void)roofplan::io::import_onnx_bytes("not onnx", "x.onnx");
        onnx = false;
    } catch (const roofplan::invalid_argument&) {
    }
#endif
    std::printf("consumer ok (full): bert-base %lld params, memory efficiency %.3f%s\n",
                static_cast<long long>(model.params()), fitted.profile.memory, onnx ? "" : ", ONNX accepted garbage");
    return model.params() == 109'482'240 && fitted.profile.memory > 0.7 && onnx ? 0 : 1;
}
