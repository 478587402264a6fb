// The execution model: runtimes' lowering, the host timeline, the kernel-class fits.
#include <roofplan/calibration/operators.hpp>
#include <roofplan/io/json.hpp>
#include <roofplan/roofplan.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <string>

using namespace roofplan;

namespace {
std::map<std::string, int> count_by_what(const std::vector<Kernel>& kernels) {
    std::map<std::string, int> n;
    for (const Kernel& k : kernels) ++n[std::string(k.what)];
    return n;
}
Prediction run(const Model& m, std::string_view device, std::int64_t batch, Precision p, Runtime r,
               Mode mode = Mode::train, Optimizer o = Optimizer::sgd) {
    PredictRequest q;
    q.batch = batch;
    q.precision = p;
    q.runtime = r;
    q.mode = mode;
    q.optimizer = o;
    const Device& d = find_device(device);
    return Predictor(m)(d, default_profile(d), q);
}
}  // namespace

TEST_CASE("eager ResNet-50 amp-bf16 training launches what PyTorch's profile shows, structurally") {
    const Model m = models::build("resnet50");
    const LoweredStep s = lower(m, 32, {Precision::amp_bf16, Mode::train, Optimizer::sgd}, Runtime::eager);
    const auto n = count_by_what(s.kernels);
    // 53 batch norms: native kernels (bf16 input): statistics + transform forward, reduce + elementwise backward.
    CHECK(n.at("batch norm statistics") == 53);
    CHECK(n.at("batch norm backward elementwise") == 53);
    // Autocast casts each of the 54 matrix weights forward and its gradient back.
    CHECK(n.at("cast weight") == 54);
    CHECK(n.at("cast weight gradient") == 54);
    // 49 in-place ReLUs, 16 residual adds each with one gradient accumulation, one max pool.
    CHECK(n.at("relu") == 49);
    CHECK(n.at("add") == 16);
    CHECK(n.at("accumulate gradient") == 16);
    // 53 convolutions: forward and filter gradient each, data gradient except the first layer.
    CHECK(n.at("conv forward") == 53);
    CHECK(n.at("conv backward-filter") == 53);
    CHECK(n.at("conv backward-data") == 52);
    // SGD with momentum, foreach over 161 tensors / 25.6 M parameters: 3 ops x 3 launches (the profile's 9).
    int optimizer = 0;
    for (const Kernel& k : s.kernels) optimizer += k.part == StepPart::optimizer;
    CHECK(optimizer == 9);
    // The step's kernel count is within 15% of torch.profiler's 1012 (validation/results/2026-11-23-h200-e2e).
    CHECK(static_cast<double>(s.kernels.size()) == doctest::Approx(1012).epsilon(0.15));
    CHECK(s.fallbacks.empty());
}

TEST_CASE("eager lowering keeps the model's matrix work: forward MACs equal the counted MACs") {
    for (const char* id : {"resnet50", "vgg16", "alexnet"}) {
        const Model m = models::build(id);
        const LoweredStep s = lower(m, 4, {Precision::amp_bf16, Mode::infer, Optimizer::sgd}, Runtime::eager);
        double macs = 0;
        for (const Kernel& k : s.kernels) macs += k.macs;
        CHECK(macs == doctest::Approx(4.0 * static_cast<double>(m.forward_macs().value())).epsilon(1e-12));
    }
}

TEST_CASE("timeline: busy + idle = step, host-bound at batch 1, GPU-bound at a large batch") {
    const Model m = models::build("resnet50");
    const Prediction small = run(m, "h200", 1, Precision::amp_bf16, Runtime::eager, Mode::infer);
    const Prediction large = run(m, "h200", 256, Precision::amp_bf16, Runtime::eager, Mode::infer);
    for (const Prediction* p : {&small, &large}) {
        CHECK(p->gpu_idle_s >= 0);
        CHECK(p->gpu_busy_s + p->gpu_idle_s == doctest::Approx(p->step_time.value()));
        CHECK(p->step_time.value() >= p->host_s - 1e-12);
        CHECK(p->kernel_count > 100);
    }
    CHECK(small.bound == StepBound::host);
    CHECK(large.bound != StepBound::host);
    CHECK(large.gpu_idle_s / large.step_time.value() < 0.05);
    // More work never takes less time.
    CHECK(large.step_time.value() > small.step_time.value());
}

TEST_CASE("a training batch norm pays its module call and autograd node once, its other kernels the launch only") {
    const Model m = models::build("resnet50");
    HostCosts h;
    for (Precision p : {Precision::fp32, Precision::amp_fp16, Precision::amp_bf16}) {
        const LoweredStep s = lower(m, 8, {p, Mode::train, Optimizer::sgd}, Runtime::eager);
        double forward = 0, backward = 0;
        int calls = 0;
        for (const Kernel& k : s.kernels) {
            if (k.call != HostCall::batch_norm) continue;
            (k.part == StepPart::forward ? forward : backward) += host_cost(k, h);
            calls += k.host == HostOp::module;
        }
        CHECK(calls == 53);
        int launches_forward = 0, launches_backward = 0;
        for (const Kernel& k : s.kernels)
            if (k.call == HostCall::batch_norm) ++(k.part == StepPart::forward ? launches_forward : launches_backward);
        CHECK(forward == doctest::Approx(53 * h.batch_norm_forward_s + launches_forward * h.launch_s));
        CHECK(backward == doctest::Approx(53 * h.batch_norm_backward_s + launches_backward * h.launch_s));
    }
    // Inference keeps the generic module call; a compiled step launches without the module's Python.
    for (const Kernel& k : lower(m, 8, {Precision::fp32, Mode::infer, Optimizer::sgd}, Runtime::eager).kernels)
        CHECK(k.call == HostCall::generic);
    for (const Kernel& k : lower(m, 8, {Precision::amp_bf16, Mode::train, Optimizer::sgd}, Runtime::compiled).kernels)
        CHECK(k.call == (k.host == HostOp::graph ? HostCall::compiled : HostCall::generic));  // the graphs' calls
}

TEST_CASE("runtimes order as they should: ideal <= compiled <= eager, fewer kernels when compiled") {
    const Model m = models::build("bert-base");
    for (Mode mode : {Mode::train, Mode::infer}) {
        const Prediction ideal = run(m, "a100", 16, Precision::amp_fp16, Runtime::ideal, mode, Optimizer::adam);
        const Prediction compiled = run(m, "a100", 16, Precision::amp_fp16, Runtime::compiled, mode, Optimizer::adam);
        const Prediction eager = run(m, "a100", 16, Precision::amp_fp16, Runtime::eager, mode, Optimizer::adam);
        CHECK(compiled.kernel_count < eager.kernel_count);
        CHECK(compiled.step_time.value() < eager.step_time.value());
        CHECK(ideal.step_time.value() < eager.step_time.value());
        CHECK(eager.runtime == Runtime::eager);
    }
}

