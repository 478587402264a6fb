// The roofline engine: the formula on hand-checkable cases, properties (monotonicity, scaling), wave
// quantization, the memory model against the source set-ups, energy, and error paths.
#include <roofplan/roofplan.hpp>

#include <doctest/doctest.h>

#include <cmath>
#include <limits>

using namespace roofplan;

namespace {
const Device& device_named(std::string_view id) { return find_device(id); }

Prediction predict_once(const Model& m, const Device& d, std::int64_t batch, Precision p = Precision::fp32,
               Mode mode = Mode::train, Optimizer o = Optimizer::sgd) {
    return predict(m, d, {.batch = batch, .precision = p, .mode = mode, .optimizer = o});
}

/// One Linear layer, big enough to fill every SM with whole tiles.
Model one_linear(std::int64_t in, std::int64_t out, std::int64_t rows) {
    Model m("one-linear", "a single linear layer", Shape{rows, in});
    m.add("fc", Linear{{.in_features = in, .out_features = out, .bias = false, .rows = rows}}, false);
    return m;
}
}  // namespace

TEST_CASE("a large GEMM takes 2*MACs / (peak * efficiency) + launch, exactly") {
    // 128x(80 SMs) rows, 128 multiples everywhere: every wave is full, no tile is padded.
    const Device& v100 = device_named("v100");
    const EfficiencyProfile prof = default_profile(v100);
    const std::int64_t rows = 128 * 80, in = 4096, out = 1024;
    const Model m = one_linear(in, out, rows);
    const Prediction p = predict(m, v100, prof, {.batch = 1, .precision = Precision::amp_fp16, .mode = Mode::infer});
    const double macs = static_cast<double>(rows * in * out);
    const double rate = 125e12 * prof.gemm_efficiency(MathClass::fp16_tensor_fp16_acc);
    CHECK(p.math == MathClass::fp16_tensor_fp16_acc);
    CHECK(p.step_time.value() == doctest::Approx(2 * macs / rate + prof.launch_s).epsilon(1e-9));
    REQUIRE(p.layers.size() == 1);
    CHECK(p.layers[0].bound == Bound::compute);
    CHECK(p.throughput_samples_per_s == doctest::Approx(1.0 / p.step_time.value()));
}

TEST_CASE("a memory-bound layer takes bytes / (bandwidth * efficiency) + launch") {
    Model m("bn", "one batch norm", Shape{64, 56, 56});
    m.add("bn", BatchNorm2d{{.channels = 64, .height = 56, .width = 56}}, false);
    const Device& a100 = device_named("a100");
    const EfficiencyProfile prof = default_profile(a100);
    const Prediction p = predict(m, a100, prof, {.batch = 256, .precision = Precision::fp32, .mode = Mode::infer});
    const auto bytes = static_cast<double>(m.pass_work(Pass::forward, 256, Precision::fp32).bytes().value());
    CHECK(p.bytes.value() == doctest::Approx(bytes));
    CHECK(p.step_time.value() == doctest::Approx(bytes / (2039e9 * prof.memory) + prof.launch_s));
    CHECK(p.layers[0].bound == Bound::memory);
}

TEST_CASE("wave quantization: one tile too many costs a whole wave; awkward shapes fall below the roofline") {
    const Device& a100 = device_named("a100");
    const auto per_mac = [&](std::int64_t rows, std::int64_t n) {
        const Model m = one_linear(4096, n, rows);
        const Prediction p = predict_once(m, a100, 1, Precision::amp_bf16, Mode::infer);
        return (p.step_time.value() - default_profile(a100).launch_s) / static_cast<double>(rows * n * 4096);
    };
    const double full = per_mac(128 * 108, 128);  // exactly one wave of 128x128 tiles
    CHECK(per_mac(128 * 108 + 1, 128) > 1.3 * full);   // a second, nearly empty wave
    CHECK(per_mac(8, 1024) > 5 * full);                  // a skinny GEMM (batch-1 inference)
    CHECK(per_mac(128 * 108 * 4, 128) == doctest::Approx(full));
}

