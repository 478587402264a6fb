// Layer specs ("conv2d cin=64 cout=64 k=3 ...") against hand-computed counts, PyTorch's parameter counts, the zoo's
// own layers, and every error path (what was wrong and what is accepted).
#include <roofplan/io/layer_spec.hpp>
#include <roofplan/models/zoo.hpp>

#include <doctest/doctest.h>

#include <string>
#include <type_traits>
#include <vector>

using namespace roofplan;
using io::parse_layer_spec;

namespace {
std::string error_of(std::string_view spec) {
    try {
        (void)parse_layer_spec(spec);
    } catch (const roofplan::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}
bool contains(const std::string& text, std::string_view part) { return text.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("layer spec: conv2d counts by hand") {
    const AnyLayer l = parse_layer_spec("conv2d cin=64 cout=64 k=3 s=1 p=1 h=56 w=56");
    REQUIRE(std::holds_alternative<Conv2D>(l));
    CHECK(params(l) == 64 * (64 * 9 + 1));                         // 36,928
    CHECK(output_shape(l) == Shape{64, 56, 56});                   // (56 + 2 - 2 - 1)/1 + 1
    CHECK(forward_macs(l).value() == 56LL * 56 * 64 * 64 * 9);     // 115,605,504
    CHECK(forward_flops(l).value() == 2 * 115'605'504LL + 64 * 56 * 56);
    CHECK(paper_ops(l) == 56LL * 56 * 64 * (64 * 9 + 1));
    CHECK(*gamma(l, 32) == doctest::Approx(32.0 * 56 * 56));
    // bytes of the forward pass at fp32: (weights + B·input + B·output)·4
    const Work w = work(l, Pass::forward, 32, Precision::fp32);
    CHECK(w.bytes().value() == (36'928LL + 2 * 32 * 64 * 56 * 56) * 4);

    // ResNet's stem as the Conv2D doc comment states it: 9,408 parameters, 64x112x112.
    const AnyLayer stem = parse_layer_spec("conv2d cin=3 cout=64 k=7 s=2 p=3 h=224 w=224 bias=0");
    CHECK(params(stem) == 9408);
    CHECK(output_shape(stem) == Shape{64, 112, 112});
    // Asymmetric kernel (Inception's 1x7): (17 + 2·0 − 1)/1 + 1 = 17 rows, (17 + 2·3 − 7)/1 + 1 = 17 columns.
    const AnyLayer k17 = parse_layer_spec("conv2d cin=128 cout=192 k=1x7 p=0x3 h=17 w=17");
    CHECK(params(k17) == 192 * (128 * 7 + 1));
    CHECK(output_shape(k17) == Shape{192, 17, 17});
    // Depthwise: groups = channels, 3x3, no bias.
    const AnyLayer dw = parse_layer_spec("conv2d cin=32 cout=32 g=32 k=3 p=1 h=112 w=112 bias=false");
    CHECK(params(dw) == 32 * 9);
    CHECK(forward_macs(dw).value() == 112LL * 112 * 32 * 9);
    // Stride 2 shrinks the output: ⌊(56 + 2 − 3)/2⌋ + 1 = 28.
    CHECK(output_shape(parse_layer_spec("conv2d cin=8 cout=8 k=3 s=2 p=1 h=56 w=56")) == Shape{8, 28, 28});
    // Dilation 2: reach 5, ⌊(32 + 4 − 5)/1⌋ + 1 = 32.
    CHECK(output_shape(parse_layer_spec("conv2d cin=8 cout=8 k=3 p=2 d=2 h=32 w=32")) == Shape{8, 32, 32});
}

TEST_CASE("layer spec: the zoo's layer1.0.conv2 of ResNet-50 is the same layer") {
    const Model m = models::build("resnet50");
    const Node* node = nullptr;
    for (const Node& n : m.nodes())
        if (n.name.view() == "layer1.0.conv2") node = &n;
    REQUIRE(node != nullptr);
    const AnyLayer spec = parse_layer_spec("conv2d cin=64 cout=64 k=3 p=1 h=56 w=56 bias=0");
    CHECK(params(spec) == params(node->layer));
    CHECK(params(spec) == 36'864);  // torchvision: 64·64·3·3, no bias
    for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weight}) {
        const PassCost a = cost(spec, p, 8), b = cost(node->layer, p, 8);
        CHECK(a.macs == b.macs);
        CHECK(a.activation_elements_read == b.activation_elements_read);
        CHECK(a.gemm == b.gemm);
    }
}

TEST_CASE("layer spec: linear, attention, lstm, embedding against PyTorch's parameter counts") {
    CHECK(params(parse_layer_spec("linear in=4096 out=1000")) == 4'097'000);  // AlexNet's classifier
    const AnyLayer rows = parse_layer_spec("linear in=768 out=3072 rows=384");
    CHECK(forward_macs(rows).value() == 384LL * 768 * 3072);
    CHECK(*gamma(rows, 8) == doctest::Approx(8.0 * 384));
    CHECK(params(parse_layer_spec("linear in_features=10 out_features=5 bias=0")) == 50);

    // BERT-base self-attention + output dense: 4·768² weights + 4·768 biases.
    const AnyLayer att = parse_layer_spec("attention d=768 heads=12 seq=384");
    CHECK(params(att) == 4 * 768 * 768 + 4 * 768);
    const auto& mha = std::get<MultiHeadAttention>(att);
    CHECK(mha.config().head_dim == 64);
    CHECK(mha.core_macs() == 2LL * 12 * 384 * 384 * 64);
    CHECK(mha.projection_macs() == 4LL * 384 * 768 * 768);
    CHECK(std::get<MultiHeadAttention>(parse_layer_spec("attention d=64 heads=4 seq=4 causal")).score_pairs() == 10);
    // Grouped-query: 32 heads, 8 kv heads of 128 (Llama-like 4096): q,o 4096², k,v 4096·1024.
    CHECK(params(parse_layer_spec("attention d=4096 heads=32 kv_heads=8 seq=16 bias=0")) ==
          2LL * 4096 * 4096 + 2LL * 4096 * 1024);

    CHECK(params(parse_layer_spec("lstm in=1024 hidden=1024 seq=1")) == 8'396'800);  // torch.nn.LSTM(1024, 1024)
    CHECK(params(parse_layer_spec("lstm in=10 hidden=20 seq=5 layers=2 bidirectional")) ==
          2 * (4 * 20 * (10 + 20) + 8 * 20) + 2 * (4 * 20 * (40 + 20) + 8 * 20));
    CHECK(params(parse_layer_spec("embedding vocab=30522 d=768 rows=128")) == 30522LL * 768);  // BERT word embeddings
}

TEST_CASE("layer spec: pooling, norms, activations") {
    CHECK(output_shape(parse_layer_spec("maxpool2d c=64 h=112 w=112 k=3 s=2 p=1")) == Shape{64, 56, 56});
    CHECK(output_shape(parse_layer_spec("avgpool2d c=16 h=8 w=8 k=2")) == Shape{16, 4, 4});  // stride = kernel
    CHECK(output_shape(parse_layer_spec("adaptive_avgpool2d c=2048 h=7 w=7")) == Shape{2048, 1, 1});
    CHECK(params(parse_layer_spec("batchnorm2d c=64 h=56 w=56")) == 128);
    CHECK(params(parse_layer_spec("layernorm d=768 rows=384")) == 1536);
    CHECK(params(parse_layer_spec("rmsnorm d=4096")) == 4096);
    const AnyLayer relu = parse_layer_spec("ReLU shape=64x56x56");
    CHECK(params(relu) == 0);
    CHECK(output_shape(relu) == Shape{64, 56, 56});
    CHECK(forward_flops(relu).value() == 64 * 56 * 56);
    CHECK(type_label(parse_layer_spec("gelu shape=384x3072")) == "gelu");
    CHECK(output_shape(parse_layer_spec("softmax shape=12x384x384")) == Shape{12, 384, 384});
    CHECK(params(parse_layer_spec("lrn c=96 h=55 w=55")) == 0);
}

TEST_CASE("layer spec: case, aliases, separators") {
    const AnyLayer a = parse_layer_spec("  Conv2D  CIN=64, cout=64 kernel=3 padding=1 height=56 width=56 ");
    const AnyLayer b = parse_layer_spec("conv2d in_channels=64 out_channels=64 k=3 p=1 h=56 w=56");
    CHECK(params(a) == params(b));
    CHECK(output_shape(a) == output_shape(b));
}

TEST_CASE("layer spec: errors say what was wrong and what is accepted") {
    CHECK(contains(error_of(""), "empty layer spec"));
    const std::string kind = error_of("conv3d cin=1");
    CHECK(contains(kind, "unknown layer kind 'conv3d'"));
    CHECK(contains(kind, "did you mean conv2d"));
    CHECK(contains(kind, "accepted: linear, conv2d, attention"));
    const std::string key = error_of("conv2d cin=64 cout=64 kernal=3 h=56 w=56");
    CHECK(contains(key, "unknown key 'kernal'"));
    CHECK(contains(key, "did you mean kernel"));
    CHECK(contains(key, "accepted: cin|in_channels"));
    CHECK(contains(error_of("conv2d cout=64 k=3 h=56 w=56"), "missing cin (input channels)"));
    CHECK(contains(error_of("conv2d cin=1 cout=1 k=3 kernel=3 h=8 w=8"), "'k' is given twice"));
    CHECK(contains(error_of("conv2d cin=1 cout=1 k=3.5 h=8 w=8"), "k='3.5' is not an integer"));
    CHECK(contains(error_of("conv2d cin=1 cout=1 k=3 p=-1 h=8 w=8"), "p=-1 is out of range; accepted: 0 to"));
    CHECK(contains(error_of("conv2d cin=0 cout=1 k=3 h=8 w=8"), "cin=0 is out of range; accepted: 1 to"));
    CHECK(contains(error_of("conv2d cin=1 cout=1 k=3 h=99999999999 w=8"), "out of range"));
    CHECK(contains(error_of("conv2d cin cout=1 k=3 h=8 w=8"), "cin needs a value"));
    CHECK(contains(error_of("conv2d cin=1 cout=1 k= h=8 w=8"), "k= has no value"));
    CHECK(contains(error_of("conv2d cin=1 cout=1 k=3 h=8 w=8 bias=maybe"), "bias='maybe' is not a boolean"));
    // impossible shapes come from the descriptor, quoting the spec
    const std::string big = error_of("conv2d cin=1 cout=1 k=9 h=4 w=4");
    CHECK(contains(big, "larger than the padded input"));
    CHECK(contains(big, "(in spec \"conv2d cin=1 cout=1 k=9 h=4 w=4\")"));
    CHECK(contains(error_of("conv2d cin=6 cout=4 g=4 k=1 h=4 w=4"), "divisible by groups"));
    CHECK(contains(error_of("attention d=10 heads=3 seq=4"), "heads (3) must divide model_dim (10)"));
    CHECK(contains(error_of("relu shape=1x2x3x4x5"), "has 5 dimensions"));
    CHECK(contains(error_of("relu"), "missing shape"));
    CHECK(contains(error_of("linear in=4 out=2 =3"), "no key before '='"));
}

TEST_CASE("layer spec: GRU, ConvTranspose2D, MatMul and the elementwise layers are specs too") {
    // torch.nn.GRU(32, 8, num_layers=2, bidirectional=True): 2·(3h(in+h) + 6h) + 2·(3h(2h+h) + 6h)
    const AnyLayer gru = parse_layer_spec("gru in=32 hidden=8 seq=10 layers=2 bidirectional");
    REQUIRE(std::holds_alternative<GRU>(gru));
    CHECK(params(gru) == 2 * (3 * 8 * (32 + 8) + 6 * 8) + 2 * (3 * 8 * (16 + 8) + 6 * 8));
    CHECK(output_shape(gru) == Shape{10, 16});
    // The ConvTranspose2D doc comment's example: 16·8·16 + 8 parameters, 8x16x16 out.
    const AnyLayer up = parse_layer_spec("conv_transpose2d cin=16 cout=8 k=4 s=2 p=1 h=8 w=8");
    CHECK(params(up) == 2056);
    CHECK(output_shape(up) == Shape{8, 16, 16});
    CHECK(output_shape(parse_layer_spec("conv_transpose2d cin=4 cout=4 k=3 s=2 p=1 op=1 h=5 w=5")) == Shape{4, 10, 10});
    CHECK(forward_macs(parse_layer_spec("matmul count=12 m=128 k=64 n=128")).value() == 12LL * 128 * 64 * 128);
    CHECK(std::get<Dropout>(parse_layer_spec("dropout shape=128x768 p=0.1")).config().probability == 0.1);
    CHECK(forward_flops(parse_layer_spec("add shape=8x8 inputs=3")).value() == 2 * 64);
    CHECK(output_shape(parse_layer_spec("flatten shape=512x7x7")) == Shape{512 * 49});
    CHECK(params(parse_layer_spec("additive_attention queries=50 memory=50 units=1024 width=1024")) == 2049);
    CHECK(params(parse_layer_spec("linear in=768 out=50257 tied")) == 0);
    CHECK(contains(error_of("dropout shape=4 p=1.5"), "p=1.5 is out of range; accepted: a number in [0, 1)"));
    CHECK(contains(error_of("dropout shape=4 p=x"), "p='x' is not a number"));
    CHECK(contains(error_of("gru in=3 hidden=4"), "gru: missing seq (time steps)"));
}

namespace {
/// A spec that gives every field of `layer` from its description (the layer written out as a spec).
template <class L>
std::string spec_of(const L& layer) {
    constexpr auto description = L::describe();
    std::string spec(description.type_of(layer.config()));
    for (const auto& field : description.fields)
        layers::visit_member<description.member_types()>(field.member, [&]<class T>(T L::Config::*member) {
            const T& value = layer.config().*member;
            spec += " " + std::string(field.key) + "=";
            if constexpr (std::same_as<T, std::int64_t>) spec += std::to_string(value);
            else if constexpr (std::same_as<T, Extent2>)
                spec += std::to_string(value.h) + "x" + std::to_string(value.w);
            else if constexpr (std::same_as<T, bool>) spec += value ? "1" : "0";
            else if constexpr (std::same_as<T, double>) spec += std::to_string(value);
            else spec += value.to_string();
        });
    return spec;
}
}  // namespace

TEST_CASE("layer spec: every layer of the zoo, written as a spec from its field table, reads back the same") {
    for (const auto& entry : models::zoo()) {
        const Model m = entry.build();
        for (const Node& node : m.nodes()) {
            const std::string spec = std::visit([](const auto& l) { return spec_of(l); }, node.layer);
            CAPTURE(spec);
            const AnyLayer back = parse_layer_spec(spec);
            CHECK(back.index() == node.layer.index());
            CHECK(type_label(back) == type_label(node.layer));
            for (Pass p : {Pass::forward, Pass::backward_data, Pass::backward_weight})
                CHECK(roofplan::detail::same_cost(cost(back, p, 3), cost(node.layer, p, 3)));
        }
    }
}

TEST_CASE("field tables: one owner per type name, keys unique within a layer, defaults from the Config") {
    const std::vector<std::string_view> types = layer_type_names();
    for (std::size_t i = 0; i < types.size(); ++i)
        for (std::size_t j = i + 1; j < types.size(); ++j) CHECK(types[i] != types[j]);
    for_each_layer_type([]<class L>(std::type_identity<L>) {
        constexpr auto description = L::describe();
        CAPTURE(description.types[0]);
        std::vector<std::string_view> keys;
        for (const auto& field : description.fields) {
            keys.push_back(field.key);
            if (!field.name.empty()) keys.push_back(field.name);
            CHECK(!field.meaning.empty());
        }
        for (std::size_t i = 0; i < keys.size(); ++i)
            for (std::size_t j = i + 1; j < keys.size(); ++j) CHECK(keys[i] != keys[j]);
        for (std::size_t kind = 0; kind < description.types.size(); ++kind)
            CHECK(description.type_of(description.defaults(kind)) == description.types[kind]);
    });
    CHECK(Conv2D::describe().fields[1].file_key() == "out_channels");
    CHECK(Conv2D::describe().fields[4].min == 0);  // padding
}