TEST_CASE("misaligned GEMMs run cuBLAS's fallback kernels: GPT-2's 50257-wide head is slower than a padded one") {
    const Device& h200 = find_device("h200");
    const EfficiencyProfile p = default_profile(h200);
    const Roofline r(h200, p, MathClass::bf16_tensor);
    const auto head = [&](double vocab) {
        Kernel k = runtime_detail::gemm_kernel(HostOp::module, "lm head", 8192, vocab, 768, 1, 2, 2);
        return r.time(k).total_s;
    };
    CHECK(head(50257) / head(50264) == doctest::Approx(1.0 / p.unaligned_odd).epsilon(0.02));
    CHECK(head(30522) / head(30528) == doctest::Approx(1.0 / p.unaligned_even).epsilon(0.02));
    const Roofline fp32(h200, p, MathClass::fp32);  // FMA-unit GEMMs do not care
    Kernel k = runtime_detail::gemm_kernel(HostOp::module, "lm head", 8192, 50257, 768, 1, 4, 4);
    Kernel padded = runtime_detail::gemm_kernel(HostOp::module, "lm head", 8192, 50264, 768, 1, 4, 4);
    CHECK(fp32.time(k).total_s == doctest::Approx(fp32.time(padded).total_s).epsilon(0.01));
}

TEST_CASE("runtime errors and fallbacks are stated") {
    const Model m = models::build("resnet50");
    CHECK_THROWS_WITH_AS(lower(m, 8, {Precision::int8, Mode::infer, Optimizer::sgd}, Runtime::eager),
                         doctest::Contains("eager PyTorch has no int8 path"), roofplan::invalid_argument);
    CHECK_THROWS_WITH_AS(parse_runtime("graph"), doctest::Contains("accepted: eager, compiled, ideal"),
                         roofplan::invalid_argument);
    const Model gnmt = models::build("gnmt");
    const LoweredStep s = lower(gnmt, 8, {Precision::amp_fp16, Mode::train, Optimizer::adam}, Runtime::eager);
    CHECK(std::find(s.fallbacks.begin(), s.fallbacks.end(), "lstm") != s.fallbacks.end());
}

TEST_CASE("kernel-class fit recovers a known curve; host fit recovers known costs") {
    const Device& d = find_device("h200");
    std::vector<OperatorSample> samples;
    for (double bytes : {1e5, 1e6, 1e7, 1e8, 1e9}) {
        OperatorSample s;
        s.op = "relu";
        s.pass = "fwd";
        s.dtype = "bf16";
        s.layout = "contiguous";
        s.bytes = bytes;
        s.numel = bytes / 2;
        s.seconds = 2.5e-6 + bytes / (0.8 * 4.8e12);
        samples.push_back(s);
    }
    EfficiencyProfile p = default_profile(d);
    const auto fits = calibration::fit_kernel_classes(samples, d, p);
    REQUIRE(fits.size() == 1);
    CHECK(fits[0].memory == doctest::Approx(0.8).epsilon(1e-6));
    CHECK(fits[0].fixed_s == doctest::Approx(2.5e-6).epsilon(1e-6));
    CHECK(p.kernel_class[KernelClass::elementwise].memory == doctest::Approx(0.8));

    HostCosts h;
    std::vector<HostSample> host{{"view (no kernel)", 1.5e-6, 0},
                                              {"nn.Linear(64,64) call, requires_grad (forward only)", 20e-6, 1},
                                              {"nn.Linear(64,64) forward+backward (Sequential of 100)", 120e-6, 6}};
    CHECK(calibration::fit_host(host, h) == 3);
    CHECK(h.view_s == doctest::Approx(1.5e-6));
    CHECK(h.module_s == doctest::Approx(20e-6 - h.launch_s));
    CHECK(h.backward_s == doctest::Approx((120e-6 - 20e-6) / 5 - h.launch_s));
}

TEST_CASE("max pooling: native kernels of their own class, indices always written, a fill before the backward") {
    const Model m = models::build("resnet50");
    const auto pool_kernels = [&](Precision p, Mode mode, Runtime r) {
        std::vector<Kernel> out;
        const LoweredStep s = lower(m, 8, {p, mode, Optimizer::sgd}, r);
        for (const Kernel& k : s.kernels)
            if (k.what == "maxpool2d" || k.what == "zero pool input gradient" || k.kind == KernelClass::pooling_backward)
                out.push_back(k);
        return out;
    };
    // ResNet-50's one max pool (k3 s2 p1): 64 x 112 x 112 in, 64 x 56 x 56 out per sample.
    const double in = 8.0 * 64 * 112 * 112, out = 8.0 * 64 * 56 * 56;
    const auto fp32 = pool_kernels(Precision::fp32, Mode::train, Runtime::eager);
    REQUIRE(fp32.size() == 3);
    CHECK(fp32[0].kind == KernelClass::pooling);  // NCHW forward
    CHECK(fp32[0].bytes_read == doctest::Approx(4 * in));
    CHECK(fp32[0].bytes_written == doctest::Approx(4 * out + 8 * out));  // output and int64 indices
    CHECK(fp32[1].kind == KernelClass::memset);  // the input gradient zeroed ...
    CHECK(fp32[1].bytes_written == doctest::Approx(4 * in));
    CHECK(fp32[2].kind == KernelClass::pooling_backward);  // ... then the scatter through the indices
    CHECK(fp32[2].bytes_read == doctest::Approx(4 * out + 8 * out));
    const auto amp = pool_kernels(Precision::amp_bf16, Mode::train, Runtime::eager);
    REQUIRE(amp.size() == 3);
    CHECK(amp[0].kind == KernelClass::pooling_nhwc);  // AMP CNNs run channels-last
    CHECK(amp[0].bytes_written == doctest::Approx(2 * out + 8 * out));
    // Eager inference computes the indices too (max_pool2d calls max_pool2d_with_indices); a compiler does not.
    const auto infer = pool_kernels(Precision::fp32, Mode::infer, Runtime::eager);
    REQUIRE(infer.size() == 1);
    CHECK(infer[0].bytes_written == doctest::Approx(4 * out + 8 * out));
    const auto compiled = pool_kernels(Precision::amp_bf16, Mode::infer, Runtime::compiled);
    for (const Kernel& k : compiled) CHECK(k.kind != KernelClass::pooling_nhwc);
}

TEST_CASE("pooling classes are fitted from max-pool cases; the backward's fill is taken out before its fit") {
    const Device& d = find_device("h200");
    const double bw = d.bandwidth_gb_s * 1e9;
    EfficiencyProfile p = default_profile(d);
    const KernelClassCost fill = p.kernel_class[KernelClass::memset];
    std::vector<OperatorSample> samples;
    for (double n : {1e6, 1e7, 1e8}) {  // input elements, bf16; output a quarter of them
        OperatorSample f;
        f.op = "max_pool2d";
        f.dtype = "amp-bf16";
        f.layout = "nhwc";
        f.numel = n;
        f.pass = "fwd";
        f.bytes = 2 * n + 10 * n / 4;
        f.seconds = 10e-6 + f.bytes / (0.3 * bw);
        samples.push_back(f);
        OperatorSample b = f;
        b.pass = "bwd";
        b.kernels = 2;
        b.bytes = 10 * n / 4 + 2 * n;
        const double fill_sm = fill.sm_elements_per_cycle > 0 ? n / (d.sms * d.boost_clock_mhz * 1e6 * fill.sm_elements_per_cycle) : 0;
        b.seconds = (fill.fixed_s + 2 * n / (fill.memory * bw) + fill_sm) + 5e-6 + b.bytes / (0.15 * bw);
        samples.push_back(b);
    }
    calibration::fit_kernel_classes(samples, d, p);
    CHECK(p.kernel_class[KernelClass::pooling_nhwc].memory == doctest::Approx(0.3).epsilon(1e-6));
    CHECK(p.kernel_class[KernelClass::pooling_nhwc].fixed_s == doctest::Approx(10e-6).epsilon(1e-6));
    CHECK(p.kernel_class[KernelClass::pooling_backward].memory == doctest::Approx(0.15).epsilon(1e-6));
    CHECK(p.kernel_class[KernelClass::pooling_backward].fixed_s == doctest::Approx(5e-6).epsilon(1e-6));
    CHECK(p.kernel_class[KernelClass::pooling].memory == default_profile(d).kernel_class[KernelClass::pooling].memory);
}