TEST_CASE("properties: more peak or more bandwidth never lowers throughput; time grows with batch") {
    const Model r50 = models::build("resnet50");
    const Model bert = models::build("bert-base", {.seq = 128});
    for (const Model* m : {&r50, &bert}) {
        CAPTURE(m->id());
        for (const char* id : {"v100", "a100", "h100", "rtx2080ti"}) {
            CAPTURE(id);
            Device d = device_named(id);
            const double base = predict_once(*m, d, 64, Precision::amp_fp16).throughput_samples_per_s;
            Device faster = d;
            faster.peak.fp16_tensor_fp32_acc *= 1.5;
            faster.peak.fp16_tensor_fp16_acc *= 1.5;
            faster.peak.fp32 *= 1.5;
            CHECK(predict_once(*m, faster, 64, Precision::amp_fp16).throughput_samples_per_s >= base);
            Device wider = d;
            wider.bandwidth_gb_s *= 1.5;
            CHECK(predict_once(*m, wider, 64, Precision::amp_fp16).throughput_samples_per_s > base);
            double previous = 0;
            for (std::int64_t b : {1, 2, 4, 8, 16, 32, 64, 128, 256}) {
                const double t = predict_once(*m, d, b, Precision::amp_fp16).step_time.value();
                CHECK(t > previous);
                previous = t;
            }
        }
    }
}

TEST_CASE("compute-bound layers scale with the peak, memory-bound ones with the bandwidth") {
    const Model m = models::build("resnet50");
    Device d = device_named("v100");
    const Prediction base = predict_once(m, d, 128);
    Device twice = d;
    twice.peak.fp32 *= 2;
    const Prediction faster = predict_once(m, twice, 128);
    const double launch = 3 * default_profile(d).launch_s;
    for (std::size_t i = 0; i < base.layers.size(); ++i) {
        const LayerPrediction& a = base.layers[i];
        const LayerPrediction& b = faster.layers[i];
        if (a.bound == Bound::compute && b.bound == Bound::compute && a.time.value() > 100 * launch)
            CHECK((b.time.value() - launch) == doctest::Approx((a.time.value() - launch) / 2).epsilon(0.02));
        if (a.bound == Bound::memory) CHECK(b.time.value() == doctest::Approx(a.time.value()));
    }
}

TEST_CASE("results: fractions, phases and layers add up; per-layer output is optional") {
    const Model m = models::build("bert-squad");
    const Prediction p = predict_once(m, device_named("a100"), 32, Precision::amp_bf16);
    double sum = 0;
    for (const auto& t : p.phase_time) sum += t.value();
    CHECK(sum == doctest::Approx(p.step_time.value()));
    double layers = 0;
    for (const auto& l : p.layers) layers += l.time.value();
    CHECK(layers + p.phase_time[Phase::optimizer].value() == doctest::Approx(p.step_time.value()));
    double types = 0;
    for (const auto& [type, t] : p.by_type) types += t.value();
    CHECK(types == doctest::Approx(p.step_time.value()));
    CHECK(p.fraction_of_peak > 0.05);
    CHECK(p.fraction_of_peak < 1.0);
    const Prediction lean = predict(m, device_named("a100"), {.batch = 32, .precision = Precision::amp_bf16, .per_layer = false});
    CHECK(lean.layers.empty());
    CHECK(lean.step_time.value() == p.step_time.value());
    // Inference runs the forward pass only.
    const Prediction inf = predict_once(m, device_named("a100"), 32, Precision::amp_bf16, Mode::infer);
    CHECK(inf.step_time.value() < 0.5 * p.step_time.value());
    CHECK(inf.phase_time[Phase::backward_data].value() == 0);
    CHECK(inf.phase_time[Phase::optimizer].value() == 0);
}

/// A prediction under a runtime (memory follows the runtime: eager PyTorch's allocations and allocator).
Prediction on(Runtime runtime, const Model& m, const Device& d, std::int64_t batch, Precision p = Precision::fp32,
              Mode mode = Mode::train, Optimizer o = Optimizer::sgd) {
    return predict(m, d, {.batch = batch, .precision = p, .mode = mode, .optimizer = o, .runtime = runtime});
}

