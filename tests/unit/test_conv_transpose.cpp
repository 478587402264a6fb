// ConvTranspose2D: the descriptor against hand formulas, its roofplan-model/1 form, and (with ONNX) the
// ConvTranspose importer on graphs built here in memory, output_shape included.
#include <doctest/doctest.h>

#include <roofplan/io/model_json.hpp>
#include <roofplan/layers/layer.hpp>
#if defined(ROOFPLAN_HAS_ONNX)
#include <roofplan/io/onnx.hpp>

#include <onnx/onnx_pb.h>
#endif

#include <string>

using roofplan::ConvTranspose2D;
using roofplan::Extent2;

TEST_CASE("ConvTranspose2D: output size, params and MACs by the PyTorch formulas") {
    // nn.ConvTranspose2d(16, 8, 4, stride=2, padding=1) on 16x8x8: weight 16·8·4·4, bias 8; Ho = 7·2 − 2 + 3 + 1
    const ConvTranspose2D up{{.in_channels = 16, .out_channels = 8, .in_height = 8, .in_width = 8, .kernel = 4,
                              .stride = 2, .padding = 1}};
    CHECK(up.params() == 16 * 8 * 4 * 4 + 8);
    CHECK(up.output_shape() == roofplan::Shape{8, 16, 16});
    CHECK(up.input_shape() == roofplan::Shape{16, 8, 8});
    const std::int64_t macs = 8 * 8 * 16 * 8 * 4 * 4;  // every input pixel scatters a full kernel
    CHECK(roofplan::forward_macs(up).value() == macs);
    CHECK(up.paper_ops() == macs + 8 * 16 * 16);
    CHECK(roofplan::type_label(roofplan::AnyLayer{up}) == "conv_transpose2d");

    // nn.ConvTranspose2d(8, 6, 3, stride=2, padding=1, output_padding=1, groups=2, dilation=1, bias=False)
    // on 8x16x16: weight 8·(6/2)·3·3; Ho = 15·2 − 2 + 2 + 1 + 1 = 32
    const ConvTranspose2D grouped{{.in_channels = 8, .out_channels = 6, .in_height = 16, .in_width = 16,
                                   .kernel = 3, .stride = 2, .padding = 1, .output_padding = 1, .groups = 2,
                                   .bias = false}};
    CHECK(grouped.params() == 8 * 3 * 3 * 3);
    CHECK(grouped.output_shape() == roofplan::Shape{6, 32, 32});
    CHECK(roofplan::forward_macs(grouped).value() == 16 * 16 * 8 * 3 * 9);
    CHECK(grouped.paper_ops() == 16 * 16 * 8 * 3 * 9);

    // Rectangular kernel, dilation, per-axis stride: Ho = 4·1 − 0 + 2·2 + 1 = 9, Wo = 4·3 − 2 + 2·0 + 2 + 1 = 13
    const ConvTranspose2D rect{{.in_channels = 2, .out_channels = 4, .in_height = 5, .in_width = 5,
                                .kernel = {3, 1}, .stride = {1, 3}, .padding = {0, 1}, .output_padding = {0, 2},
                                .dilation = {2, 1}}};
    CHECK(rect.output_shape() == roofplan::Shape{4, 9, 13});
    CHECK(rect.params() == 2 * 4 * 3 * 1 + 4);
}

TEST_CASE("ConvTranspose2D: passes mirror the matching Conv2D's (forward = its backward-data)") {
    const ConvTranspose2D t{{.in_channels = 16, .out_channels = 8, .in_height = 8, .in_width = 8, .kernel = 4,
                             .stride = 2, .padding = 1, .bias = false}};
    // the Conv2D whose input gradient this is: 8 → 16 channels, 16x16 → 8x8, same kernel
    const roofplan::Conv2D c{{.in_channels = 8, .out_channels = 16, .in_height = 16, .in_width = 16, .kernel = 4,
                              .stride = 2, .padding = 1, .bias = false}};
    REQUIRE(c.output_shape() == t.input_shape());
    CHECK(t.params() == c.params());
    for (std::int64_t b : {1, 3}) {
        CHECK(t.forward(b).macs == c.backward_data(b).macs);
        CHECK(t.forward(b).gemm == c.backward_data(b).gemm);
        CHECK(t.backward_data(b).macs == c.forward(b).macs);
        CHECK(t.backward_data(b).gemm == c.forward(b).gemm);
        CHECK(t.backward_weight(b).macs.value() == b * 8 * 8 * 16 * 8 * 16);
        CHECK(t.forward(b).activation_elements_written == b * 8 * 16 * 16);
        CHECK(t.backward_weight(b).gradient_elements_written == t.params());
    }
}