TEST_CASE("a Program (lowered at batches 1 and 2) equals a direct lowering at any batch") {
    for (const char* id : {"resnet50", "bert-squad", "gpt2"}) {
        const Model m = models::build(id);
        for (Precision p : {Precision::amp_bf16, Precision::fp32}) {
            const Runtime rt = Runtime::eager;  // (a compiled chain's bytes are not affine where a chain's input is
                                                // cut at its producer's output: compiled.hpp `absorb`)
            const StepConfig step{p, Mode::train, Optimizer::adam};
            const Program program(m, step, rt);
            for (std::int64_t b : {3, 7, 64}) {
                const std::vector<Kernel> direct = lower(m, b, step, rt).kernels;
                const std::vector<Kernel> affine = program.at(b);
                REQUIRE(direct.size() == affine.size());
                for (std::size_t i = 0; i < direct.size(); ++i) {
                    CHECK(affine[i].bytes() == doctest::Approx(direct[i].bytes()).epsilon(1e-12));
                    CHECK(affine[i].macs == doctest::Approx(direct[i].macs).epsilon(1e-12));
                    CHECK(affine[i].m == doctest::Approx(direct[i].m).epsilon(1e-12));
                    CHECK(affine[i].conv_shape == direct[i].conv_shape);  // a measured convolution's key and batch
                    CHECK(affine[i].images == doctest::Approx(direct[i].images).epsilon(1e-12));
                    // The elements a streaming kernel touches, by either path.
                    CHECK(Roofline::elements_of(affine[i]) == doctest::Approx(Roofline::elements_of(direct[i])).epsilon(1e-9));
                    CHECK(program.stream(i, b).elements == doctest::Approx(Roofline::elements_of(direct[i])).epsilon(1e-9));
                    if (direct[i].kind == KernelClass::conv) CHECK(direct[i].images == static_cast<double>(b));
                }
            }
        }
    }
}

TEST_CASE("every streaming kernel states its bytes an element; the SM side goes by the element") {
    // Each zoo model, precision, mode and lowered runtime: a streaming kernel's element width (Kernel::
    // element_bytes) is that of the tensors it touches, between an int8 byte and an int64 index.
    std::size_t checked = 0;
    for (const auto& entry : models::zoo()) {
        const Model m = entry.build();
        for (Precision p : {Precision::fp32, Precision::tf32, Precision::amp_bf16, Precision::amp_fp16})
            for (Mode mode : {Mode::train, Mode::infer})
                for (Runtime rt : {Runtime::eager, Runtime::compiled})
                    for (const Kernel& k : lower(m, 4, {p, mode, Optimizer::adam}, rt).kernels) {
                        if (is_matrix(k.kind) || k.bytes() == 0) continue;
                        CAPTURE(entry.id);
                        CAPTURE(k.what);
                        CHECK(k.element_bytes >= 1);
                        CHECK(k.element_bytes <= 8);
                        ++checked;
                    }
    }
    CHECK(checked > 10000);
    // The same kernel in FP32 and in bf16 (twice the bytes, the same elements): the memory side doubles, the SM
    // side stays.  The default Hopper layer norm: mostly SM side.
    const Device& d = find_device("h200");
    const EfficiencyProfile hopper = default_profile(d);
    const Roofline r(d, hopper, MathClass::bf16_tensor);
    const double n = 64.0 * 128 * 768;
    const KernelTime half = r.stream_time(KernelClass::layer_norm, 0, 2 * 2 * n, 2 * n);
    const KernelTime full = r.stream_time(KernelClass::layer_norm, 0, 2 * 4 * n, 2 * n);
    const KernelClassCost& ln = hopper.kernel_class[KernelClass::layer_norm];
    const double memory = 2 * 2 * n / (d.bandwidth_gb_s * 1e9 * ln.memory), sm = 2 * n / (d.sm_cycles_per_s() * ln.sm_elements_per_cycle);
    CHECK(half.memory_s == doctest::Approx(memory + sm));
    CHECK(full.memory_s == doctest::Approx(2 * memory + sm));
    CHECK(full.memory_s < 1.5 * half.memory_s);
    // Kernels that state no width (0) have no SM side: the memory side alone.
    Kernel none;
    none.kind = KernelClass::layer_norm;
    none.bytes_read = none.bytes_written = 2 * n;
    CHECK(Roofline::elements_of(none) == 0);
    CHECK(r.time(none).memory_s == doctest::Approx(memory));
}

TEST_CASE("the simulation's shortcuts: streaming kernels timed from bytes and FLOPs, host costs kept per host") {
    const Device& d = find_device("h200");
    const EfficiencyProfile profile = default_profile(d);
    const Roofline r(d, profile, MathClass::bf16_tensor);
    const Model m = models::build("resnet50");
    const Program program(m, {Precision::amp_bf16, Mode::train, Optimizer::sgd}, Runtime::eager);
    std::size_t streaming = 0;
    for (std::size_t i = 0; i < program.size(); ++i) {
        const Kernel k = program.kernel(i, 32);
        CHECK(program.streaming(i) == Roofline::is_streaming(k));
        if (!program.streaming(i)) continue;
        ++streaming;
        // The shortcut gives what the full rules give the whole kernel, figure for figure.
        const KernelTime full = r.matrix_time(k);
        const Program::Stream s = program.stream(i, 32);
        const KernelTime quick = r.stream_time(k.kind, s.vector_flops, s.bytes, s.elements);
        CHECK(quick.total_s == full.total_s);
        CHECK(quick.compute_s == full.compute_s);
        CHECK(quick.memory_s == full.memory_s);
        CHECK(quick.flops == full.flops);
        CHECK(quick.bytes == full.bytes);
        CHECK(quick.bound == full.bound);
        CHECK(quick.launches == full.launches);
    }
    CHECK(streaming > program.size() / 2);  // most of an eager step's kernels are streaming ones

    // A Predictor keeps its programs' host costs per host: alternating two hosts gives each its own figures.
    const Predictor predictor(m);
    EfficiencyProfile slow = profile;
    slow.host.module_s *= 3;
    slow.host.backward_s *= 3;
    const PredictRequest request{.batch = 8, .precision = Precision::amp_bf16, .estimate_memory = false,
                                 .per_layer = false, .runtime = Runtime::eager};
    const Prediction a = predictor(d, profile, request);
    const Prediction b = predictor(d, slow, request);
    const Prediction a2 = predictor(d, profile, request);
    CHECK(b.host_s > a.host_s * 1.5);
    CHECK(a2.host_s == a.host_s);
    CHECK(a2.throughput_samples_per_s == a.throughput_samples_per_s);
    CHECK(Predictor(m)(d, slow, request).host_s == b.host_s);
}

