// Memory as the framework allocates it (memory/): the caching allocator's rules, the walk's rules checked against
// hand computations, properties over the zoo, max_batch, the error paths.
#include <roofplan/device/catalog.hpp>
#include <roofplan/memory/memory.hpp>
#include <roofplan/models/zoo.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>

using namespace roofplan;
using namespace roofplan::memory;

namespace {

constexpr std::int64_t MiB = std::int64_t{1} << 20;

DeviceMemory h200() { return DeviceMemory::of(find_device("h200")); }

MemoryRequest request(std::int64_t batch, Precision p, Mode mode = Mode::train, Optimizer o = Optimizer::sgd) {
    MemoryRequest r;
    r.batch = batch;
    r.precision = p;
    r.mode = mode;
    r.optimizer = o;
    return r;
}

/// Live bytes per category (exact, no rounding) at the first backward event of the steady step: what the
/// forward and the loss left alive.
std::array<std::int64_t, category_count> after_forward(const Tape& t, std::int64_t batch) {
    std::array<std::int64_t, category_count> live{};
    const auto play = [&](const std::vector<Event>& events, bool stop) {
        for (const Event& e : events) {
            if (stop && e.phase == StepPhase::backward) return;
            if (e.kind == Event::Kind::empty_cache) continue;
            const auto c = static_cast<std::size_t>(t.tensors[e.tensor].category);
            const std::int64_t b = t.tensors[e.tensor].bytes.at(batch);
            live[c] += e.kind == Event::Kind::allocate ? b : -b;
        }
    };
    play(t.setup, false);
    play(t.first_step, false);
    play(t.steady_step, true);
    return live;
}
std::int64_t saved(const std::array<std::int64_t, category_count>& live) {
    return live[static_cast<std::size_t>(Category::saved_activations)];
}

Model one_linear_model() {
    Model m("one-linear", "fc 1024 -> 512", Shape{1024});
    (void)m.add("fc", Linear{{.in_features = 1024, .out_features = 512}}, false);
    return m;
}
Model conv_bn_relu() {
    Model m("cbr", "conv 3x3 -> batch norm -> relu", Shape{3, 32, 32});
    (void)m.add("conv", Conv2D{{.in_channels = 3, .out_channels = 16, .in_height = 32, .in_width = 32, .kernel = 3,
                                .padding = 1, .bias = false}},
                false);
    (void)m.add("bn", BatchNorm2d{{.channels = 16, .height = 32, .width = 32}});
    (void)m.add("relu", Activation{{.kind = ActivationKind::relu, .shape = Shape{16, 32, 32}}});
    return m;
}
Model attention_block() {
    Model m("attn", "one attention layer", Shape{128, 256});
    (void)m.add("attention", MultiHeadAttention{{.model_dim = 256, .heads = 4, .q_len = 128}});
    return m;
}

}  // namespace

TEST_CASE("the caching allocator rounds and pools as c10/cuda/CUDACachingAllocator.cpp does") {
    CHECK(round_size(1) == 512);
    CHECK(round_size(512) == 512);
    CHECK(round_size(513) == 1024);
    CHECK(small_pool(MiB));
    CHECK_FALSE(small_pool(MiB + 512));
    CHECK(segment_size(512) == 2 * MiB);         // small requests share 2 MiB segments
    CHECK(segment_size(MiB + 512) == 20 * MiB);  // 1-10 MiB requests get a 20 MiB buffer
    CHECK(segment_size(10 * MiB - 512) == 20 * MiB);
    CHECK(segment_size(10 * MiB) == 10 * MiB);  // larger ones are rounded to 2 MiB
    CHECK(segment_size(10 * MiB + 1) == 12 * MiB);
    CHECK(splits(2 * MiB, 512));                 // small pool: a remainder of 512 B or more is split off
    CHECK_FALSE(splits(20 * MiB, 19 * MiB));     // large pool: only a remainder over 1 MiB
    CHECK(splits(20 * MiB, 19 * MiB - 512));
}