TEST_CASE("memory model reproduces the source set-ups (SPEC.md section 2)") {
    const Device& v100 = device_named("v100-sxm2-32gb");
    const Device& rtx = device_named("rtx2080ti");
    struct Case { const char* model; std::int64_t v100_batch; std::int64_t rtx_batch; };
    for (const Case c : {Case{"resnet18", 256, 64}, Case{"resnet50", 256, 64}, Case{"resnet101", 128, 32},
                         Case{"resnet152", 128, 32}, Case{"bert-swag", 64, 16}, Case{"bert-squad", 32, 8},
                         Case{"alexnet", 256, 64}}) {
        CAPTURE(c.model);
        const Model m = models::build(c.model);
        const Prediction on_v100 = on(Runtime::eager, m, v100, c.v100_batch);
        const Prediction on_rtx = on(Runtime::eager, m, rtx, c.rtx_batch);
        CHECK(on_v100.fits);
        CHECK(on_rtx.fits);
        CHECK(on_v100.max_batch >= c.v100_batch);
        CHECK(on_rtx.max_batch >= c.rtx_batch);
        // The 11 GB card holds roughly a quarter to a third of what the 32 GB card holds.
        const double ratio = static_cast<double>(on_rtx.max_batch) / static_cast<double>(on_v100.max_batch);
        CHECK(ratio > 0.2);
        CHECK(ratio < 0.36);
    }
    // GNMT at batch 128 per GPU fits the 24 GB Titan RTX, not the 6 GB RTX 2060 (a memory-hungry RNN), which
    // then says how much is missing.
    const Model gnmt = models::build("gnmt");
    CHECK(on(Runtime::eager, gnmt, device_named("titan-rtx"), 128).fits);
    const Prediction small = on(Runtime::eager, gnmt, device_named("rtx2060"), 128);
    CHECK_FALSE(small.fits);
    CHECK(small.missing.value() == small.memory.total.value() - small.capacity.value());
}

TEST_CASE("max batch is the boundary of fits; the breakdown follows the optimizer, the precision and the mode") {
    const Model m = models::build("resnet152");
    const Device& d = device_named("rtx2080ti");
    const Prediction p = on(Runtime::eager, m, d, 8);
    CHECK(p.max_batch > 8);
    CHECK(p.missing.value() == 0);
    CHECK(on(Runtime::eager, m, d, p.max_batch).fits);
    const Prediction over = on(Runtime::eager, m, d, p.max_batch + 1);
    CHECK_FALSE(over.fits);
    CHECK(over.missing.value() > 0);
    // The same figures as the memory module's own (the Predictor only forwards the request).
    const memory::MemoryEstimate direct =
        memory::MemoryModel(m)({.batch = 8, .runtime = Runtime::eager}, memory::DeviceMemory::of(d));
    CHECK(p.memory.reserved_peak == direct.reserved_peak);
    CHECK(p.memory.total == direct.total);
    CHECK(p.memory.total == p.memory.reserved_peak + p.memory.context);
    // FP32 masters; SGD keeps one momentum per parameter, Adam two moments (allocator blocks: a request is
    // rounded up to 512 bytes, and a large segment's remainder under 1 MiB is not split off, so blocks exceed
    // the requests by a few percent).
    const auto params = static_cast<double>(m.params());
    const auto near = [&](byte_count b, double bytes) {
        return static_cast<double>(b.value()) >= bytes && static_cast<double>(b.value()) < 1.03 * bytes;
    };
    CHECK(near(p.memory.optimizer_state, 4 * params));
    const Prediction adam = on(Runtime::eager, m, d, 8, Precision::fp32, Mode::train, Optimizer::adam);
    CHECK(near(adam.memory.optimizer_state, 8 * params));
    CHECK(adam.max_batch < p.max_batch);
    CHECK(p.memory.weights.value() >= m.params() * 4);
    // Mixed precision saves BF16/FP16 activations: more samples fit.
    const Prediction amp = on(Runtime::eager, m, d, 8, Precision::amp_fp16);
    CHECK(amp.max_batch > p.max_batch);
    CHECK(amp.memory.saved_activations.value() < p.memory.saved_activations.value());
    // An int8 inference engine keeps one byte per weight, no gradients, no optimizer state.
    const Prediction inf = on(Runtime::compiled, m, d, 8, Precision::int8, Mode::infer);
    CHECK(inf.memory.weights.value() >= m.params());
    CHECK(inf.memory.weights.value() < m.params() * 11 / 10);
    CHECK(inf.memory.gradients.value() == 0);
    CHECK(inf.memory.optimizer_state.value() == 0);
    CHECK(inf.max_batch > p.max_batch);
}