TEST_CASE("fused attention: executed key blocks under a causal mask, SMs left idle at batch 1, compute plus memory") {
    const Device& d = find_device("h200");
    const Roofline r(d, default_profile(d), MathClass::bf16_tensor);
    const auto kernel = [](double batch, double seq, bool causal, StepPart part = StepPart::forward) {
        const double heads = 12, dim = 64;
        Kernel k;
        k.kind = KernelClass::attention;
        k.part = part;
        k.macs = 2 * batch * heads * (causal ? seq * (seq + 1) / 2 : seq * seq) * dim;
        k.bytes_read = 3 * 2 * batch * heads * seq * dim;
        k.bytes_written = 2 * batch * heads * seq * dim;
        k.m = seq, k.n = seq, k.k = dim, k.count = batch * heads;
        k.causal = causal;
        return k;
    };
    // Sequence 1,024 (8 key blocks of 128): a causal kernel executes 36 of 64 blocks, not half of the pairs.
    const double full = r.attention(kernel(8, 1024, false)).peak_s;
    CHECK(r.attention(kernel(8, 1024, true)).peak_s == doctest::Approx(full * 36 / 64));
    // Sequence 128 is one key block: the causal kernel computes the whole square.
    CHECK(r.attention(kernel(64, 128, true)).peak_s == doctest::Approx(r.attention(kernel(64, 128, false)).peak_s));
    // Batch 1, 12 heads, sequence 128: 24 blocks of 64 query rows on 132 SMs, 132/24 of the ideal time.
    const Kernel b1 = kernel(1, 128, false);
    CHECK(r.attention(b1).peak_s == doctest::Approx(2 * b1.macs / (d.peak.bf16_tensor * 1e12) * 132 / 24));
    // Compute and memory add; the pass picks the efficiency.
    const KernelTime t = r.time(b1);
    const EfficiencyProfile p = default_profile(d);
    CHECK(t.compute_s == doctest::Approx(r.attention(b1).peak_s / p.attention.forward));
    CHECK(t.total_s == doctest::Approx(t.compute_s + t.memory_s + p.kernel_class[KernelClass::attention].fixed_s));
    const Kernel bwd = kernel(1, 128, false, StepPart::backward);
    CHECK(r.time(bwd).compute_s == doctest::Approx(r.attention(bwd).peak_s / p.attention.backward));
    // The datasheet roofline runs attention at the peak.
    CHECK(Roofline::datasheet(d, MathClass::bf16_tensor).time(kernel(8, 1024, false)).compute_s ==
          doctest::Approx(2 * kernel(8, 1024, false).macs / (d.peak.bf16_tensor * 1e12)));
}

TEST_CASE("attention efficiencies are fitted from sdpa cases: a known efficiency is recovered") {
    const Device& d = find_device("h200");
    EfficiencyProfile truth = default_profile(d);
    truth.attention = {0.6, 0.45, 0.5, 0.55, 0.4, 0.3, 0.35, 0.25};
    std::vector<OperatorSample> samples;
    for (const char* dtype : {"bf16", "fp32"})
        for (const char* pass : {"fwd", "bwd"})
            for (const char* mask : {"mask=none", "mask=causal", "mask=additive", "mask=none,dropout=0.1",
                                     "mask=causal,dropout=0.1", "mask=additive,dropout=0.1"})
                for (const auto& [b, t] : {std::pair{64.0, 128.0}, {8.0, 1024.0}, {21.0, 384.0}}) {
                    OperatorSample s;
                    s.op = "sdpa";
                    s.dtype = dtype;
                    s.pass = pass;
                    s.layout = mask;
                    s.shape = {b, 12, t, 64};
                    s.bytes = 1, s.seconds = 1;
                    const auto k = calibration::attention_kernel((s.class_seconds = 1, s));
                    if (!k) continue;  // additive masks are not modelled
                    const MathClass m = s.dtype == std::string("bf16") ? MathClass::bf16_tensor : MathClass::fp32;
                    s.class_seconds = Roofline(d, truth, m).time(*k).total_s;
                    samples.push_back(s);
                }
    REQUIRE(samples.size() == 48);
    EfficiencyProfile p = default_profile(d);
    const auto fits = calibration::fit_attention(samples, d, p);
    REQUIRE(fits.size() == 8);
    CHECK(p.attention.forward == doctest::Approx(0.6));
    CHECK(p.attention.backward == doctest::Approx(0.45));
    CHECK(p.attention.simt_forward == doctest::Approx(0.5));
    CHECK(p.attention.simt_backward == doctest::Approx(0.55));
    // With dropout on the probabilities: efficiencies of their own.
    CHECK(p.attention.dropout_forward == doctest::Approx(0.4));
    CHECK(p.attention.dropout_backward == doctest::Approx(0.3));
    CHECK(p.attention.dropout_simt_forward == doctest::Approx(0.35));
    CHECK(p.attention.dropout_simt_backward == doctest::Approx(0.25));
    for (const auto& f : fits) CHECK(f.worst_rel_error < 1e-9);
    // Without dropout cases the dropout efficiencies keep their values; 0 (a profile that has none) times the
    // kernels with dropout as the ones without.
    std::vector<OperatorSample> plain;
    for (const OperatorSample& s : samples)
        if (s.layout.find("dropout") == std::string::npos) plain.push_back(s);
    EfficiencyProfile q = default_profile(d);
    q.attention.dropout_forward = q.attention.dropout_backward = 0;
    q.attention.dropout_simt_forward = q.attention.dropout_simt_backward = 0;
    REQUIRE(calibration::fit_attention(plain, d, q).size() == 4);
    CHECK(q.attention.dropout_forward == 0);
    Kernel k = *calibration::attention_kernel(samples.front());
    const double without = Roofline(d, q, MathClass::bf16_tensor).time(k).total_s;
    k.dropout = true;
    CHECK(Roofline(d, q, MathClass::bf16_tensor).time(k).total_s == doctest::Approx(without));
    CHECK(Roofline(d, p, MathClass::bf16_tensor).time(k).total_s > without);
    // The eager runtime marks training attention with dropout (BERT's and GPT-2's 0.1), not inference.
    for (Mode mode : {Mode::train, Mode::infer})
        for (const Kernel& x : lower(models::build("bert-squad"), 2, {Precision::amp_bf16, mode, Optimizer::adam}, Runtime::eager).kernels)
            if (x.kind == KernelClass::attention) CHECK(x.dropout == (mode == Mode::train));
}