TEST_CASE("the caching allocator: segments are cached, split, merged, emptied, and run out") {
    CachingAllocator a;
    const auto x = a.allocate(3 * MiB);
    const auto y = a.allocate(3 * MiB);
    CHECK(a.reserved() == 20 * MiB);  // one 20 MiB buffer holds both
    CHECK(a.allocated() == 6 * MiB);
    a.free(x);
    a.free(y);
    CHECK(a.allocated() == 0);
    CHECK(a.reserved() == 20 * MiB);  // cached, not returned
    const auto whole = a.allocate(19 * MiB + 512);  // the remainder (~1 MiB) is not split off
    CHECK(a.block_bytes(whole) == 20 * MiB);
    CHECK(a.allocated() == 20 * MiB);
    a.free(whole);
    a.empty_cache();
    CHECK(a.reserved() == 0);

    // Best fit: of free blocks of 4 and 6 MiB (in one 20 MiB segment), a 5 MiB request takes the 6 MiB one.
    const auto b4 = a.allocate(4 * MiB);
    const auto keep = a.allocate(MiB + 512);
    const auto b6 = a.allocate(6 * MiB);
    const auto tail = a.allocate(8 * MiB);  // fills the segment
    CHECK(a.reserved() == 20 * MiB);
    a.free(b4);
    a.free(b6);
    const auto five = a.allocate(5 * MiB);
    CHECK(a.reserved() == 20 * MiB);
    CHECK(a.block_bytes(five) == 6 * MiB);  // the 1 MiB left is not split off in the large pool
    a.free(five);
    a.free(keep);
    a.free(tail);

    // With a limit, a failed cudaMalloc frees the cached segments and retries; then it runs out.
    CachingAllocator small(30 * MiB);
    const auto big = small.allocate(25 * MiB);  // a 26 MiB segment
    small.free(big);
    const auto bigger = small.allocate(28 * MiB);  // 26 + 28 > 30: the cached 26 MiB goes back first
    CHECK(bigger != CachingAllocator::out_of_memory);
    CHECK(small.reserved() == 28 * MiB);
    CHECK(small.allocate(4 * MiB) == CachingAllocator::out_of_memory);  // a 20 MiB buffer does not fit
}

TEST_CASE("one linear layer in FP32: the peak is the weight gradient's, by hand") {
    const Model m = one_linear_model();
    const MemoryModel memory(m);
    const std::int64_t B = 64, P = 1024 * 512 * 4, bias = 512 * 4, X = B * 1024 * 4, Y = B * 512 * 4;
    const std::int64_t labels = 512;                       // B int64 labels, rounded to one 512-byte block
    const std::int64_t workspaces = 2 * (32 * MiB + MiB);  // cuBLAS + cuBLASLt, forward and autograd threads
    const MemoryEstimate e = memory(request(B, Precision::fp32), h200());
    // Persistent: weights, momentum, the batch, the workspaces (the gradients were freed by zero_grad).
    CHECK(e.allocated_at_start.value() == 2 * (P + bias) + X + labels + workspaces);
    // The peak: the weight and bias gradients made while the loss's gradient (B·512 FP32) is alive.
    CHECK(e.allocated_peak.value() == 3 * (P + bias) + X + labels + workspaces + Y);
    CHECK(e.peak_phase == StepPhase::backward);
    CHECK(e.peak_layer == "fc");
    CHECK(e.gradients.value() == P + bias);
    CHECK(e.optimizer_state.value() == P + bias);
    CHECK(e.transient_peak.value() == Y);
    // The components are the allocated peak; reserved adds the allocator's slack; total adds the context.
    CHECK(e.weights + e.gradients + e.optimizer_state + e.autocast_copies + e.saved_activations + e.transient_peak +
              e.inputs + e.workspaces == e.allocated_peak);
    CHECK(e.reserved_peak == e.allocated_peak + e.allocator_slack);
    CHECK(e.total == e.reserved_peak + e.context);
}

