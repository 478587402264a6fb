// Model files: the roofplan-model/1 JSON reader (and writer), the MatMul layer and, when built with ONNX,
// the ONNX importer on graphs built here in memory.
#include <doctest/doctest.h>

#include <roofplan/io/model_json.hpp>
#include <roofplan/models/zoo.hpp>
#if defined(ROOFPLAN_HAS_ONNX)
#include <roofplan/io/onnx.hpp>

#include <onnx/onnx_pb.h>
#endif

#include <fstream>
#include <iterator>
#include <string>
#include <type_traits>

using roofplan::Model;
using roofplan::io::model_from_json_text;
using nlohmann::json;

namespace {
std::string error_of(const std::string& text) {
    try {
        (void)model_from_json_text(text, "net.json");
    } catch (const roofplan::invalid_argument& e) {
        return e.what();
    }
    return "no error";
}
std::string with_layers(const std::string& layers, const std::string& input = "[3, 32, 32]") {
    return R"({"schema": "roofplan-model/1", "id": "t", "input": )" + input + R"(, "layers": [)" + layers + "]}";
}
}  // namespace

TEST_CASE("MatMul: MACs, shapes and passes by formula") {
    const roofplan::MatMul scores{{.count = 12, .m = 128, .k = 64, .n = 128}};
    CHECK(roofplan::forward_macs(scores).value() == 12 * 128 * 64 * 128);
    CHECK(scores.params() == 0);
    CHECK(scores.output_shape() == roofplan::Shape{12, 128, 128});
    CHECK(scores.forward(3).macs.value() == 3 * 12 * 128 * 64 * 128);
    CHECK(scores.backward_data(1).macs.value() == 2 * 12 * 128 * 64 * 128);
    CHECK(scores.backward_weight(1).macs.value() == 0);
    CHECK(scores.forward(2).gemm == roofplan::GemmShape{128, 128, 64, 24});
    CHECK_THROWS_WITH_AS((void)roofplan::MatMul({.count = 1, .m = 0, .k = 2, .n = 2}), doctest::Contains("matmul: m"),
                         roofplan::invalid_argument);
}

TEST_CASE("JSON model: the documented example counts what the formulas give") {
    const Model m = roofplan::io::load_model_json(ROOFPLAN_SOURCE_DIR "/examples/models/tiny_cnn.json");
    CHECK(m.id() == "tiny-cnn");
    CHECK(m.input_shape() == roofplan::Shape{3, 32, 32});
    // conv1 3→32 3x3 no bias; bn 2·32; conv2 32→64 3x3 + bias; fc1 64·8·8 → 256 + bias; fc2 256 → 10 + bias
    const std::int64_t params = 32 * 3 * 9 + 2 * 32 + (64 * 32 * 9 + 64) + (64 * 8 * 8 + 1) * 256 + (256 + 1) * 10;
    CHECK(m.params() == params);
    const std::int64_t macs = 32 * 32 * 32 * 3 * 9 + 16 * 16 * 64 * 32 * 9 + 4096 * 256 + 256 * 10;
    CHECK(m.forward_macs().value() == macs);
    CHECK(m.nodes().front().needs_input_gradient == false);
    CHECK(m.nodes()[1].needs_input_gradient == true);
    CHECK(roofplan::output_shape(m.nodes().back().layer) == roofplan::Shape{10});
}

