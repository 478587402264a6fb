// Layer descriptors against the paper's formulas, PyTorch's parameter counts and their own invariants.
#include <roofplan/layers/layer.hpp>

#include <doctest/doctest.h>

#include <string>

using namespace roofplan;

namespace {
std::string construction_error(auto&& make) {
    try {
        make();
    } catch (const roofplan::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}
}  // namespace

TEST_CASE("Linear: params = co(ci+1), ops = B(ci+1)co, gamma = B") {
    const Linear fc{{.in_features = 4096, .out_features = 1000}};
    CHECK(fc.params() == 1000 * (4096 + 1));
    CHECK(fc.paper_ops() == (4096 + 1) * 1000);
    for (std::int64_t b : {1, 7, 256}) CHECK(*gamma(fc, b) == doctest::Approx(static_cast<double>(b)));
    CHECK(forward_macs(fc).value() == 4096 * 1000);
    CHECK(forward_flops(fc).value() == 2 * 4096 * 1000 + 1000);  // 2 per MAC + bias adds
    CHECK(fc.output_shape() == Shape{1000});
    // Backward: data and weight gradients each cost the forward MACs.
    CHECK(fc.backward_data(32).macs == fc.forward(32).macs);
    CHECK(fc.backward_weight(32).macs == fc.forward(32).macs);
    CHECK(fc.forward(32).gemm == GemmShape{32, 1000, 4096, 1});
    const Linear no_bias{{.in_features = 10, .out_features = 5, .bias = false}};
    CHECK(no_bias.params() == 50);
    const Linear tied{{.in_features = 768, .out_features = 50257, .bias = false, .rows = 4, .tied = true}};
    CHECK(tied.params() == 0);
    CHECK(forward_macs(tied).value() == 4LL * 768 * 50257);
    CHECK_FALSE(gamma(tied, 1).has_value());
}

TEST_CASE("Linear bytes scale with the precision's element width") {
    const Linear fc{{.in_features = 1024, .out_features = 1024}};
    const Work fp32 = work(fc, Pass::forward, 8, Precision::fp32);
    const Work half = work(fc, Pass::forward, 8, Precision::amp_fp16);
    const Work int8 = work(fc, Pass::forward, 8, Precision::int8);
    CHECK(fp32.weight_bytes_read.value() == 4 * (1024 * 1024 + 1024));
    CHECK(fp32.activation_bytes_read.value() == 4 * 8 * 1024);
    CHECK(fp32.bytes().value() == 2 * half.bytes().value());
    CHECK(half.bytes().value() == 2 * int8.bytes().value());
    CHECK(fp32.flops() == half.flops());
    // AMP keeps FP32 weight gradients.
    CHECK(work(fc, Pass::backward_weight, 8, Precision::amp_bf16).gradient_bytes_written.value() ==
          4 * fc.params());
}

TEST_CASE("Conv2D: output size, params, ops and gamma = B*Ho*Wo") {
    // AlexNet conv1: 3->64, 11x11, stride 4, pad 2 on 224x224 -> 55x55.
    const Conv2D c{{.in_channels = 3, .out_channels = 64, .in_height = 224, .in_width = 224, .kernel = 11,
                    .stride = 4, .padding = 2}};
    CHECK(c.output_shape() == Shape{64, 55, 55});
    CHECK(c.params() == 64 * (11 * 11 * 3 + 1));
    CHECK(c.paper_ops() == 55 * 55 * 64 * (3 * 121 + 1));
    CHECK(forward_macs(c).value() == 55LL * 55 * 64 * 3 * 121);
    CHECK(*gamma(c, 16) == doctest::Approx(16.0 * 55 * 55));
    // Stride shrinks the output: Ho = floor((H + 2p - d(k-1) - 1)/s) + 1.
    const Conv2D s2{{.in_channels = 8, .out_channels = 8, .in_height = 56, .in_width = 56, .kernel = 3,
                     .stride = 2, .padding = 1}};
    CHECK(s2.output_shape() == Shape{8, 28, 28});
    const Conv2D dilated{{.in_channels = 8, .out_channels = 8, .in_height = 32, .in_width = 32, .kernel = 3,
                          .padding = 0, .dilation = 2}};
    CHECK(dilated.output_shape() == Shape{8, 28, 28});
    const Conv2D rect{{.in_channels = 4, .out_channels = 4, .in_height = 17, .in_width = 17, .kernel = {1, 7},
                       .padding = {0, 3}}};
    CHECK(rect.output_shape() == Shape{4, 17, 17});
    CHECK(rect.params() == 4 * (4 * 7 + 1));
}

TEST_CASE("Conv2D groups: depthwise convolution") {
    const Conv2D dw{{.in_channels = 32, .out_channels = 32, .in_height = 112, .in_width = 112, .kernel = 3,
                     .padding = 1, .groups = 32, .bias = false}};
    CHECK(dw.params() == 32 * 9);  // MobileNet's first depthwise layer
    CHECK(forward_macs(dw).value() == 112LL * 112 * 32 * 9);
    CHECK(dw.forward(2).gemm == GemmShape{2 * 112 * 112, 1, 9, 32});
}

TEST_CASE("Conv2D rejects impossible shapes with clear messages") {
    CHECK(construction_error([] { Conv2D{{.in_channels = 3, .out_channels = 8, .in_height = 5, .in_width = 5, .kernel = 11}}; })
              .find("larger than the padded input") != std::string::npos);
    CHECK(construction_error([] { Conv2D{{.in_channels = 6, .out_channels = 8, .in_height = 5, .in_width = 5, .groups = 4}}; })
              .find("divisible by groups") != std::string::npos);
    CHECK(construction_error([] { Conv2D{{.in_channels = 0, .out_channels = 8, .in_height = 5, .in_width = 5}}; })
              .find("in_channels must be a positive integer, got 0") != std::string::npos);
    CHECK(construction_error([] { Conv2D{{.in_channels = 3, .out_channels = 8, .in_height = 5, .in_width = 5, .stride = 0}}; })
              .find("stride") != std::string::npos);
    CHECK(construction_error([] {
              Conv2D{{.in_channels = 1LL << 40, .out_channels = 1LL << 40, .in_height = 8, .in_width = 8}};
          }).find("overflows 64 bits") != std::string::npos);
    const Conv2D ok{{.in_channels = 3, .out_channels = 8, .in_height = 5, .in_width = 5}};
    CHECK(construction_error([&] { (void)ok.forward(0); }).find("batch must be a positive integer") != std::string::npos);
    CHECK(construction_error([&] { (void)ok.forward(1LL << 62); }).find("overflows") != std::string::npos);
}

TEST_CASE("Attention: projections, quadratic core, GQA and causal masks") {
    const MultiHeadAttention bert{{.model_dim = 768, .heads = 12, .q_len = 384}};
    CHECK(bert.params() == 4 * (768 * 768 + 768));  // Q, K, V, O with biases (Hugging Face BertAttention)
    CHECK(bert.projection_macs() == 4LL * 384 * 768 * 768);
    CHECK(bert.core_macs() == 2LL * 384 * 384 * 768);  // QK^T and PV over all heads
    // Doubling the sequence doubles the projections and quadruples the core.
    const MultiHeadAttention twice{{.model_dim = 768, .heads = 12, .q_len = 768}};
    CHECK(twice.projection_macs() == 2 * bert.projection_macs());
    CHECK(twice.core_macs() == 4 * bert.core_macs());
    // Causal: L(L+1)/2 unmasked pairs.
    const MultiHeadAttention causal{{.model_dim = 64, .heads = 4, .q_len = 10, .causal = true}};
    CHECK(causal.score_pairs() == 55);
    // Grouped-query: K and V shrink with kv_heads (Llama-3-8B: 32 heads, 8 KV heads, head_dim 128).
    const MultiHeadAttention gqa{{.model_dim = 4096, .heads = 32, .kv_heads = 8, .q_len = 16, .bias = false}};
    CHECK(gqa.params() == 2LL * 4096 * 4096 + 2LL * 4096 * 1024);
    // Backward: data gradients redo the projections and twice the core; weight gradients the projections.
    CHECK(bert.backward_data(1).macs.value() == bert.projection_macs() + 2 * bert.core_macs());
    CHECK(bert.backward_weight(1).macs.value() == bert.projection_macs());
    CHECK(construction_error([] { MultiHeadAttention{{.model_dim = 100, .heads = 12, .q_len = 8}}; })
              .find("must divide model_dim") != std::string::npos);
    CHECK(construction_error([] { MultiHeadAttention{{.model_dim = 96, .heads = 12, .kv_heads = 5, .q_len = 8}}; })
              .find("kv_heads (5) must divide heads (12)") != std::string::npos);
}

TEST_CASE("Pooling follows PyTorch's output-size rules") {
    // GoogLeNet maxpool1 (ceil_mode): 112 -> 56, floor would give 55.
    const Pool2D ceil{{.kind = PoolKind::max, .channels = 64, .in_height = 112, .in_width = 112, .kernel = 3,
                       .stride = 2, .ceil_mode = true}};
    CHECK(ceil.output_shape() == Shape{64, 56, 56});
    const Pool2D floor{{.kind = PoolKind::max, .channels = 64, .in_height = 112, .in_width = 112, .kernel = 3,
                        .stride = 2}};
    CHECK(floor.output_shape() == Shape{64, 55, 55});
    // ceil_mode never starts a window in the padding: 5 with k2 s2 p1 -> 3 (not 4).
    const Pool2D edge{{.kind = PoolKind::max, .channels = 1, .in_height = 5, .in_width = 5, .kernel = 2,
                       .stride = 2, .padding = 1, .ceil_mode = true}};
    CHECK(edge.output_shape() == Shape{1, 3, 3});
    const AdaptiveAvgPool2D gap{{.channels = 2048, .in_height = 7, .in_width = 7, .output = 1}};
    CHECK(gap.output_shape() == Shape{2048, 1, 1});
    CHECK(gap.forward(1).vector_flops.value() == 2048 * (49 + 1));
    CHECK(construction_error([] { Pool2D{{.channels = 1, .in_height = 2, .in_width = 2, .kernel = 3}}; })
              .find("larger than the padded input") != std::string::npos);
}

TEST_CASE("LSTM parameter counts match PyTorch and TensorFlow conventions") {
    // torch.nn.LSTM(10, 20, num_layers=2): 4*20*(10+20) + 8*20 + 4*20*(20+20) + 8*20 = 5920.
    const LSTM torch{{.input_size = 10, .hidden_size = 20, .seq_len = 5, .num_layers = 2}};
    CHECK(torch.params() == 5920);
    // Bidirectional doubles every layer; the second layer reads 2h.
    const LSTM bi{{.input_size = 10, .hidden_size = 20, .seq_len = 5, .num_layers = 2, .bidirectional = true}};
    CHECK(bi.params() == 2 * (4 * 20 * (10 + 20) + 160) + 2 * (4 * 20 * (40 + 20) + 160));
    CHECK(bi.output_shape() == Shape{5, 40});
    // TensorFlow LSTMCell (one bias): 4u(i+u) + 4u.
    const LSTM tf{{.input_size = 1024, .hidden_size = 1024, .seq_len = 50, .bias_vectors = 1}};
    CHECK(tf.params() == 4 * 1024 * 2048 + 4 * 1024);
    CHECK(forward_macs(tf).value() == 50LL * 4 * 1024 * 2048);
}

TEST_CASE("Parameter counts of normalisation and embedding layers") {
    CHECK(BatchNorm2d{{.channels = 64, .height = 56, .width = 56}}.params() == 128);
    CHECK(LayerNorm{{.width = 768, .rows = 128}}.params() == 1536);
    CHECK(RMSNorm{{.width = 4096, .rows = 2}}.params() == 4096);
    CHECK(Embedding{{.vocabulary = 30522, .width = 768, .rows = 128}}.params() == 23'440'896);
    CHECK(LocalResponseNorm{{.channels = 96, .height = 55, .width = 55}}.params() == 0);
    CHECK(Activation{{.kind = ActivationKind::gelu, .shape = Shape{128, 3072}}}.forward(2).vector_flops.value() ==
          2 * 128 * 3072 * 8);
}

TEST_CASE("Elementwise layers are memory traffic, not matrix work") {
    const Add add{{.shape = Shape{256, 56, 56}}};
    const Work w = work(add, Pass::forward, 4, Precision::fp32);
    CHECK(w.macs.value() == 0);
    CHECK(w.activation_bytes_read.value() == 4 * 2 * 4 * 256 * 56 * 56);
    CHECK(w.activation_bytes_written.value() == 4 * 4 * 256 * 56 * 56);
    CHECK(w.arithmetic_intensity().value() < 0.1);
    CHECK(Flatten{{.shape = Shape{256, 6, 6}}}.output_shape() == Shape{9216});
    CHECK(construction_error([] { Dropout{{.shape = Shape{4}, .probability = 1.5}}; }).find("[0, 1)") != std::string::npos);
    CHECK(construction_error([] { Add{{.shape = Shape{4}, .inputs = 1}}; }).find("at least 2 inputs") != std::string::npos);
}

TEST_CASE("Every pass's MACs are linear in the batch") {
    const AnyLayer layers[] = {
        Linear{{.in_features = 10, .out_features = 20, .rows = 3}},
        Conv2D{{.in_channels = 3, .out_channels = 8, .in_height = 9, .in_width = 9, .kernel = 3}},
        MultiHeadAttention{{.model_dim = 64, .heads = 4, .q_len = 16, .causal = true}},
        LSTM{{.input_size = 8, .hidden_size = 16, .seq_len = 4}},
    };
    for (const AnyLayer& layer : layers)
        for (Pass pass : {Pass::forward, Pass::backward_data, Pass::backward_weight})
            CHECK(cost(layer, pass, 6).macs.value() == 6 * cost(layer, pass, 1).macs.value());
}

TEST_CASE("MatMul: a causal attention product counts the pairs the mask keeps, as the attention layer does") {
    // GPT-2's heads: 12 heads over 1024 tokens of width 64.  The attention layer counts its score and context
    // products with the same pairs (attention.hpp); here each product alone.
    const std::int64_t pairs = 1024 * 1025 / 2;
    const roofplan::MatMul scores({.count = 12, .m = 1024, .k = 64, .n = 1024, .causal = 1});
    const roofplan::MatMul context({.count = 12, .m = 1024, .k = 1024, .n = 64, .causal = 2});
    CHECK(scores.forward(1).macs.value() == 12 * pairs * 64);
    CHECK(context.forward(1).macs.value() == 12 * pairs * 64);
    CHECK(scores.backward_data(1).macs.value() == 2 * scores.forward(1).macs.value());
    const roofplan::MatMul full({.count = 12, .m = 1024, .k = 64, .n = 1024});
    CHECK(full.forward(1).macs.value() == 12LL * 1024 * 1024 * 64);
    // Keys beyond the queries (a cache): every query sees them all, then the triangle.
    CHECK(roofplan::MatMul({.count = 1, .m = 4, .k = 8, .n = 10, .causal = 1}).forward(1).macs.value() ==
          (4 * 6 + 10) * 8);
    CHECK_THROWS_WITH_AS((void)roofplan::MatMul({.count = 1, .m = 8, .k = 8, .n = 4, .causal = 1}),
                         doctest::Contains("as many keys (4) as queries m (8)"), roofplan::Error);
    CHECK_THROWS_WITH_AS((void)roofplan::MatMul({.count = 1, .m = 8, .k = 8, .n = 8, .causal = 3}),
                         doctest::Contains("causal must be 0"), roofplan::Error);
}