TEST_CASE("one linear layer under amp-bf16: the input's autocast copy and the weight's cached copy are kept") {
    const Model m = one_linear_model();
    const MemoryModel memory(m);
    const std::int64_t B = 32;
    const auto live = after_forward(memory.tape(request(B, Precision::amp_bf16), default_workspaces(find_device("h200"))), B);
    // Kept: the BF16 copy of the FP32 input (B·1024·2) and the loss's FP32 log-softmax (B·512·4).
    CHECK(saved(live) == B * 1024 * 2 + B * 512 * 4);
    // The weight's BF16 copy stays (the linear kept it); the bias's went with autocast's cache.
    CHECK(live[static_cast<std::size_t>(Category::autocast_copies)] == 1024 * 512 * 2);
}

TEST_CASE("a convolution, batch norm and in-place ReLU keep what autograd needs, by hand") {
    const Model m = conv_bn_relu();
    const MemoryModel memory(m);
    const WorkspaceFigure ws = default_workspaces(find_device("h200"));
    const std::int64_t B = 8, map = 16 * 32 * 32, stats = 2 * 16 * 4;
    // FP32: the convolution's output (batch norm's input), the statistics, the ReLU's output (batch norm's output,
    // made in place), the loss's log-softmax.  The convolution's input is the batch itself.
    CHECK(saved(after_forward(memory.tape(request(B, Precision::fp32), ws), B)) == 3 * B * map * 4 + stats);
    // amp-bf16: the input's BF16 copy, BF16 maps, FP32 statistics and log-softmax.
    CHECK(saved(after_forward(memory.tape(request(B, Precision::amp_bf16), ws), B)) ==
          B * 3 * 32 * 32 * 2 + 2 * B * map * 2 + stats + B * map * 4);
}

TEST_CASE("attention: the fused kernel keeps Q, K, V, the output and the log-sum-exp; unfused keeps the scores") {
    const Model m = attention_block();
    const MemoryModel memory(m);
    const WorkspaceFigure ws = default_workspaces(find_device("h200"));
    const std::int64_t B = 4, tokens = 128 * 256, scores = 4 * 128 * 128, lse = 4 * 128 * 4;
    MemoryRequest r = request(B, Precision::amp_bf16);
    // Fused: three autocast copies of the FP32 input (one per projection), Q, K, V, the output (which the output
    // projection keeps too: it is already contiguous), the log-sum-exp, the loss's FP32 log-softmax.
    const std::int64_t fused = saved(after_forward(memory.tape(r, ws), B));
    CHECK(fused == B * (3 * tokens * 2 + 3 * tokens * 2 + tokens * 2 + lse + tokens * 4));
    // Unfused: the FP32 softmax, the dropout mask and the dropped BF16 probabilities instead of the
    // log-sum-exp, and a contiguous copy of the heads for the output projection.
    r.attention = AttentionKernel::unfused;
    const std::int64_t unfused = saved(after_forward(memory.tape(r, ws), B));
    CHECK(unfused - fused == B * (scores * (4 + 1 + 2) - lse));
}

