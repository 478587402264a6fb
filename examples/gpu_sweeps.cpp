// SPEC.md §2 scenario 5, the framework / GPU / minibatch sweeps (K40, Titan X Maxwell, GTX 1080, Titan X Pascal),
// as roofplan predicts them: forward and forward+backward time in milliseconds per minibatch for AlexNet,
// Overfeat, VGG-16, GoogLeNet and ResNet-50/101/152 at batch 8 to 128, FP32 training.  "forward+backward" is the
// forward pass plus both backward passes (data and weight gradients), without the optimizer update, as the
// convnet-benchmarks and cnn-benchmarks tables report it; those tables hold the measurements (the VGG they time
// may be another depth than the zoo's VGG-16).  Runtime: ideal, one kernel per layer pass, which is how those
// frameworks (Torch7, Caffe and others over cuDNN 4-5, FP32, NCHW) ran these networks: a cuDNN call per
// convolution, batch norm and activation pass, no autocast casts.  Checks: times grow with the batch; Titan X
// Pascal (more FLOPS and bandwidth than the GTX 1080, same architecture) is faster than the GTX 1080, and the K40 is
// the slowest.  Writes sweep_resnet50_fwd_bwd.svg (current directory or argv[1]).
#include <roofplan/roofplan.hpp>

#include "common/chart.hpp"
#include "common/check.hpp"

#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

int main(int argc, char** argv) {
    using namespace roofplan;
    const std::string dir = argc > 1 ? std::string(argv[1]) + "/" : "";
    const char* const gpus[] = {"k40", "titan-x-maxwell", "gtx1080", "titan-x-pascal"};
    const char* const model_ids[] = {"alexnet", "overfeat", "vgg16", "googlenet", "resnet50", "resnet101", "resnet152"};
    const std::int64_t batches[] = {8, 16, 32, 64, 128};
    roofplan_examples::LineChart chart{"ResNet-50 forward+backward time per minibatch (predicted)",
                                       "FP32, default efficiency profiles; a missing point: that batch does not fit in memory", "batch size", "ms", true, true, {}};
    roofplan_examples::Checks checks;
    std::printf("GPU / minibatch sweeps (SPEC.md section 2, scenario 5): roofplan's predictions, FP32.\n"
                "Each cell: forward ms / forward+backward ms; OOM: the training step does not fit in memory.\n");
    for (const char* model_id : model_ids) {
        const Model model = models::build(model_id);
        const Predictor predictor(model);
        std::printf("\n%s\n%-16s", model_id, "GPU");
        for (std::int64_t b : batches) std::printf(" %19s", ("batch " + std::to_string(b)).c_str());
        std::printf("\n");
        std::vector<std::vector<double>> times;  // [gpu][batch] forward+backward ms
        for (const char* id : gpus) {
            const Device& d = find_device(id);
            roofplan_examples::Series series{id, {}, false};
            times.emplace_back();
            std::printf("%-16s", id);
            for (std::int64_t b : batches) {
                const Prediction p =
                    predictor(d, default_profile(d),
                              {.batch = b, .precision = Precision::fp32, .per_layer = false, .runtime = Runtime::ideal});
                const double forward_ms = 1e3 * p.phase_time[Phase::forward].value();
                const double fwd_bwd_ms = forward_ms + 1e3 * (p.phase_time[Phase::backward_data].value() +
                                                              p.phase_time[Phase::backward_weight].value());
                char buf[40];
                if (p.fits) std::snprintf(buf, sizeof buf, "%8.2f / %8.2f", forward_ms, fwd_bwd_ms);
                else std::snprintf(buf, sizeof buf, "OOM (max %lld)", static_cast<long long>(p.max_batch));
                std::printf(" %19s", buf);
                if (p.fits) series.points.emplace_back(static_cast<double>(b), fwd_bwd_ms);
                checks.expect(times.back().empty() || fwd_bwd_ms > times.back().back(),
                              std::string(model_id) + " on " + id + ": time grows with the batch");
                times.back().push_back(fwd_bwd_ms);
            }
            std::printf("\n");
            if (std::string_view(model_id) == "resnet50") chart.series.push_back(series);
        }
        for (std::size_t k = 0; k < std::size(batches); ++k) {  // gpus: k40, titan-x-maxwell, gtx1080, titan-x-pascal
            checks.expect(times[3][k] < times[2][k], std::string(model_id) + ": Titan X Pascal faster than GTX 1080");
            checks.expect(times[0][k] > times[1][k] && times[0][k] > times[2][k] && times[0][k] > times[3][k],
                          std::string(model_id) + ": K40 slowest");
        }
    }
    roofplan_examples::write_svg(dir + "sweep_resnet50_fwd_bwd.svg", chart);
    return checks.finish();
}