TEST_CASE("Hugging Face decoders append to their KV cache; eval-mode dropout costs the host a module call") {
    const auto what = [](const char* id, Mode mode) {
        return count_by_what(lower(models::build(id), 4, {Precision::amp_bf16, mode, Optimizer::adam}, Runtime::eager).kernels);
    };
    for (Mode mode : {Mode::infer, Mode::train}) {
        CHECK(what("gpt2", mode).at("kv cache append (keys)") == 12);
        CHECK(what("gpt2", mode).at("kv cache append (values)") == 12);
        CHECK(what("bert-squad", mode).count("kv cache append (keys)") == 0);  // an encoder keeps no cache
    }
    // BERT in inference: 25 dropout modules, each a module call with no kernel, on the host's timeline.
    const Model bert = models::build("bert-squad");
    const LoweredStep s = lower(bert, 1, {Precision::fp32, Mode::infer, Optimizer::sgd}, Runtime::eager);
    int containers = 0;
    for (const Kernel& k : s.kernels) containers += k.containers;
    CHECK(containers == 12 * 6 + 25);  // the blocks' container modules and the dropouts
}

TEST_CASE("autocast's host work: every forward cast is a cast op, every matrix op pays the wrapper; none in FP32") {
    const Model m = models::build("bert-base");
    HostCosts h;
    h.cast_s = 11e-6;
    h.autocast_s = 4e-6;
    for (Precision p : {Precision::fp32, Precision::amp_bf16}) {
        const bool amp = p != Precision::fp32;
        int casts = 0, wrapped = 0, matrix = 0;
        for (const Kernel& k : lower(m, 4, {p, Mode::train, Optimizer::adam}, Runtime::eager).kernels) {
            const bool cast = k.part == StepPart::forward &&
                              (k.role == KernelRole::weight_cast || k.role == KernelRole::activation_cast);
            CHECK((k.call == HostCall::autocast_cast) == cast);
            casts += cast;
            if (k.part == StepPart::forward && is_matrix(k.kind)) ++matrix, wrapped += k.autocast_op;
            if (cast && k.host == HostOp::internal) CHECK(host_cost(k, h) == doctest::Approx(h.cast_s + h.launch_s + k.views * h.view_s + k.containers * h.container_s));
            if (cast && k.host == HostOp::module) CHECK(host_cost(k, h) == doctest::Approx(h.module_s + h.cast_s + h.launch_s + k.views * h.view_s + k.containers * h.container_s));
        }
        CHECK((casts > 0) == amp);
        CHECK(wrapped == (amp ? matrix : 0));
    }
}

TEST_CASE("compiled without CUDA graphs: a call per graph, the wrapper's cost per kernel; with graphs far less host") {
    const Model m = models::build("bert-base");
    const StepConfig graphs{Precision::amp_bf16, Mode::train, Optimizer::adam, true};
    const StepConfig wrapper{Precision::amp_bf16, Mode::train, Optimizer::adam, false};
    const LoweredStep a = lower(m, 8, graphs, Runtime::compiled), b = lower(m, 8, wrapper, Runtime::compiled);
    REQUIRE(a.kernels.size() == b.kernels.size());  // the same kernels, launched differently
    HostCosts h;
    h.compiled_call_s = 100e-6;
    h.compiled_kernel_s = 10e-6;
    h.compiled_backward_kernel_s = 30e-6;
    double expected = 0;
    int calls = 0;
    for (const Kernel& k : b.kernels) {
        if (k.part == StepPart::optimizer) {
            CHECK(k.call == HostCall::generic);
            continue;
        }
        CHECK(k.call == HostCall::compiled);
        calls += k.host == HostOp::module;
        expected += (k.host == HostOp::module ? h.compiled_call_s : 0) + h.launch_s +
                    (k.part == StepPart::backward ? h.compiled_backward_kernel_s : h.compiled_kernel_s);
    }
    CHECK(calls == 2);  // the forward graph and the backward graph
    // With CUDA graphs torch.compile's call into each graph (guards, cudagraph trees) costs compiled_graph_call_s;
    // an inference engine's graph launch (int8) the raw graph_s.
    h.compiled_graph_call_s = 90e-6;
    h.graph_s = 12e-6;
    int graph_calls = 0;
    for (const Kernel& k : a.kernels)
        if (k.host == HostOp::graph) {
            ++graph_calls;
            CHECK(k.call == HostCall::compiled);
            CHECK(host_cost(k, h) == doctest::Approx(90e-6));
        }
    CHECK(graph_calls == 2);
    const LoweredStep engine = lower(models::build("resnet50"), 8, {Precision::int8, Mode::infer, Optimizer::sgd, true}, Runtime::compiled);
    const auto first = std::find_if(engine.kernels.begin(), engine.kernels.end(), [](const Kernel& k) { return k.host == HostOp::graph; });
    REQUIRE(first != engine.kernels.end());
    CHECK(first->call == HostCall::generic);
    CHECK(host_cost(*first, h) == doctest::Approx(12e-6));
    double got = 0;
    for (const Kernel& k : b.kernels)
        if (k.part != StepPart::optimizer) got += host_cost(k, h);
    CHECK(got == doctest::Approx(expected));
    // Through the predictor: the request's flag reaches the lowering; without graphs the host costs more.
    PredictRequest q;
    q.batch = 8;
    q.precision = Precision::amp_bf16;
    q.optimizer = Optimizer::adam;
    q.runtime = Runtime::compiled;
    const Device& d = find_device("h200");
    const Prediction with = Predictor(m)(d, default_profile(d), q);
    q.cuda_graphs = false;
    const Prediction without = Predictor(m)(d, default_profile(d), q);
    CHECK(!without.cuda_graphs);
    CHECK(without.kernel_count == with.kernel_count);
    CHECK(without.host_s > 5 * with.host_s);
    CHECK(without.step_time.value() >= with.step_time.value());
}

TEST_CASE("GradScaler's host costs: fitted from the scaler pairs, charged before the unscale; the optimizer keeps its own") {
    HostCosts h;
    const double per_tensor = 1.5e-6, fixed = 100e-6;
    const double charged = 2 * (h.optimizer_s + h.launch_s) + h.sync_s;  // what the timeline charges already
    std::vector<HostSample> s;
    for (const char* kind : {"sgd", "adamw"})
        for (int n : {16, 64, 256})
            s.push_back({std::string("scaler: ") + kind + ", " + std::to_string(n) + " tensors of 256",
                         charged + fixed + n * per_tensor, 0});
    s.push_back({"scaler: sgd, many tensors of 256", 1.0, 0});  // no count: not a pair
    CHECK(calibration::fit_scaler_host(s, h) == 2);
    CHECK(h.scaler_per_tensor_s == doctest::Approx(per_tensor));
    CHECK(h.scaler_s == doctest::Approx(fixed));
    HostCosts one;  // one tensor count cannot separate the fixed part from the per-tensor one
    CHECK(calibration::fit_scaler_host({s[0], s[3]}, one) == 0);
    CHECK(one.scaler_s == HostCosts{}.scaler_s);

    // Lowering: under amp-fp16 the unscale carries the scaler's loop and fixed cost; the optimizer's first op, after
    // the found_inf synchronisation, carries the optimizer's own loop (AdamW's bookkeeping).
    const Model m = models::build("bert-swag");
    for (const Optimizer opt : {Optimizer::sgd, Optimizer::adam}) {
        const std::vector<Kernel> ks = lower(m, 2, {Precision::amp_fp16, Mode::train, opt, false}, Runtime::eager).kernels;
        const auto unscale = std::find_if(ks.begin(), ks.end(), [](const Kernel& k) { return k.scaler_bookkeeping; });
        REQUIRE(unscale != ks.end());
        CHECK(unscale->what == "unscale gradients");
        CHECK(unscale->host_tensors > 100);
        CHECK(host_cost(*unscale, h) ==
              doctest::Approx(h.optimizer_s + h.launch_s + h.scaler_s + unscale->host_tensors * h.scaler_per_tensor_s));
        const auto synced = std::find_if(ks.begin(), ks.end(), [](const Kernel& k) { return k.sync_before; });
        REQUIRE(synced != ks.end());
        CHECK(synced > unscale);
        CHECK(synced->host_tensors == unscale->host_tensors);
        CHECK((synced->adam_op == 1) == (opt == Optimizer::adam));
        CHECK(!synced->scaler_bookkeeping);
        // Without the scaler (amp-bf16) the optimizer's walks are the only loops over the parameters: SGD's one,
        // AdamW's share before each of its eight operations.
        const std::vector<Kernel> bf = lower(m, 2, {Precision::amp_bf16, Mode::train, opt, false}, Runtime::eager).kernels;
        CHECK(std::count_if(bf.begin(), bf.end(), [](const Kernel& k) { return k.host_tensors > 0; }) ==
              (opt == Optimizer::adam ? 8 : 1));
        CHECK(std::none_of(bf.begin(), bf.end(), [](const Kernel& k) { return k.scaler_bookkeeping || k.sync_before; }));
    }
}