TEST_CASE("memory grows with the batch; amp keeps less than fp32; Adam needs more than SGD; inference less") {
    const DeviceMemory device = h200();
    for (const char* id : {"resnet50", "bert-squad", "gpt2", "vgg16", "googlenet"}) {
        CAPTURE(id);
        const Model m = models::build(id);
        const MemoryModel memory(m);
        std::int64_t previous_allocated = 0, previous_reserved = 0;
        for (std::int64_t b : {1, 2, 3, 4, 8, 16}) {
            const MemoryEstimate e = memory(request(b, Precision::amp_bf16), device);
            CHECK(e.allocated_peak.value() >= previous_allocated);
            // Reserved is not monotone in the batch, in the allocator as in the model: a request crossing 10 MiB
            // takes its own segment instead of a 20 MiB one (cuDNN's measured workspaces grow by steps).
            CHECK(static_cast<double>(e.reserved_peak.value()) >= 0.95 * static_cast<double>(previous_reserved));
            previous_allocated = e.allocated_peak.value();
            previous_reserved = e.reserved_peak.value();
        }
        const MemoryEstimate amp = memory(request(8, Precision::amp_bf16), device);
        // what the forward keeps (the peak may fall elsewhere: VGG-16's FP32 peak is features.2's backward
        // workspace under cudnn.benchmark on the H200, where little is still saved)
        const auto kept = [&](Precision p) {
            return saved(after_forward(memory.tape(request(8, p), device.workspaces), 8));
        };
        CHECK(kept(Precision::amp_bf16) < kept(Precision::fp32));
        const MemoryEstimate adam = memory(request(8, Precision::amp_bf16, Mode::train, Optimizer::adam), device);
        CHECK(adam.allocated_peak > amp.allocated_peak);
        // A second moment: 4 bytes a parameter (blocks: each tensor rounded, some unsplit remainders).
        CHECK(static_cast<double>(adam.allocated_at_start.value() - amp.allocated_at_start.value()) ==
              doctest::Approx(4.0 * static_cast<double>(m.params())).epsilon(0.05));
        const MemoryEstimate infer = memory(request(8, Precision::amp_bf16, Mode::infer), device);
        CHECK(infer.allocated_peak < amp.allocated_peak);
        CHECK(infer.gradients.value() == 0);
        CHECK(infer.saved_activations.value() == 0);
    }
}

TEST_CASE("the runtimes: compiled shares casts, ideal has no allocator slack or workspaces, engines store BF16") {
    const Model m = models::build("bert-squad", {.seq = 128});
    const MemoryModel memory(m);
    MemoryRequest r = request(16, Precision::amp_bf16, Mode::train, Optimizer::adam);
    const MemoryEstimate eager = memory(r, h200());
    r.runtime = Runtime::compiled;
    const MemoryEstimate compiled = memory(r, h200());
    CHECK(compiled.saved_activations < eager.saved_activations);  // one cast of each LayerNorm output, not three
    r.runtime = Runtime::ideal;
    const MemoryEstimate ideal = memory(r, h200());
    CHECK(ideal.allocator_slack.value() == 0);
    CHECK(ideal.workspaces.value() == 0);
    r = request(16, Precision::amp_bf16, Mode::infer);
    r.runtime = Runtime::compiled;
    CHECK(memory(r, h200()).weights.value() < memory(request(16, Precision::amp_bf16, Mode::infer), h200()).weights.value());
    r.precision = Precision::int8;
    CHECK(memory(r, h200()).allocated_peak.value() > 0);
}

TEST_CASE("GPT-2's Python GELU (pow in FP32 under autocast) keeps far more than torch's gelu") {
    const Model m = models::build("gpt2", {.seq = 256});
    const MemoryModel memory(m);
    MemoryRequest r = request(4, Precision::amp_bf16, Mode::train, Optimizer::adam);
    const MemoryEstimate hugging_face = memory(r, h200());
    Implementation plain = implementation_of(m);
    CHECK(plain.python_gelu_tanh);
    CHECK(plain.fused_qkv);
    CHECK(plain.pre_norm);
    plain.python_gelu_tanh = false;
    r.implementation = plain;
    CHECK(memory(r, h200()).saved_activations < hugging_face.saved_activations);
    CHECK_FALSE(implementation_of(models::build("bert-base")).pre_norm);
}