TEST_CASE("memory options: the context can be given, memory can be skipped, bad contexts are refused") {
    const Model m = models::build("resnet50");
    const Device& d = device_named("h200");
    const Prediction p = on(Runtime::eager, m, d, 64);
    CHECK(p.memory.context.value() > 0);
    PredictRequest r{.batch = 64, .runtime = Runtime::eager};
    r.context = memory::ContextFigure{0, "none", false};
    const Prediction bare = predict(m, d, r);
    CHECK(bare.memory.total == bare.memory.reserved_peak);
    CHECK(bare.max_batch >= p.max_batch);
    CHECK(bare.step_time == p.step_time);
    r.context = memory::ContextFigure{-1, "negative", false};
    CHECK_THROWS_WITH_AS(predict(m, d, r), doctest::Contains("context memory must be >= 0 bytes"), invalid_argument);
    const Prediction lean = predict(m, d, {.batch = 64, .estimate_memory = false, .runtime = Runtime::eager});
    CHECK(lean.step_time == p.step_time);
    CHECK_FALSE(lean.fits);
    CHECK(lean.max_batch == 0);
    CHECK(lean.memory.total.value() == 0);
    Device none = d;
    none.memory_gib = 0;
    CHECK_THROWS_WITH_AS(predict(m, none, {.batch = 64}), doctest::Contains("has no memory size"), invalid_argument);
}

TEST_CASE("energy: samples per joule at TDP, or at a profile's measured power") {
    const Model m = models::build("alexnet");
    const Prediction p40 = predict_once(m, device_named("p40"), 128, Precision::int8, Mode::infer);
    const Prediction p4 = predict_once(m, device_named("p4"), 128, Precision::int8, Mode::infer);
    CHECK(p40.samples_per_joule == doctest::Approx(p40.throughput_samples_per_s / 250.0));
    CHECK(p40.throughput_samples_per_s > p4.throughput_samples_per_s);
    CHECK(p4.samples_per_joule > 0);
    EfficiencyProfile measured = default_profile(device_named("p40"));
    measured.power_w = 200;
    const Prediction at200 = predict(m, device_named("p40"), measured, {.batch = 128, .precision = Precision::int8, .mode = Mode::infer});
    CHECK(at200.samples_per_joule == doctest::Approx(at200.throughput_samples_per_s / 200.0));
}

TEST_CASE("errors: batch 0, overflowing batches, unsupported precision, int8 training") {
    const Model m = models::build("resnet50");
    CHECK_THROWS_WITH_AS(predict_once(m, device_named("v100"), 0), doctest::Contains("batch must be a positive integer"),
                         invalid_argument);
    CHECK_THROWS_WITH_AS(predict_once(m, device_named("v100"), std::numeric_limits<std::int64_t>::max() / 2),
                         doctest::Contains("overflows 64 bits"), invalid_argument);
    CHECK_THROWS_WITH_AS(predict_once(m, device_named("p40"), 8, Precision::amp_fp16), doctest::Contains("no FP16 tensor cores"),
                         invalid_argument);
    CHECK_THROWS_AS(predict_once(m, device_named("v100"), 8, Precision::int8), invalid_argument);
    CHECK_THROWS_AS(parse_optimizer("lamb"), invalid_argument);
    CHECK_THROWS_AS(parse_mode("serve"), invalid_argument);
    EfficiencyProfile bad = default_profile(device_named("v100"));
    bad.memory = 0;
    CHECK_THROWS_AS(validate(bad), invalid_argument);
}

TEST_CASE("a Predictor compiled once gives the same answer as one-shot predictions, for every zoo model") {
    for (const auto& entry : models::zoo()) {
        CAPTURE(entry.id);
        const Model m = entry.build();
        const Predictor predictor(m);
        for (const char* id : {"v100", "h200", "t4"}) {
            const Device& d = device_named(id);
            const PredictRequest r{.batch = 16, .precision = Precision::amp_fp16};
            const Prediction a = predictor(d, default_profile(d), r);
            CHECK(a.step_time.value() == predict(m, d, r).step_time.value());
            CHECK(std::isfinite(a.throughput_samples_per_s));
            CHECK(a.throughput_samples_per_s > 0);
            const auto flops = static_cast<double>(m.training_work(16, Precision::amp_fp16).total().flops().value());
            CHECK(a.flops.value() > flops);  // plus the optimizer
            CHECK(a.flops.value() < flops * 1.01);
        }
    }
}
