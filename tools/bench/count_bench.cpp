// tools/bench/count_bench.cpp — how fast roofplan counts a model (Google Benchmark).
//
// "count": forward + backward-data + backward-weight work of every layer of a prebuilt ResNet-152 at a batch
// and precision, plus the parameter total.  "build_and_count": the same, building the model first.
#include <roofplan/roofplan.hpp>

#include <benchmark/benchmark.h>

namespace {

void count_resnet152(benchmark::State& state) {
    const roofplan::Model model = roofplan::models::resnet152();
    for (auto _ : state) {
        const roofplan::StepWork step = model.training_work(256, roofplan::Precision::amp_fp16);
        benchmark::DoNotOptimize(step);
        benchmark::DoNotOptimize(model.params());
    }
    state.SetItemsProcessed(state.iterations());  // items = models counted
    state.counters["layers"] = static_cast<double>(model.size());
}
BENCHMARK(count_resnet152);

void build_and_count_resnet152(benchmark::State& state) {
    for (auto _ : state) {
        const roofplan::Model model = roofplan::models::resnet152();
        const roofplan::StepWork step = model.training_work(256, roofplan::Precision::amp_fp16);
        benchmark::DoNotOptimize(step);
        benchmark::DoNotOptimize(model.params());
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(build_and_count_resnet152);

void count_bert_large(benchmark::State& state) {
    const roofplan::Model model = roofplan::models::bert_large(512);
    for (auto _ : state) {
        const roofplan::StepWork step = model.training_work(32, roofplan::Precision::amp_bf16);
        benchmark::DoNotOptimize(step);
    }
    state.SetItemsProcessed(state.iterations());
}
BENCHMARK(count_bert_large);

}  // namespace

BENCHMARK_MAIN();