TEST_CASE("Hugging Face's causal LMs keep their key/value cache's copies (use_cache defaults to True)") {
    const Model m = models::build("gpt2", {.seq = 256});
    const MemoryModel memory(m);
    const std::int64_t B = 4;
    MemoryRequest r = request(B, Precision::amp_bf16, Mode::train, Optimizer::adam);
    const MemoryEstimate cached = memory(r, h200());
    Implementation impl = implementation_of(m);
    CHECK(impl.kv_cache);
    CHECK_FALSE(implementation_of(models::build("bert-base")).kv_cache);
    impl.kv_cache = false;
    r.implementation = impl;
    const MemoryEstimate plain = memory(r, h200());
    // 12 layers x (keys + values) x 256 tokens x 768 x 2 bytes (BF16) per sample, all saved at the peak (the loss)
    const std::int64_t copies = 12 * 2 * 256 * 768 * 2 * B;
    CHECK(cached.peak_layer == plain.peak_layer);
    CHECK(cached.allocated_peak.value() - plain.allocated_peak.value() == copies);
    CHECK(cached.saved_activations.value() - plain.saved_activations.value() >= copies);
    // Inference: the cache grows layer by layer and is held until the output is dropped.
    MemoryRequest infer = request(B, Precision::amp_bf16, Mode::infer);
    const std::int64_t with_cache = memory(infer, h200()).allocated_peak.value();
    infer.implementation = impl;
    const std::int64_t without = memory(infer, h200()).allocated_peak.value();
    // every layer's copies are live at the LM head; an unsplit block counts whole, so a little more is allocated
    CHECK(with_cache - without >= copies);
    CHECK(with_cache - without <= copies + copies / 4);
    // The compiled runtime frees by liveness and keeps no cache copies in its graph.
    r.runtime = Runtime::compiled;
    const std::int64_t compiled_plain = memory(r, h200()).allocated_peak.value();
    r.implementation.reset();
    CHECK(memory(r, h200()).allocated_peak.value() == compiled_plain);
}

TEST_CASE("the dataflow finds residual branches, downsample paths and summed embeddings") {
    const Model resnet = models::build("resnet50");
    const Dataflow flow = dataflow(resnet, implementation_of(resnet));
    const auto node = [&](std::string_view name) {
        for (std::size_t i = 0; i < resnet.size(); ++i)
            if (resnet.nodes()[i].name.view() == name) return static_cast<std::uint32_t>(i);
        FAIL("no node ", name);
        return std::uint32_t{0};
    };
    // layer1.0's downsample convolution reads the block input (the max pool's output), as conv1 does.
    CHECK(flow.routes[node("layer1.0.downsample.0")].inputs[0] == node("maxpool") + 1);
    CHECK(flow.routes[node("layer1.0.conv1")].inputs[0] == node("maxpool") + 1);
    // Its add sums the downsample path and bn3; layer1.1's add sums bn3 and the block input (relu:3 of 1.0).
    const Route& add0 = flow.routes[node("layer1.0.add")];
    CHECK(add0.count == 2);
    CHECK(add0.inputs[0] == node("layer1.0.downsample.1") + 1);
    CHECK(add0.inputs[1] == node("layer1.0.bn3") + 1);
    const Route& add1 = flow.routes[node("layer1.1.add")];
    CHECK(add1.inputs[1] == node("layer1.0.relu:3") + 1);

    const Model bert = models::build("bert-base");
    const Dataflow b = dataflow(bert, implementation_of(bert));
    const Route& sum = b.routes[3];  // embeddings.add: the three embeddings
    CHECK(sum.count == 3);
    CHECK(sum.inputs[0] == 3);
    CHECK(sum.inputs[1] == 2);
    CHECK(sum.inputs[2] == 1);
}

TEST_CASE("max_batch: the step fits at max_batch and not one sample more; none fitting reports what is missing") {
    for (const char* device : {"h200", "v100-sxm2-16gb", "a100-sxm4-40gb"}) {
        for (const char* id : {"resnet50", "bert-squad"}) {
            CAPTURE(device);
            CAPTURE(id);
            const Model m = models::build(id);
            const MemoryModel memory(m);
            const DeviceMemory d = DeviceMemory::of(find_device(device));
            MemoryRequest r = request(1, Precision::amp_fp16, Mode::train, Optimizer::adam);
            const MaxBatch most = memory.max_batch(r, d);
            REQUIRE(most.batch > 0);
            r.batch = most.batch;
            const MemoryEstimate at = memory(r, d);
            CHECK(at.fits);
            CHECK(at.reserved_peak == most.at.reserved_peak);
            r.batch = most.batch + 1;
            CHECK_FALSE(memory(r, d).fits);
            CHECK(most.evaluations < 64);
        }
    }
    // Llama-2-7B with AdamW does not train on a 16 GB V100 at any batch: what batch 1 lacks.
    const Model llama = models::build("llama2-7b", {.seq = 512});
    const MemoryModel memory(llama);
    const DeviceMemory v100 = DeviceMemory::of(find_device("v100-sxm2-16gb"));
    const MaxBatch none = memory.max_batch(request(1, Precision::amp_fp16, Mode::train, Optimizer::adam), v100);
    CHECK(none.batch == 0);
    CHECK(none.missing.value() == none.at.total.value() - v100.capacity);
    CHECK(none.at.total.value() > 16 * llama.params());  // FP32 weights, gradients and two moments alone
}

