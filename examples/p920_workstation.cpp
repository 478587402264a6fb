// SPEC.md §2 scenario 1, the Lenovo ThinkStation P920 workstation benchmark, as roofplan predicts it:
//   - TensorRT ResNet-50 inference, INT8 / FP16 / FP32, batch 16, 32, 64, 128 (images/s per GPU);
//   - TensorFlow ResNet-50 training, FP16 (mixed precision) and FP32, batch 16 to 128 (images/s per GPU), and two
//     cards over the NVLink bridge (DDP, systems p920-rtx8000 and p920-titan-rtx);
//   - OpenSeq2Seq GNMT-like en-de, batch 128 per GPU, FP32 and mixed precision, with the memory it needs.
// Runtimes, as the source ran them: TensorRT is an inference engine (the compiled runtime with `engine`: batch
// norm folded, bias, activation and residual add in the convolution's epilogue, CUDA graphs); TensorFlow's graph
// executor launches the unfused kernels of a framework (batch norm's passes, the casts of automatic mixed
// precision), which the eager runtime lowers — with PyTorch's per-op host costs, higher than TensorFlow's C++
// executor's, so a small-batch step that the model finds host-bound is a stated approximation.
// The tables have the benchmark's rows (GPUs) and columns (batch sizes) so they can be put beside the original
// charts; the measured numbers are in the source report, not here.  Checks: INT8 >= FP16 >= FP32 inference
// throughput on every card and batch (Turing's INT8 tensor rate is twice its FP16 rate, which is 8x FP32), an OOM
// cell exactly where the batch exceeds the largest batch that fits, two bridged cards below twice one card.  Writes p920_inference_int8.svg (images/s vs
// batch) into the current directory, or into the directory given as the first argument.
#include <roofplan/roofplan.hpp>

#include "common/chart.hpp"
#include "common/check.hpp"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace {

const char* const gpus[] = {"quadro-rtx8000", "titan-rtx", "rtx2080ti", "rtx2080", "rtx2070", "rtx2060"};
const std::int64_t batches[] = {16, 32, 64, 128};

/// One cell: images/s, or "OOM (max N)" when the batch does not fit in the card's memory.
std::string cell(const roofplan::Prediction& p) {
    char buf[48];
    if (p.fits) std::snprintf(buf, sizeof buf, "%10.0f", p.throughput_samples_per_s);
    else std::snprintf(buf, sizeof buf, "OOM (max %lld)", static_cast<long long>(p.max_batch));
    return buf;
}