TEST_CASE("AdamW's per-tensor Python: adam_op_shares of it before each of its eight operations") {
    const Model m = models::build("bert-swag");
    const std::vector<Kernel> ks = lower(m, 2, {Precision::amp_bf16, Mode::train, Optimizer::adam, false}, Runtime::eager).kernels;
    std::vector<const Kernel*> walks;
    for (const Kernel& k : ks)
        if (k.host_tensors > 0) walks.push_back(&k);
    REQUIRE(walks.size() == 8);
    const std::array<std::string_view, 8> order{"weight decay", "first moment", "second moment scale", "second moment add",
                                                "sqrt", "bias correction", "epsilon", "parameter update"};
    for (std::size_t i = 0; i < walks.size(); ++i) {
        CHECK(walks[i]->what == order[i]);
        CHECK(walks[i]->adam_op == i + 1);
        CHECK(walks[i]->host_tensors == walks[0]->host_tensors);
    }
    HostCosts h;
    const double tensors = walks[0]->host_tensors;
    for (std::size_t i = 0; i < walks.size(); ++i)
        CHECK(host_cost(*walks[i], h) ==
              doctest::Approx(h.optimizer_s + h.launch_s + h.adam_op_shares[i] * tensors * h.adam_per_tensor_s));
    // The step's host time is the same however the shares fall (only where the Python runs moves); all of it
    // before the first operation (the model before the split) delays the moment kernels.
    const Device& d = find_device("h200");
    PredictRequest q;
    q.batch = 8;
    q.precision = Precision::amp_bf16;
    q.optimizer = Optimizer::adam;
    q.runtime = Runtime::eager;
    EfficiencyProfile first = default_profile(d), measured = first;
    first.host.adam_op_shares = {1, 0, 0, 0, 0, 0, 0, 0};
    const Prediction a = Predictor(m)(d, first, q), b = Predictor(m)(d, measured, q);
    CHECK(a.host_s == doctest::Approx(b.host_s).epsilon(1e-9));
    CHECK(b.step_time.value() <= a.step_time.value() * (1 + 1e-9));
    CHECK(std::accumulate(h.adam_op_shares.begin(), h.adam_op_shares.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-6));

    // The fit: each operation's per-tensor slope over their sum, through the tensor counts.
    const std::array<double, 8> per_tensor{4e-6, 0.3e-6, 0.2e-6, 0.4e-6, 3e-6, 0.4e-6, 0.2e-6, 1.5e-6};
    const double sum = std::accumulate(per_tensor.begin(), per_tensor.end(), 0.0);
    std::vector<HostSample> s;
    for (int n : {16, 64, 256}) {
        const std::string name = "adamw split: " + std::to_string(n) + " tensors";
        double step = 0;
        for (std::size_t k = 0; k < 8; ++k) {
            s.push_back({name + " (op " + std::to_string(k + 1) + ")", 20e-6 + n * per_tensor[k], 0});
            step += s.back().seconds;
        }
        s.push_back({name + " (step)", step, 0});
    }
    HostCosts fitted;
    CHECK(calibration::fit_adam_split_host(s, fitted) == 3);
    for (std::size_t k = 0; k < 8; ++k) CHECK(fitted.adam_op_shares[k] == doctest::Approx(per_tensor[k] / sum));
    HostCosts one;  // one tensor count: no slopes, the prior stays
    CHECK(calibration::fit_adam_split_host(std::vector<HostSample>(s.begin(), s.begin() + 9), one) == 0);
    CHECK(one.adam_op_shares == HostCosts{}.adam_op_shares);
}

TEST_CASE("host fits: autocast's cast and wrapper from the two pairs, torch.compile's costs from two chain lengths") {
    HostCosts h;
    const double launch = h.launch_s, region = 7e-6, cast = 12e-6, wrapper = 3e-6;
    std::vector<HostSample> s;
    for (const char* mode : {" (no_grad)", " (grad)"}) {
        const std::string m = mode;
        s.push_back({"autocast region (enter, exit)" + m, region, 0});
        s.push_back({"conv fp32" + m, 20e-6, 1});
        s.push_back({"conv under autocast (weight cast)" + m, 20e-6 + region + wrapper + cast, 2});
        s.push_back({"linear fp32" + m, 18e-6, 1});
        s.push_back({"linear under autocast (input, weight, bias casts)" + m, 18e-6 + region + wrapper + 3 * cast, 4});
    }
    CHECK(calibration::fit_autocast_host(s, h) == 2);
    CHECK(h.cast_s == doctest::Approx(cast - launch));
    CHECK(h.autocast_s == doctest::Approx(wrapper));
    const double call = 80e-6, fk = 13e-6, bk = 40e-6, bwd_fixed = 700e-6;
    std::vector<HostSample> c;
    for (int n : {8, 32}) {
        const std::string name = "torch.compile default, " + std::to_string(n) + " x (Linear(64,64), GELU): ";
        const double fwd_kernels = 2.0 * n, bwd_kernels = 3.0 * n + 2;
        c.push_back({name + "inference (no_grad)", call + fwd_kernels * fk, fwd_kernels});
        c.push_back({name + "forward + backward", call + fwd_kernels * fk + bwd_fixed + bwd_kernels * bk, fwd_kernels + bwd_kernels});
    }
    CHECK(calibration::fit_compiled_host(c, h) == 3);
    CHECK(h.compiled_call_s == doctest::Approx(call));
    CHECK(h.compiled_kernel_s == doctest::Approx(fk - launch));
    CHECK(h.compiled_backward_kernel_s == doctest::Approx(bk - launch));
    // One chain length cannot separate the call from the kernels: the priors stay.
    HostCosts prior;
    CHECK(calibration::fit_compiled_host({c[0], c[1]}, prior) == 0);
    CHECK(prior.compiled_kernel_s == HostCosts{}.compiled_kernel_s);
    // A second report's chains pool into the same lines (each forward + backward pairs with its own inference).
    std::vector<HostSample> two = c;
    for (int n : {8, 32}) {
        const std::string name = "torch.compile default, " + std::to_string(n) + " x (Linear(64,64), GELU): ";
        const double fwd_kernels = 2.0 * n, bwd_kernels = 3.0 * n + 2;
        two.push_back({name + "inference (no_grad)", 2 * call + fwd_kernels * fk, fwd_kernels});
        two.push_back({name + "forward + backward", 2 * call + fwd_kernels * fk + bwd_fixed + bwd_kernels * bk, fwd_kernels + bwd_kernels});
    }
    HostCosts pooled;
    CHECK(calibration::fit_compiled_host(two, pooled) == 3);
    CHECK(pooled.compiled_call_s == doctest::Approx(1.5 * call).epsilon(0.02));
    CHECK(pooled.compiled_kernel_s == doctest::Approx(fk - launch).epsilon(0.02));
    CHECK(pooled.compiled_backward_kernel_s == doctest::Approx(bk - launch));
    // With CUDA graphs (reduce-overhead): the graph's call and its share per kernel, a line over the chains.
    const double graph_call = 95e-6, node = 0.2e-6;
    std::vector<HostSample> g;
    for (int n : {8, 32}) {
        const double kernels = 2.0 * n + 1;  // + the copy of the input into the graph's static buffer
        g.push_back({"torch.compile reduce-overhead, " + std::to_string(n) + " x (Linear(64,64), GELU): inference (no_grad)",
                     graph_call + kernels * node, kernels});
    }
    HostCosts graphs;
    CHECK(calibration::fit_compiled_host(g, graphs) == 1);  // graph_node_s is counted by fit_host
    CHECK(graphs.compiled_graph_call_s == doctest::Approx(graph_call));
    CHECK(graphs.graph_node_s == doctest::Approx(node));
    CHECK(graphs.compiled_call_s == HostCosts{}.compiled_call_s);
    CHECK(graphs.graph_s == HostCosts{}.graph_s);  // an inference engine's own graph launch: not measured here
}