TEST_CASE("the context: measured on H200 and H100 with provenance, borrowed elsewhere") {
    const ContextFigure h200_context = default_context(find_device("h200"));
    CHECK(h200_context.measured);
    CHECK(h200_context.source.find("e2e_eager_h200.json") != std::string_view::npos);
    CHECK(h200_context.bytes > 1400 * MiB);
    CHECK(default_context(find_device("h100-sxm")).measured);
    CHECK_FALSE(default_context(find_device("v100")).measured);
    CHECK(default_workspaces(find_device("h100")).cublas_bytes == 32 * MiB);
    CHECK(default_workspaces(find_device("a100")).cublas_bytes == 8 * MiB + 128 * 1024);
}

TEST_CASE("memory errors say what was wrong and what is accepted") {
    const Model m = models::build("resnet18");
    const MemoryModel memory(m);
    CHECK_THROWS_WITH_AS(memory(request(0, Precision::fp32), h200()), doctest::Contains("batch must be a positive integer"),
                         invalid_argument);
    CHECK_THROWS_WITH_AS(memory(request(1, Precision::int8), h200()), doctest::Contains("int8 is inference only"),
                         invalid_argument);
    MemoryRequest int8 = request(1, Precision::int8, Mode::infer);
    CHECK_THROWS_WITH_AS(memory(int8, h200()), doctest::Contains("eager PyTorch has no int8 path"), invalid_argument);
    DeviceMemory negative = h200();
    negative.context.bytes = -1;
    CHECK_THROWS_WITH_AS(memory(request(1, Precision::fp32), negative), doctest::Contains("context memory must be >= 0"),
                         invalid_argument);
    Device no_memory = find_device("h200");
    no_memory.memory_gib = 0;
    CHECK_THROWS_WITH_AS((void)DeviceMemory::of(no_memory), doctest::Contains("has no memory size"), invalid_argument);
    CHECK_THROWS_WITH_AS(memory(request(std::int64_t{1} << 50, Precision::fp32), h200()),
                         doctest::Contains("overflows 64 bits"), invalid_argument);
    MemoryRequest threads = request(1, Precision::fp32);
    threads.blas_threads = -1;
    CHECK_THROWS_WITH_AS(memory(threads, h200()), doctest::Contains("blas_threads must be >= 0"), invalid_argument);
}

TEST_CASE("a measured workspace curve: exact at its batches, linear between, proportional outside") {
    static constexpr std::array<BatchBytes, 3> points{{{8, 0}, {32, 3200}, {128, 0}}};
    const MeasuredCurve c{points.data(), 3};
    CHECK(c.at(8) == 0);
    CHECK(c.at(32) == 3200);
    CHECK(c.at(20) == 1600);   // halfway between 8 and 32
    CHECK(c.at(80) == 1600);   // halfway between 32 and 128
    CHECK(c.at(4) == 0);       // proportional to the first point
    CHECK(c.at(256) == 0);     // proportional to the last point
    CHECK(c.slope() == 0);
    static constexpr std::array<BatchBytes, 2> rising{{{1, 100}, {64, 6400}}};
    const AffineBytes b = measured_bytes({rising.data(), 2});
    CHECK(b.at(128) == 12800);
    CHECK(b.per_sample == 100);  // the bound the overflow check uses
    CHECK_FALSE(b.empty());
}