TEST_CASE("ConvTranspose2D: bad geometry gives clear errors") {
    using C = ConvTranspose2D::Config;
    auto error = [](const C& c) -> std::string {
        try {
            (void)ConvTranspose2D{c};
        } catch (const roofplan::invalid_argument& e) {
            return e.what();
        }
        return "no error";
    };
    const C ok{.in_channels = 4, .out_channels = 4, .in_height = 4, .in_width = 4, .kernel = 3, .stride = 2};
    CHECK(error(ok) == "no error");
    C c = ok;
    c.in_channels = 0;
    CHECK(error(c).find("conv_transpose2d: in_channels") != std::string::npos);
    c = ok;
    c.groups = 3;
    CHECK(error(c).find("must both be divisible by groups (3)") != std::string::npos);
    c = ok;
    c.output_padding = 2;
    CHECK(error(c).find("output_padding 2x2 must be smaller than the stride") != std::string::npos);
    c = ok;
    c.padding = 5;  // (4−1)·2 − 10 + 2 + 1 < 1
    CHECK(error(c).find("the padding is too large") != std::string::npos);
    c = ok;
    c.padding = Extent2{-1, 0};
    CHECK(error(c).find("padding height") != std::string::npos);
}

TEST_CASE("JSON model: conv_transpose2d reads, counts and writes back") {
    const std::string text = R"({"schema": "roofplan-model/1", "id": "dec", "input": [16, 8, 8], "layers": [
        {"name": "up1", "type": "conv_transpose2d", "out_channels": 8, "kernel": 4, "stride": 2, "padding": 1},
        {"name": "up2", "type": "conv_transpose2d", "out_channels": 6, "kernel": 3, "stride": 2, "padding": 1,
         "output_padding": 1, "groups": 2, "bias": false}]})";
    const roofplan::Model m = roofplan::io::model_from_json_text(text, "dec.json");
    CHECK(m.params() == (16 * 8 * 16 + 8) + 8 * 3 * 9);
    CHECK(m.forward_macs().value() == 8 * 8 * 16 * 8 * 16 + 16 * 16 * 8 * 3 * 9);
    CHECK(roofplan::output_shape(m.nodes().back().layer) == roofplan::Shape{6, 32, 32});
    const roofplan::Model back = roofplan::io::model_from_json(roofplan::io::model_to_json(m), "back");
    CHECK(back.params() == m.params());
    CHECK(back.forward_macs().value() == m.forward_macs().value());
    CHECK(std::get<ConvTranspose2D>(back.nodes().back().layer).config().output_padding == Extent2{1});
    const std::string bad = R"({"schema": "roofplan-model/1", "id": "d", "input": [4, 4, 4], "layers": [
        {"name": "up", "type": "conv_transpose2d", "out_channels": 4, "kernel": 3, "output_padding": 1}]})";
    CHECK_THROWS_WITH_AS((void)roofplan::io::model_from_json_text(bad, "d.json"),
                         doctest::Contains("must be smaller than the stride"), roofplan::invalid_argument);
}

#if defined(ROOFPLAN_HAS_ONNX)
namespace {
onnx::ValueInfoProto tensor(const std::string& name, std::initializer_list<std::int64_t> dims) {
    onnx::ValueInfoProto v;
    v.set_name(name);
    auto* t = v.mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (std::int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
    return v;
}
void ints(onnx::NodeProto& n, const std::string& name, std::initializer_list<std::int64_t> values) {
    auto* a = n.add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (std::int64_t v : values) a->add_ints(v);
}
/// x [1, 4, 5, 5] → ConvTranspose (weight [4, 3, 3, 3], stride 2, bias) with either pads or output_shape.
std::string decoder(bool with_output_shape, std::int64_t out) {
    onnx::GraphProto g;
    g.set_name("dec");
    *g.add_input() = tensor("x", {1, 4, 5, 5});
    *g.add_input() = tensor("w", {4, 3, 3, 3});
    *g.add_input() = tensor("b", {3});
    onnx::NodeProto n;
    n.set_op_type("ConvTranspose");
    n.set_name("/up/ConvTranspose");
    for (const char* i : {"x", "w", "b"}) n.add_input(i);
    n.add_output("y");
    ints(n, "strides", {2, 2});
    if (with_output_shape) ints(n, "output_shape", {out, out});
    else ints(n, "pads", {1, 1, 1, 1});
    *g.add_node() = n;
    *g.add_output() = tensor("y", {1, 3, 9, 9});
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    *m.mutable_graph() = g;
    return m.SerializeAsString();
}
}  // namespace

TEST_CASE("ONNX: ConvTranspose maps to conv_transpose2d, with pads or output_shape") {
    // (5−1)·2 − 2 + 2 + 1 = 9; output_shape 9 implies total padding 11 − 9 = 2, i.e. 1 per side
    for (bool by_shape : {false, true}) {
        const auto imported = roofplan::io::import_onnx_bytes(decoder(by_shape, 9), "dec.onnx");
        CHECK(imported.unsupported.empty());
        REQUIRE(imported.model.size() == 1);
        const auto& t = std::get<ConvTranspose2D>(imported.model.nodes()[0].layer);
        CHECK(t.config().padding == Extent2{1});
        CHECK(t.output_shape() == roofplan::Shape{3, 9, 9});
        CHECK(imported.model.params() == 4 * 3 * 9 + 3);
        CHECK(imported.model.forward_macs().value() == 5 * 5 * 4 * 3 * 9);
    }
    CHECK_THROWS_WITH_AS((void)roofplan::io::import_onnx_bytes(decoder(true, 10), "dec.onnx"),
                         doctest::Contains("implies a total padding of 1"), roofplan::invalid_argument);
}
#endif