TEST_CASE("a transformer block's own Python: charged once per block on its attention kernel, by mode") {
    const Model m = models::bert_base(128);
    HostCosts h;
    h.block_python_s = 100e-6;
    h.block_autocast_s = 30e-6;
    h.block_autograd_s = 7e-6;
    struct Case {
        Precision precision;
        Mode mode;
        Runtime runtime;
        std::uint8_t glue;
        double charged;
    };
    for (const Case c : {Case{Precision::fp32, Mode::infer, Runtime::eager, block_glue::python, 100e-6},
                         Case{Precision::amp_bf16, Mode::infer, Runtime::eager,
                              block_glue::python | block_glue::autocast, 130e-6},
                         Case{Precision::amp_bf16, Mode::train, Runtime::eager,
                              block_glue::python | block_glue::autocast | block_glue::autograd, 137e-6},
                         Case{Precision::fp32, Mode::train, Runtime::eager, block_glue::python | block_glue::autograd, 107e-6}}) {
        CAPTURE(to_string(c.precision));
        const LoweredStep s = lower(m, 8, {c.precision, c.mode, Optimizer::adam}, c.runtime);
        int blocks = 0;
        for (const Kernel& k : s.kernels) {
            if (k.block_glue == 0) continue;
            ++blocks;
            CHECK(k.kind == KernelClass::attention);
            CHECK(k.part == StepPart::forward);
            CHECK(k.block_glue == c.glue);
            Kernel without = k;
            without.block_glue = 0;
            CHECK(host_cost(k, h) - host_cost(without, h) == doctest::Approx(c.charged));
        }
        CHECK(blocks == 12);  // BERT-base's twelve layers
    }
    // A compiled runtime's wrapper (or CUDA graph) runs no Python of the model's blocks; the eager step's host
    // time grows by the twelve blocks' charge.
    const Device& d = find_device("h200");
    EfficiencyProfile with = default_profile(d), without = with;
    without.host.block_python_s = without.host.block_autocast_s = without.host.block_autograd_s = 0;
    with.host.block_python_s = 100e-6;
    with.host.block_autocast_s = 30e-6;
    with.host.block_autograd_s = 7e-6;
    for (const bool graphs : {true, false}) {
        PredictRequest r;
        r.batch = 8;
        r.precision = Precision::amp_bf16;
        r.optimizer = Optimizer::adam;
        r.runtime = Runtime::compiled;
        r.cuda_graphs = graphs;
        r.estimate_memory = false;
        CHECK(predict(m, d, with, r).host_s == predict(m, d, without, r).host_s);
        r.runtime = Runtime::eager;
        CHECK(predict(m, d, with, r).host_s - predict(m, d, without, r).host_s == doctest::Approx(12 * 137e-6));
    }
}

TEST_CASE("the GPU's gap between back-to-back kernels: idle to a profiler, the step time unchanged") {
    const Model m = models::resnet50();
    const Device& d = find_device("h200");
    PredictRequest r;
    r.batch = 64;
    r.precision = Precision::amp_bf16;
    r.runtime = Runtime::eager;
    r.estimate_memory = false;
    EfficiencyProfile p = default_profile(d);
    p.kernel_gap_s = 0;
    const Prediction no_gap = predict(m, d, p, r);
    p.kernel_gap_s = 1e-6;
    const Prediction gap = predict(m, d, p, r);
    CHECK(gap.step_time.value() == no_gap.step_time.value());
    CHECK(gap.host_s == no_gap.host_s);
    CHECK(no_gap.gpu_gap_s == 0);
    CHECK(gap.gpu_gap_s == doctest::Approx(1e-6 * static_cast<double>(gap.kernel_count)).epsilon(1e-9));
    CHECK(gap.gpu_busy_s == doctest::Approx(no_gap.gpu_busy_s - gap.gpu_gap_s).epsilon(1e-12));
    CHECK(gap.gpu_idle_s == doctest::Approx(no_gap.gpu_idle_s + gap.gpu_gap_s).epsilon(1e-12));
    CHECK(gap.gpu_busy_s + gap.gpu_idle_s == doctest::Approx(gap.step_time.value()).epsilon(1e-12));
    CHECK(gap.bound == no_gap.bound);  // the gaps are not the GPU waiting for the host
    // The profile file carries it, and refuses a gap that is not a time a GPU takes.
    io::json j = io::to_json(p);
    j["kernel_gap_s"] = 2.5e-6;
    CHECK(io::profile_from_json(j, d, "p.json").kernel_gap_s == 2.5e-6);
    j["kernel_gap_s"] = -1;
    CHECK_THROWS_WITH_AS(io::profile_from_json(j, d, "p.json"), doctest::Contains("kernel_gap_s must be in [0, 1e-4) seconds"), Error);
    j["kernel_gap_s"] = 1e-6;
    j["graph_kernel_gap_s"] = 0.3e-6;
    CHECK(io::profile_from_json(j, d, "p.json").graph_kernel_gap_s == 0.3e-6);
    j["graph_kernel_gap_s"] = -1e-6;
    CHECK_THROWS_WITH_AS(io::profile_from_json(j, d, "p.json"), doctest::Contains("graph_kernel_gap_s must be in [0, 1e-4) seconds"), Error);

    // In a replayed CUDA graph the kernels run graph_kernel_gap_s apart: each is shorter by the difference from
    // the stream's gap, which the profiler's idle time shows at the graph's gap.
    PredictRequest c = r;
    c.runtime = Runtime::compiled;
    c.mode = Mode::infer;  // every kernel in the graph (a training step's optimizer runs outside it)
    c.batch = 1;
    p.kernel_gap_s = 1e-6;
    p.graph_kernel_gap_s = 1e-6;
    const Prediction stream_like = predict(m, d, p, c);
    p.graph_kernel_gap_s = 0.25e-6;
    const Prediction graph = predict(m, d, p, c);
    const double n = static_cast<double>(graph.kernel_count);
    CHECK(graph.kernel_count == stream_like.kernel_count);
    CHECK(graph.gpu_gap_s == doctest::Approx(0.25e-6 * n).epsilon(1e-9));
    CHECK(graph.gpu_busy_s == doctest::Approx(stream_like.gpu_busy_s).epsilon(1e-9));  // the kernels' own time
    CHECK(graph.step_time.value() == doctest::Approx(stream_like.step_time.value() - 0.75e-6 * n).epsilon(1e-6));
    c.cuda_graphs = false;  // without graphs the stream's gap
    CHECK(predict(m, d, p, c).gpu_gap_s == doctest::Approx(1e-6 * n).epsilon(1e-9));
}