TEST_CASE("JSON model: every zoo model writes out and reads back to the same layers") {
    for (const auto& entry : roofplan::models::zoo()) {
        CAPTURE(entry.id);
        const Model zoo = entry.build();
        const json doc = roofplan::io::model_to_json(zoo);
        const Model back = roofplan::io::model_from_json(json::parse(doc.dump()), std::string(entry.id));
        CHECK(back.params() == zoo.params());
        CHECK(back.forward_macs().value() == zoo.forward_macs().value());
        REQUIRE(back.size() == zoo.size());
        for (std::size_t i = 0; i < zoo.size(); ++i) {
            CHECK(back.nodes()[i].name.view() == zoo.nodes()[i].name.view());
            CHECK(back.nodes()[i].repeat == zoo.nodes()[i].repeat);
            CHECK(back.nodes()[i].needs_input_gradient == zoo.nodes()[i].needs_input_gradient);
            for (const auto pass : {roofplan::Pass::forward, roofplan::Pass::backward_data, roofplan::Pass::backward_weight})
                CHECK(roofplan::detail::same_cost(back.nodes()[i].cost(pass, 7), zoo.nodes()[i].cost(pass, 7)));
        }
    }
    // GNMT's additive attention reads its queries and units from the input, the memory from its fields.
    const json gnmt = roofplan::io::model_to_json(roofplan::models::gnmt());
    bool found = false;
    for (const json& l : gnmt["layers"])
        if (l["type"] == "additive_attention") {
            found = true;
            CHECK(l["input"] == json::array({50, 1024}));
            CHECK(l["memory_len"] == 50);
            CHECK(l["memory_width"] == 1024);
        }
    CHECK(found);
}

TEST_CASE("JSON model: docs/model-files.md lists every layer type and every field a file gives") {
    std::ifstream in(ROOFPLAN_SOURCE_DIR "/docs/model-files.md");
    const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    REQUIRE(!doc.empty());
    roofplan::for_each_layer_type([&]<class L>(std::type_identity<L>) {
        constexpr auto description = L::describe();
        for (std::string_view type : description.types) {
            CAPTURE(type);
            CHECK(doc.find("`" + std::string(type) + "`") != std::string::npos);
        }
        for (const auto& field : description.fields) {
            if (field.source != roofplan::layers::Source::key) continue;
            CAPTURE(field.file_key());
            CHECK(doc.find(std::string(field.file_key())) != std::string::npos);
        }
    });
}

TEST_CASE("JSON model: errors name the file, the field's path and what was expected") {
    CHECK(error_of("{ nope") .find("net.json: not valid JSON") != std::string::npos);
    CHECK(error_of(R"({"schema": "roofplan-model/2"})").find("schema: expected \"roofplan-model/1\"") != std::string::npos);
    CHECK(error_of(R"({"schema": "roofplan-model/1", "id": "t", "layers": []})").find("input: missing") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "c", "type": "conv2d", "kernel": 3})"))
              .find("net.json: layers[0].out_channels: missing (required for type 'conv2d')") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "c", "type": "conv2d", "out_channels": 8, "kernel": "3"})"))
              .find("layers[0].kernel: expected an integer or [height, width], got \"3\"") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "c", "type": "conv2d", "out_channels": 8, "kernel": 3, "stirde": 2})"))
              .find("layers[0].stirde: unknown field for type 'conv2d'; did you mean 'stride'?") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "c", "type": "conv2"})")).find("unknown layer type 'conv2'; did you mean 'conv2d'")
          != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "c", "type": "conv2d", "out_channels": 99999999999, "kernel": 3})"))
              .find("layers[0].out_channels: expected an integer in [1, 2^31]") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "f", "type": "flatten"}, {"name": "c", "type": "conv2d", "out_channels": 8, "kernel": 3})"))
              .find("layers[1].type: a conv2d layer reads a CxHxW input, but the input shape is 3072") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "c", "type": "conv2d", "out_channels": 8, "kernel": 64})"))
              .find("layers[0] ('c'): conv2d: kernel 64x64") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "a", "type": "relu"}, {"name": "a", "type": "relu"})"))
              .find("layers[1].name: 'a' is used by an earlier layer") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "d", "type": "dropout", "probability": 1.5})"))
              .find("layers[0].probability: expected a number in [0, 1)") != std::string::npos);
    CHECK(error_of(with_layers(R"({"name": "r", "type": "relu"})", "[0, 4]")).find("input[0]: expected an integer in [1, 2^31]")
          != std::string::npos);
    CHECK_THROWS_WITH_AS((void)roofplan::io::load_model_json("/nonexistent/net.json"), doctest::Contains("cannot open"),
                         roofplan::invalid_argument);
}