TEST_CASE("cuDNN's measured convolution workspaces: VGG-16 FP32 inference at batch 32 takes the FFT's 2.3 GiB") {
    // conv_workspace_sm90.hpp (validation/results/2026-11-24-h100-memory): cuDNN's heuristics pick an FFT for
    // features.12 (256->256 at 56x56) at batch 32; the e2e step measured 3154.7 MiB allocated in a fresh process.
    const WorkspaceFigure ws = default_workspaces(find_device("h200"));
    REQUIRE(ws.convolutions != nullptr);
    CHECK(default_workspaces(find_device("v100-sxm2")).convolutions == nullptr);  // measured on sm_90 only
    const ConvWorkspace* fft = ws.convolutions->find(
        {256, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 56, 56, true, ConvMode::fp32});
    REQUIRE(fft != nullptr);
    CHECK(fft->forward_curve().at(32) > 2300 * MiB);
    CHECK(fft->forward_curve().at(8) == 0);
    const Model vgg = models::build("vgg16");
    const MemoryModel memory(vgg);
    const auto e = memory(request(32, Precision::fp32, Mode::infer), h200());
    CHECK(e.allocated_peak.value() > 3000 * MiB);
    CHECK(e.allocated_peak.value() < 3300 * MiB);
    // BF16 channels-last convolutions take little: the same network's amp inference stays far below.
    const auto half = memory(request(32, Precision::amp_bf16, Mode::infer), h200());
    CHECK(half.allocated_peak.value() < e.allocated_peak.value() / 2);
}

TEST_CASE("cudnn.benchmark's engines on the H200: VGG-16's features.10 picks a 1.2 GiB FFT the heuristics do not") {
    // conv_workspace_h200_benchmark.hpp (validation/results/2026-11-24-h200-memory, one operator at a time): with
    // cudnn.benchmark on, the H200 times an FFT fastest for 128->256 at 56x56, batch 32 (1190 MiB); the heuristics
    // take none.  The e2e step's allocator trace shows that segment cached (memory_trace_search_h200.json).
    const WorkspaceFigure h200_ws = default_workspaces(find_device("h200"));
    REQUIRE(h200_ws.benchmarked_convolutions != nullptr);
    CHECK(default_workspaces(find_device("h100-sxm")).benchmarked_convolutions == nullptr);
    const ConvKey key{128, 256, 3, 3, 1, 1, 1, 1, 1, 1, 1, 56, 56, true, ConvMode::fp32};
    REQUIRE(h200_ws.benchmarked_convolutions->find(key) != nullptr);
    CHECK(h200_ws.benchmarked_convolutions->find(key)->forward_curve().at(32) > 1100 * MiB);
    CHECK(h200_ws.convolutions->find(key)->forward_curve().at(32) < MiB);
    const Model vgg = models::build("vgg16");
    const MemoryModel memory(vgg);
    MemoryRequest r = request(32, Precision::fp32, Mode::infer);
    const auto timed = memory(r, h200());
    r.cudnn_benchmark = false;
    const auto heuristic = memory(r, h200());
    // the allocated peak (features.12's 2.3 GiB FFT in both) stays; the extra engine's segment stays cached
    CHECK(timed.allocated_peak.value() == heuristic.allocated_peak.value());
    CHECK(timed.reserved_peak.value() > heuristic.reserved_peak.value() + 1000 * MiB);
    // measured in fresh processes on the H200 (2026-11-24-h200-memory): 5336 MiB reserved, twice
    CHECK(timed.reserved_peak.value() == doctest::Approx(5336.0 * MiB).epsilon(0.05));
}