TEST_CASE("the host's speed: each host cost moves by its class's sensitivity; the profile file carries them") {
    HostCosts h;
    CHECK(at_host_speed(h, 1) == h);
    const HostCosts slow = at_host_speed(h, 2);
    for (const HostCostField& f : host_cost_fields) {
        CAPTURE(f.name);
        const double k = h.speed_sensitivity[static_cast<std::size_t>(f.speed)];
        CHECK(slow.*f.member == doctest::Approx(h.*f.member * (1 + k)));
    }
    CHECK(slow.view_s == doctest::Approx(2 * h.view_s));            // the probe itself: sensitivity 1
    CHECK(slow.backward_s < slow.module_s / h.module_s * h.backward_s);  // the engine's C++ slows less than Python
    CHECK(at_host_speed(h, 0.5).module_s < h.module_s);
    for (const double bad : {0.0, 0.2, 9.0, std::nan(""), std::numeric_limits<double>::infinity()})
        CHECK_THROWS_WITH_AS(at_host_speed(h, bad), doctest::Contains("host speed must be a number in [0.25, 8]"), Error);
    // A host-bound step slows with the host, by less than the host's factor (not every cost is Python).
    const Device& d = find_device("h200");
    PredictRequest r;
    r.batch = 1;
    r.mode = Mode::infer;
    r.runtime = Runtime::eager;
    r.estimate_memory = false;
    EfficiencyProfile p = default_profile(d);
    const double fast = predict(models::bert_squad(128), d, p, r).step_time.value();
    p.host = at_host_speed(p.host, 2);
    const double slow_step = predict(models::bert_squad(128), d, p, r).step_time.value();
    CHECK(slow_step / fast > 1.3);
    CHECK(slow_step / fast < 2.0);
    // The sensitivities round-trip through a profile file; out of [0, 1] or an unknown class is an error.
    io::json j = io::to_json(default_profile(d));
    j["host"]["speed_sensitivity"]["cpp"] = 0.5;
    CHECK(io::profile_from_json(j, d, "p.json").host.speed_sensitivity[1] == 0.5);
    j["host"]["speed_sensitivity"]["cpp"] = 1.5;
    CHECK_THROWS_WITH_AS(io::profile_from_json(j, d, "p.json"), doctest::Contains("host.speed_sensitivity.cpp must be in [0, 1]"), Error);
    j["host"]["speed_sensitivity"].erase("cpp");
    j["host"]["speed_sensitivity"]["gpu"] = 0.5;
    CHECK_THROWS_WITH_AS(io::profile_from_json(j, d, "p.json"), doctest::Contains("gpu"), Error);
}

TEST_CASE("an inference engine at a float precision folds batch norm and converts its weights offline") {
    // TensorRT-like FP16/FP32 engines (PredictRequest::engine): the chain after each convolution goes into its
    // epilogue and no weight is cast per forward, as an int8 engine's; torch.compile (engine off) keeps a generated
    // kernel after each convolution and autocast's weight casts.
    const Model m = models::build("resnet50");
    const auto count = [&](Precision p, bool engine) {
        const LoweredStep s = lower(m, 8, {p, Mode::infer, Optimizer::sgd, true, engine}, Runtime::compiled);
        std::size_t convs = 0, casts = 0;
        for (const Kernel& k : s.kernels) {
            convs += k.kind == KernelClass::conv;
            casts += k.role == KernelRole::weight_cast;
        }
        return std::array<std::size_t, 3>{s.kernels.size(), convs, casts};
    };
    const auto compiled = count(Precision::amp_fp16, false), engine = count(Precision::amp_fp16, true);
    const auto int8 = count(Precision::int8, false);  // an int8 inference is always an engine
    CHECK(engine[1] == 53);                           // ResNet-50's convolutions, the same in all three
    CHECK(compiled[1] == engine[1]);
    CHECK(compiled[2] > 0);                           // autocast's weight casts every forward
    CHECK(engine[2] == 0);
    CHECK(engine[0] < compiled[0]);
    CHECK(engine[0] == int8[0]);                      // the same kernels as the int8 engine
    CHECK(count(Precision::fp32, true)[0] == int8[0]);
    // Training is never an engine: the flag changes nothing there.
    const StepConfig train{Precision::amp_fp16, Mode::train, Optimizer::sgd, true, true};
    const StepConfig train_off{Precision::amp_fp16, Mode::train, Optimizer::sgd, true, false};
    CHECK(lower(m, 8, train, Runtime::compiled).kernels.size() == lower(m, 8, train_off, Runtime::compiled).kernels.size());

    // Through the predictor: an engine is faster than torch.compile on the same GPU, and only the compiled runtime
    // in inference can be one.
    const Device& d = find_device("rtx2080ti");
    const Predictor predict(m);
    PredictRequest r{.batch = 16, .precision = Precision::amp_fp16, .mode = Mode::infer, .runtime = Runtime::compiled};
    const Prediction torch_compile = predict(d, default_profile(d), r);
    r.engine = true;
    const Prediction trt = predict(d, default_profile(d), r);
    CHECK(trt.engine);
    CHECK_FALSE(torch_compile.engine);
    CHECK(trt.kernel_count < torch_compile.kernel_count);
    CHECK(trt.throughput_samples_per_s > torch_compile.throughput_samples_per_s);
    r.mode = Mode::train;
    CHECK_THROWS_WITH_AS((void)predict(d, default_profile(d), r), doctest::Contains("compiled runtime in inference"),
                         roofplan::invalid_argument);
    r.mode = Mode::infer;
    r.runtime = Runtime::eager;
    CHECK_THROWS_WITH_AS((void)predict(d, default_profile(d), r), doctest::Contains("runtime eager"),
                         roofplan::invalid_argument);
}