TEST_CASE("JSON model: branches give their input shape; transformer layers take [sequence, width]") {
    const Model m = model_from_json_text(with_layers(
        R"({"name": "tok", "type": "embedding", "vocabulary": 1000, "width": 64},
           {"name": "attn", "type": "attention", "heads": 4, "causal": true},
           {"name": "ln", "type": "layernorm"},
           {"name": "mlp", "type": "linear", "out_features": 256},
           {"name": "side", "type": "linear", "out_features": 8, "input": [16, 64]})", "[16]"));
    CHECK(m.nodes()[0].needs_input_gradient == false);
    const auto* attn = std::get_if<roofplan::MultiHeadAttention>(&m.nodes()[1].layer);
    REQUIRE(attn != nullptr);
    CHECK(attn->config().q_len == 16);
    CHECK(attn->config().model_dim == 64);
    CHECK(m.params() == 1000 * 64 + (4 * 64 * 64 + 4 * 64) + 2 * 64 + (64 + 1) * 256 + (64 + 1) * 8);
}

TEST_CASE("JSON model: recurrent layers count as PyTorch's LSTM and GRU") {
    const Model m = model_from_json_text(with_layers(
        R"({"name": "lstm", "type": "lstm", "hidden_size": 64, "num_layers": 2},
           {"name": "gru", "type": "gru", "hidden_size": 24, "bidirectional": true})", "[10, 48]"));
    // torch.nn.LSTM(48, 64, 2): 4h(in+h) + 8h per layer; torch.nn.GRU(64, 24, bidirectional): 2·(3h(in+h) + 6h)
    CHECK(m.nodes()[0].layer.index() != m.nodes()[1].layer.index());
    CHECK(roofplan::params(m.nodes()[0].layer) == 4 * 64 * (48 + 64) + 8 * 64 + 4 * 64 * (64 + 64) + 8 * 64);
    CHECK(roofplan::params(m.nodes()[1].layer) == 2 * (3 * 24 * (64 + 24) + 6 * 24));
    CHECK(roofplan::forward_macs(m.nodes()[1].layer).value() == 10 * 2 * 3 * 24 * (64 + 24));
    CHECK(roofplan::output_shape(m.nodes()[1].layer) == roofplan::Shape{10, 48});
    const Model back = roofplan::io::model_from_json(roofplan::io::model_to_json(m), "back");
    CHECK(back.params() == m.params());
    CHECK(back.forward_macs().value() == m.forward_macs().value());
}

#if defined(ROOFPLAN_HAS_ONNX)
namespace {
onnx::ValueInfoProto value(const std::string& name, std::initializer_list<std::string> dims) {
    onnx::ValueInfoProto v;
    v.set_name(name);
    auto* t = v.mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (const std::string& d : dims) {
        auto* dim = t->mutable_shape()->add_dim();
        if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
        else dim->set_dim_param(d);
    }
    return v;
}
onnx::NodeProto node(const std::string& op, std::initializer_list<std::string> in, std::initializer_list<std::string> out,
                     const std::string& name) {
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(name);
    for (const auto& i : in) n.add_input(i);
    for (const auto& o : out) n.add_output(o);
    return n;
}
std::string serialize(onnx::GraphProto g) {
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    *m.mutable_graph() = std::move(g);
    return m.SerializeAsString();
}
/// tokens [batch, seq, 32] → MatMul by W [32, 16] (+ bias [16]) → Relu → MatMul with its own transpose.
onnx::GraphProto small_graph() {
    onnx::GraphProto g;
    g.set_name("small");
    *g.add_input() = value("x", {"batch", "seq", "32"});
    *g.add_input() = value("w", {"32", "16"});
    *g.add_input() = value("b", {"16"});
    *g.add_node() = node("MatMul", {"x", "w"}, {"h"}, "/fc/MatMul");
    *g.add_node() = node("Add", {"h", "b"}, {"hb"}, "/fc/Add");
    *g.add_node() = node("Relu", {"hb"}, {"r"}, "/act/Relu");
    onnx::NodeProto t = node("Transpose", {"r"}, {"rt"}, "/T");
    auto* perm = t.add_attribute();
    perm->set_name("perm");
    perm->set_type(onnx::AttributeProto::INTS);
    for (int p : {0, 2, 1}) perm->add_ints(p);
    *g.add_node() = t;
    *g.add_node() = node("MatMul", {"r", "rt"}, {"y"}, "/gram/MatMul");
    *g.add_output() = value("y", {"batch", "seq", "seq"});
    return g;
}
}  // namespace

TEST_CASE("ONNX: parameters as graph inputs, bias folded, dynamic sequence from options") {
    roofplan::io::OnnxOptions options;
    options.seq = 10;
    const auto imported = roofplan::io::import_onnx_bytes(serialize(small_graph()), "small.onnx", options);
    const Model& m = imported.model;
    REQUIRE(m.size() == 3);  // linear (bias folded), relu, matmul; the transpose is a view
    CHECK(m.params() == 32 * 16 + 16);
    CHECK(m.forward_macs().value() == 10 * 32 * 16 + 10 * 16 * 10);
    CHECK(m.nodes()[0].name.view() == "fc");
    CHECK(std::get<roofplan::Linear>(m.nodes()[0].layer).config().bias);
    CHECK(m.nodes()[0].needs_input_gradient == false);
    CHECK(imported.fused == 1);
    CHECK(imported.views == 1);
    CHECK(imported.seq_used);
    CHECK(m.input_shape() == roofplan::Shape{10, 32});
    // The library names the field; a front end writes it its own way (the CLI as --seq).
    try {
        (void)roofplan::io::import_onnx_bytes(serialize(small_graph()), "small.onnx");
        FAIL("a dynamic dimension without a length imported");
    } catch (const roofplan::Error& e) {
        CHECK(e.field() == "seq");
        CHECK(std::string(e.what()).find("dimension 1 ('seq') is dynamic: give its length with seq N") !=
              std::string::npos);
        const std::string cli = e.message([](std::string_view f) { return "--" + std::string(f); });
        CHECK(cli.find("give its length with --seq N") != std::string::npos);
    }
}

TEST_CASE("ONNX: unsupported operators are reported, or rejected with strict") {
    onnx::GraphProto g = small_graph();
    g.mutable_node(2)->set_op_type("HardSwish");
    roofplan::io::OnnxOptions options;
    options.seq = 4;
    const auto imported = roofplan::io::import_onnx_bytes(serialize(g), "hs.onnx", options);
    REQUIRE(imported.unsupported.size() == 1);
    CHECK(imported.unsupported[0].op_type == "HardSwish");
    CHECK(imported.unsupported[0].count == 1);
    CHECK(imported.unsupported[0].first_node == "/act/Relu");
    options.strict = true;
    CHECK_THROWS_WITH_AS((void)roofplan::io::import_onnx_bytes(serialize(g), "hs.onnx", options),
                         doctest::Contains("node '/act/Relu' (HardSwish) is not supported"), roofplan::invalid_argument);
}

TEST_CASE("ONNX: malformed input gives clear errors") {
    roofplan::io::OnnxOptions options;
    options.seq = 4;
    const std::string good = serialize(small_graph());
    auto error = [&](const std::string& bytes) {
        try {
            (void)roofplan::io::import_onnx_bytes(bytes, "bad.onnx", options);
        } catch (const roofplan::invalid_argument& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK(error("").find("empty file") != std::string::npos);
    CHECK(error(good.substr(0, good.size() / 2)).find("not a valid ONNX model") != std::string::npos);
    CHECK(error(R"({"schema": "roofplan-model/1"})").find("looks like JSON") != std::string::npos);
    onnx::GraphProto cyc = small_graph();
    cyc.mutable_node(0)->set_input(0, "r");  // fc reads relu's output, relu reads fc's
    CHECK(error(serialize(cyc)).find("the graph has a cycle") != std::string::npos);
    onnx::GraphProto dangling = small_graph();
    dangling.mutable_node(2)->set_input(0, "nowhere");
    CHECK(error(serialize(dangling)).find("reads 'nowhere', which no node, graph input or initializer provides")
          != std::string::npos);
    onnx::GraphProto huge = small_graph();
    huge.mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(2)->set_dim_value(
        std::int64_t{1} << 40);
    CHECK(error(serialize(huge)).find("absurdly large") != std::string::npos);
    onnx::GraphProto mismatch = small_graph();
    mismatch.mutable_input(1)->mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim(0)->set_dim_value(31);
    CHECK(error(serialize(mismatch)).find("do not multiply") != std::string::npos);
}
#endif