void header(const char* title) {
    std::printf("\n%s\n%-16s", title, "GPU");
    for (std::int64_t b : batches) std::printf(" %14s", ("batch " + std::to_string(b)).c_str());
    std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) {
    using namespace roofplan;
    const std::string dir = argc > 1 ? std::string(argv[1]) + "/" : "";
    const Model resnet50 = models::build("resnet50");
    const Predictor predict_resnet50(resnet50);

    std::printf("P920 workstation (SPEC.md section 2, scenario 1): roofplan's predictions, default efficiency profiles.\n"
                "Measured figures: the source P920 RTX benchmark report (TensorRT, TensorFlow, OpenSeq2Seq charts).\n");

    roofplan_examples::LineChart chart{"ResNet-50 inference, INT8 (TensorRT set-up), predicted",
                                       "one GPU, image 224; Quadro RTX 8000 and Titan RTX coincide (same peaks and bandwidth)", "batch size",
                                       "images/s", true, false, {}};
    struct Inference {
        Precision precision;
        const char* title;
    };
    roofplan_examples::Checks checks;
    std::map<std::pair<std::string, std::int64_t>, std::vector<double>> by_precision;  // (GPU, batch) -> int8, fp16, fp32
    for (const Inference& inf : {Inference{Precision::int8, "ResNet-50 inference, INT8 (images/s)"},
                                 Inference{Precision::amp_fp16, "ResNet-50 inference, FP16 (images/s)"},
                                 Inference{Precision::fp32, "ResNet-50 inference, FP32 (images/s)"}}) {
        header(inf.title);
        for (const char* id : gpus) {
            const Device& d = find_device(id);
            std::printf("%-16s", id);
            roofplan_examples::Series series{id, {}, false};
            for (std::int64_t b : batches) {
                const Prediction p = predict_resnet50(
                    d, default_profile(d),
                    {.batch = b, .precision = inf.precision, .mode = Mode::infer, .per_layer = false,
                     .runtime = Runtime::compiled, .engine = true});
                std::printf(" %14s", cell(p).c_str());
                if (p.fits) series.points.emplace_back(static_cast<double>(b), p.throughput_samples_per_s);
                by_precision[{id, b}].push_back(p.throughput_samples_per_s);
                checks.expect(p.fits == (p.max_batch >= b), std::string(id) + ": OOM iff batch > largest batch");
            }
            std::printf("\n");
            if (inf.precision == Precision::int8) chart.series.push_back(series);
        }
    }
    for (const auto& [key, rates] : by_precision)
        checks.expect(rates.size() == 3 && rates[0] >= rates[1] && rates[1] >= rates[2],
                      key.first + " batch " + std::to_string(key.second) + ": INT8 >= FP16 >= FP32");
    {
        const Device& rtx8000 = find_device("quadro-rtx8000");
        const Prediction big = predict_resnet50(rtx8000, default_profile(rtx8000),
                                                {.batch = 512, .precision = Precision::int8, .mode = Mode::infer,
                                                 .runtime = Runtime::compiled, .engine = true});
        std::printf("Quadro RTX 8000 at batch 512, INT8: %.0f images/s, %.1f GiB (%s)\n", big.throughput_samples_per_s,
                    static_cast<double>(big.memory.total.value()) / 1073741824.0, big.fits ? "fits" : "does not fit");
    }

    for (Precision precision : {Precision::amp_fp16, Precision::fp32}) {
        header(precision == Precision::fp32 ? "ResNet-50 training, FP32 (images/s, one GPU, SGD momentum)"
                                            : "ResNet-50 training, FP16 mixed precision (images/s, one GPU)");
        for (const char* id : gpus) {
            const Device& d = find_device(id);
            std::printf("%-16s", id);
            for (std::int64_t b : batches) {
                const Prediction p =
                    predict_resnet50(d, default_profile(d), {.batch = b, .precision = precision, .per_layer = false,
                                                             .runtime = Runtime::eager});
                std::printf(" %14s", cell(p).c_str());
                checks.expect(p.fits == (p.max_batch >= b), std::string(id) + ": OOM iff batch > largest batch");
            }
            std::printf("\n");
        }
    }

    std::printf("\nResNet-50 training on two cards over the NVLink bridge (DDP), batch 64 per GPU\n"
                "%-16s %10s %12s %12s %12s\n", "system", "precision", "1 GPU img/s", "2 GPUs img/s", "efficiency");
    for (const char* sid : {"p920-rtx8000", "p920-titan-rtx"}) {
        const System& s = find_system(sid);
        const Device& d = find_device(s.device.view());
        for (Precision precision : {Precision::amp_fp16, Precision::fp32}) {
            const PredictRequest req{.batch = 64, .precision = precision, .runtime = Runtime::eager};
            const ParallelPrediction two =
                predict_parallel(predict_resnet50, d, default_profile(d), req, s, {.gpus = 2});
            checks.expect(two.throughput_samples_per_s > two.gpu.throughput_samples_per_s &&
                              two.throughput_samples_per_s <= 2 * two.gpu.throughput_samples_per_s,
                          std::string(sid) + ": one card < two cards <= twice one card");
            std::printf("%-16s %10s %12.0f %12.0f %11.1f%%\n", sid, std::string(to_string(precision)).c_str(),
                        two.gpu.throughput_samples_per_s, two.throughput_samples_per_s,
                        100.0 * two.scaling_efficiency);
        }
    }

    const Model gnmt = models::build("gnmt");
    const Predictor predict_gnmt(gnmt);
    std::printf("\nGNMT-like en-de (OpenSeq2Seq), batch 128 per GPU, sequence %lld, Adam\n"
                "%-16s %10s %14s %14s %10s %10s\n",
                static_cast<long long>(models::find_model("gnmt").default_size), "GPU", "precision", "sentences/s",
                "memory GiB", "capacity", "max batch");
    for (const char* id : gpus) {
        const Device& d = find_device(id);
        for (Precision precision : {Precision::fp32, Precision::amp_fp16}) {
            const Prediction p = predict_gnmt(
                d, default_profile(d),
                {.batch = 128, .precision = precision, .optimizer = Optimizer::adam, .per_layer = false,
                 .runtime = Runtime::eager});
            checks.expect(p.fits == (p.memory.total.value() <= p.capacity.value()),
                          std::string(id) + ": GNMT fits iff its memory is within the card's");
            std::printf("%-16s %10s %14s %14.1f %10.0f %10lld\n", id, std::string(to_string(precision)).c_str(),
                        cell(p).c_str(), static_cast<double>(p.memory.total.value()) / 1073741824.0,
                        static_cast<double>(p.capacity.value()) / 1073741824.0, static_cast<long long>(p.max_batch));
        }
    }

    roofplan_examples::write_svg(dir + "p920_inference_int8.svg", chart);
    return checks.finish();
}
