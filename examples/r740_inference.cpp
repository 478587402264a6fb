// SPEC.md §2 scenario 4, INT8 inference on Dell PowerEdge R740 with up to 3x Tesla P40 or 4x Tesla P4, as
// roofplan predicts it: AlexNet and GoogLeNet in INT8 (DP4A), batch 1 to 4096, images/s and images/s per watt
// (at the board's TDP), and 1 to 4 GPUs as independent replicas (predict_replicas: no communication, so n GPUs
// give n times one GPU's throughput; with the input in host memory each step also copies its batch over PCIe).  The source's charts (Dell's P40 vs P4 inference study) hold the
// measurements.  Checks: images/s per watt = images/s / TDP with the boards' datasheet TDPs (P40 250 W, P4 75 W),
// and throughput never falls as the batch doubles.  The source ran TensorRT engines: the compiled runtime (fused
// epilogues, one CUDA-graph launch per batch), as `roofplan predict` runs INT8 by default.  Writes
// r740_int8_throughput.svg and r740_int8_per_watt.svg (current directory or argv[1]).
#include <roofplan/roofplan.hpp>

#include "common/chart.hpp"
#include "common/check.hpp"

#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace roofplan;
    const std::string dir = argc > 1 ? std::string(argv[1]) + "/" : "";
    const char* const devices[] = {"p40", "p4"};
    const double tdp_w[] = {250, 75};  // Tesla P40 and P4 datasheets
    roofplan_examples::Checks checks;
    roofplan_examples::LineChart throughput{"INT8 inference on Tesla P40 and P4 (predicted)",
                                            "one GPU, DP4A, default efficiency profile; a missing point: that batch does not fit", "batch size", "images/s",
                                            true, true, {}};
    roofplan_examples::LineChart per_watt{"INT8 inference efficiency on Tesla P40 and P4 (predicted)",
                                          "one GPU, images/s per watt at the board's TDP", "batch size",
                                          "images/s per W", true, true, {}};
    std::printf("Dell R740 inference, P40 vs P4 (SPEC.md section 2, scenario 4): roofplan's predictions\n");
    for (const char* model_id : {"alexnet", "googlenet"}) {
        const Model model = models::build(model_id);
        const Predictor predictor(model);
        std::printf("\n%s, INT8, one GPU\n%-7s %14s %12s %14s %12s\n", model_id, "batch", "P40 img/s", "P40 img/s/W",
                    "P4 img/s", "P4 img/s/W");
        std::vector<roofplan_examples::Series> rate(2), eff(2);
        for (std::int64_t batch = 1; batch <= 4096; batch *= 2) {
            std::printf("%-7lld", static_cast<long long>(batch));
            for (std::size_t i = 0; i < 2; ++i) {
                const Device& d = find_device(devices[i]);
                const Prediction p = predictor(
                    d, default_profile(d),
                    {.batch = batch, .precision = Precision::int8, .mode = Mode::infer, .per_layer = false,
                     .runtime = Runtime::compiled});
                if (!p.fits) {
                    std::printf(" %14s %12s", "OOM", "-");
                    continue;
                }
                checks.expect(roofplan_examples::close(p.samples_per_joule, p.throughput_samples_per_s / tdp_w[i]),
                              std::string(model_id) + " " + devices[i] + ": images/s per W = images/s / TDP");
                checks.expect(rate[i].points.empty() || p.throughput_samples_per_s >= rate[i].points.back().second,
                              std::string(model_id) + " " + devices[i] + ": throughput does not fall with batch");
                // images per joule at TDP = images per second per watt
                std::printf(" %14.0f %12.2f", p.throughput_samples_per_s, p.samples_per_joule);
                rate[i].points.emplace_back(static_cast<double>(batch), p.throughput_samples_per_s);
                eff[i].points.emplace_back(static_cast<double>(batch), p.samples_per_joule);
            }
            std::printf("\n");
        }
        for (std::size_t i = 0; i < 2; ++i) {
            rate[i].label = eff[i].label = std::string(model_id) + " " + devices[i];
            rate[i].dashed = eff[i].dashed = i == 1;
            throughput.series.push_back(rate[i]);
            per_watt.series.push_back(eff[i]);
        }

        std::printf("\n%s, INT8, batch 128 per GPU, GPUs in one R740 (independent replicas): images/s, input made on "
                    "the GPU / copied from host memory each step\n%-6s %14s %14s %14s %14s\n",
                    model_id, "GPUs", "r740-p40", "p40 host", "r740-p4", "p4 host");
        for (int gpus = 1; gpus <= 4; ++gpus) {
            std::printf("%-6d", gpus);
            for (const char* sid : {"r740-p40", "r740-p4"}) {
                const System& s = find_system(sid);
                if (gpus > s.gpus_per_node) {
                    std::printf(" %14s %14s", "-", "-");
                    continue;
                }
                const Device& d = find_device(s.device.view());
                const PredictRequest request{.batch = 128, .precision = Precision::int8, .mode = Mode::infer,
                                             .per_layer = false, .runtime = Runtime::compiled};
                const ReplicaPrediction synthetic = predict_replicas(predictor, d, default_profile(d), request, s,
                                                                     {.gpus = gpus});
                const ReplicaPrediction host = predict_replicas(predictor, d, default_profile(d), request, s,
                                                                {.gpus = gpus, .input = InputSource::host});
                checks.expect(roofplan_examples::close(synthetic.throughput_samples_per_s,
                                                       gpus * synthetic.gpu.throughput_samples_per_s),
                              std::string(model_id) + " " + sid + ": n replicas give n times one GPU's images/s");
                checks.expect(host.throughput_samples_per_s < synthetic.throughput_samples_per_s,
                              std::string(model_id) + " " + sid + ": copying the input costs throughput");
                std::printf(" %14.0f %14.0f", synthetic.throughput_samples_per_s, host.throughput_samples_per_s);
            }
            std::printf("\n");
        }
    }
    roofplan_examples::write_svg(dir + "r740_int8_throughput.svg", throughput);
    roofplan_examples::write_svg(dir + "r740_int8_per_watt.svg", per_watt);
    return checks.finish();
}
