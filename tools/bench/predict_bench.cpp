// tools/bench/predict_bench.cpp — how fast roofplan predicts (Google Benchmark).
//
// predict_resnet50_train: one full training-step prediction of a prebuilt ResNet-50 on one device (compiled
//   once into a Predictor), totals only, and with the per-layer breakdown.
// predict_resnet50_train_eager: the same with the eager runtime on an H200 (about 1,000 kernels through the
//   host/GPU timeline, convolutions from the measured table), without and with the memory estimate (the step's
//   allocations replayed through the caching allocator).
// sweep_1e6: 10^6 predictions over (zoo model x batch x device x precision), one core; reports the seconds.
#include <roofplan/roofplan.hpp>

#include <benchmark/benchmark.h>

#include <chrono>
#include <vector>

namespace {

void predict_resnet50_train(benchmark::State& state) {
    const roofplan::Model model = roofplan::models::resnet50();
    const roofplan::Predictor predictor(model);
    const roofplan::Device& device = roofplan::find_device("a100");
    const roofplan::EfficiencyProfile profile = roofplan::default_profile(device);
    const roofplan::PredictRequest request{.batch = 256, .precision = roofplan::Precision::amp_fp16,
                                           .per_layer = state.range(0) != 0};
    for (auto _ : state) {
        roofplan::Prediction p = predictor(device, profile, request);
        benchmark::DoNotOptimize(p);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(predict_resnet50_train)->Arg(0)->Arg(1)->ArgName("per_layer");

void predict_resnet50_train_eager(benchmark::State& state) {
    const roofplan::Model model = roofplan::models::resnet50();
    const roofplan::Predictor predictor(model);
    const roofplan::Device& device = roofplan::find_device("h200");
    const roofplan::EfficiencyProfile profile = roofplan::default_profile(device);
    roofplan::PredictRequest request{.batch = 256, .precision = roofplan::Precision::amp_bf16,
                                     .estimate_memory = state.range(0) != 0, .per_layer = false,
                                     .runtime = roofplan::Runtime::eager};
    for (auto _ : state) {
        roofplan::Prediction p = predictor(device, profile, request);
        benchmark::DoNotOptimize(p);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(predict_resnet50_train_eager)->Arg(0)->Arg(1)->ArgName("memory");

void compile_resnet50(benchmark::State& state) {
    const roofplan::Model model = roofplan::models::resnet50();
    for (auto _ : state) {
        roofplan::Predictor predictor(model);
        benchmark::DoNotOptimize(predictor);
    }
}
BENCHMARK(compile_resnet50);

void sweep_1e6(benchmark::State& state) {
    std::vector<roofplan::Model> models;
    for (const auto& entry : roofplan::models::zoo()) models.push_back(entry.build());
    std::vector<roofplan::Predictor> predictors;
    for (const auto& m : models) predictors.emplace_back(m);
    std::vector<roofplan::EfficiencyProfile> profiles;
    for (const auto& d : roofplan::builtin_devices()) profiles.push_back(roofplan::default_profile(d));
    const std::int64_t target = 1'000'000;
    for (auto _ : state) {
        std::int64_t done = 0;
        double checksum = 0;
        const auto start = std::chrono::steady_clock::now();
        for (std::int64_t batch = 1; done < target; ++batch)
            for (std::size_t m = 0; m < predictors.size() && done < target; ++m)
                for (std::size_t d = 0; d < roofplan::builtin_devices().size() && done < target; ++d)
                    for (roofplan::Precision p : roofplan::all_precisions) {
                        const roofplan::Device& device = roofplan::builtin_devices()[d];
                        const roofplan::Mode mode = p == roofplan::Precision::int8 ? roofplan::Mode::infer
                                                                                   : roofplan::Mode::train;
                        if (!roofplan::supports(device, p, mode) || done >= target) continue;
                        const roofplan::Prediction r = predictors[m](
                            device, profiles[d],
                            {.batch = batch, .precision = p, .mode = mode, .per_layer = false});
                        checksum += r.throughput_samples_per_s;
                        ++done;
                    }
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        benchmark::DoNotOptimize(checksum);
        state.counters["predictions"] = static_cast<double>(done);
        state.counters["sweep_seconds"] = seconds;
    }
}
BENCHMARK(sweep_1e6)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace

BENCHMARK_MAIN();