TEST_CASE("eager Python keeps a module call's arguments until it returns (torchvision's Sequential, BERT's encoder)") {
    // ResNet-50 inference: layer1's input (the max-pool output, 64x56x56 BF16 per sample) is still held by
    // `x = self.layer1(x)` while layer1's last block runs; the compiled runtime frees it after its last reader.
    const Model r50 = models::build("resnet50");
    const MemoryModel memory(r50);
    const std::int64_t B = 256;
    MemoryRequest eager = request(B, Precision::amp_bf16, Mode::infer);
    MemoryRequest compiled = eager;
    compiled.runtime = Runtime::compiled;
    const auto e = memory(eager, h200());
    CHECK(e.peak_layer.starts_with("layer1."));
    // measured in a fresh process on the H200 (2026-11-24-h200-memory): 1554.8 MiB
    CHECK(e.allocated_peak.value() == doctest::Approx(1554.8 * MiB).epsilon(0.03));
    CHECK(memory(compiled, h200()).allocated_peak.value() < e.allocated_peak.value());
    const Model bert = models::build("bert-squad", {.seq = 384});
    const MemoryModel bm(bert);
    const auto b = bm(request(64, Precision::amp_bf16, Mode::infer), h200());
    CHECK(b.peak_layer.starts_with("encoder.layer."));
    CHECK(b.allocated_peak.value() == doctest::Approx(1167.7 * MiB).epsilon(0.05));  // measured, fresh process
}

TEST_CASE("an exact tape's replay index gives the walk's figures, field by field, at every batch and limit") {
    // The ideal runtime's tapes are exact: Replayer::run finds their peaks from ExactIndex's blocks instead of
    // walking every event.  The same tape without its index is walked; the two replays must agree exactly.
    const auto same = [](const Replay& a, const Replay& b) {
        CHECK(a.out_of_memory == b.out_of_memory);
        CHECK(a.allocated_at_start == b.allocated_at_start);
        CHECK(a.allocated_peak == b.allocated_peak);
        CHECK(a.reserved_peak == b.reserved_peak);
        CHECK(a.at_peak == b.at_peak);
        CHECK(a.peak_phase == b.peak_phase);
        CHECK(a.peak_node == b.peak_node);
        CHECK(a.failed_tensor == b.failed_tensor);
    };
    int indexed = 0;
    for (const char* id : {"resnet50", "bert-squad", "gpt2", "alexnet", "gnmt", "googlenet"}) {
        const Model model = models::build(id, {});
        const MemoryModel memory(model);
        for (const Mode mode : {Mode::train, Mode::infer})
            for (const Precision p : {Precision::fp32, Precision::amp_bf16})
                for (const Optimizer o : {Optimizer::sgd, Optimizer::adam}) {
                    if (mode == Mode::infer && o == Optimizer::adam) continue;
                    MemoryRequest r = request(1, p, mode, o);
                    r.runtime = Runtime::ideal;
                    const Tape& tape = memory.tape(r, default_workspaces(find_device("h200")));
                    REQUIRE(tape.exact_index != nullptr);
                    Tape walked = tape;
                    walked.exact_index.reset();
                    Replayer fast, slow;
                    for (const std::int64_t b : {1, 2, 3, 17, 64, 255, 4096}) {
                        const Replay whole = slow.run(walked, b);
                        same(fast.run(tape, b), whole);
                        ++indexed;
                        // Limits around the peak and below it (the walk decides those that run out).
                        for (const std::int64_t limit : {whole.allocated_peak - 1, whole.allocated_peak,
                                                         whole.allocated_peak + 1, whole.allocated_peak / 2})
                            same(fast.run(tape, b, limit), slow.run(walked, b, limit));
                    }
                    CHECK_THROWS_WITH(fast.run(tape, std::int64_t{1} << 62), doctest::Contains("overflow"));
                }
    }
    CHECK(indexed > 100);
    // Only exact tapes are indexed: the eager runtime's goes through the allocator.
    const Model model = models::resnet50();
    MemoryRequest r = request(8, Precision::amp_bf16);
    r.runtime = Runtime::eager;
    CHECK(MemoryModel(model).tape(r, default_workspaces(find_device("h200"))).exact_index == nullptr);
}
