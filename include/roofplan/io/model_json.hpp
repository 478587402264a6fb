// roofplan/io/model_json.hpp — models written by hand as JSON (schema "roofplan-model/1"), and zoo models
// written back out in the same form.
//
//   {"schema": "roofplan-model/1", "id": "tiny-cnn", "description": "...", "input": [3, 32, 32],
//    "layers": [
//      {"name": "conv1", "type": "conv2d", "out_channels": 16, "kernel": 3, "padding": 1, "bias": false},
//      {"name": "bn1", "type": "batchnorm2d"},
//      {"name": "relu1", "type": "relu"},
//      {"name": "pool1", "type": "maxpool2d", "kernel": 2},
//      {"name": "flatten", "type": "flatten"},
//      {"name": "fc", "type": "linear", "out_features": 10}]}
//
// Layers run in order; each reads the previous layer's output shape (or the model input) unless it gives its
// own "input" shape (a branch).  docs/model-files.md lists every type and field.  Every error names the file,
// the JSON path of the bad field (`layers[3].kernel`) and what was expected; unknown fields are errors too.
#pragma once

#include <roofplan/detail/suggest.hpp>
#include <roofplan/model/model.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan::io {

namespace model_json_detail {

using json = nlohmann::json;
using roofplan::detail::fail;

/// Largest dimension or count a hand-written model may use (a guard against typos such as 1e12).
inline constexpr std::int64_t max_dimension = std::int64_t{1} << 31;

struct Ctx {
    std::string file;
    std::string path;  ///< JSON path of the current object, e.g. "layers[3]"
    [[nodiscard]] std::string at(std::string_view key) const {
        return file + ": " + (path.empty() ? std::string(key) : path + "." + std::string(key));
    }
};

inline std::string shorten(const json& v) {
    std::string s = v.dump();
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

inline std::int64_t positive(const json& v, const std::string& where, bool allow_zero = false) {
    const std::int64_t low = allow_zero ? 0 : 1;
    if (!v.is_number_integer() || (v.is_number_integer() && (v.get<std::int64_t>() < low ||
                                                             v.get<std::int64_t>() > max_dimension)))
        fail(where, ": expected an integer in [", low, ", 2^31], got ", shorten(v));
    return v.get<std::int64_t>();
}

inline Shape shape(const json& v, const std::string& where) {
    if (!v.is_array() || v.empty() || v.size() > static_cast<std::size_t>(Shape::max_rank))
        fail(where, ": expected a shape, an array of 1 to ", Shape::max_rank, " positive integers, got ", shorten(v));
    std::array<std::int64_t, Shape::max_rank> d{1, 1, 1, 1};
    for (std::size_t i = 0; i < v.size(); ++i) d[i] = positive(v[i], where + "[" + std::to_string(i) + "]");
    switch (v.size()) {
        case 1: return Shape{d[0]};
        case 2: return Shape{d[0], d[1]};
        case 3: return Shape{d[0], d[1], d[2]};
        default: return Shape{d[0], d[1], d[2], d[3]};
    }
}

/// One layer object: typed field access that remembers which keys were read, so unknown keys are reported.
class Fields {
public:
    Fields(const json& object, Ctx ctx) : o_(object), ctx_(std::move(ctx)) {}

    [[nodiscard]] const json* find(std::string_view key) {
        used_.emplace_back(key);
        const auto it = o_.find(std::string(key));
        return it == o_.end() ? nullptr : &*it;
    }
    [[nodiscard]] std::int64_t integer(std::string_view key, std::int64_t fallback, bool required = false,
                                       bool allow_zero = false) {
        const json* v = find(key);
        if (!v) {
            if (required) fail(ctx_.at(key), ": missing (required for type '", type_, "')");
            return fallback;
        }
        return positive(*v, ctx_.at(key), allow_zero);
    }
    [[nodiscard]] bool boolean(std::string_view key, bool fallback) {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) fail(ctx_.at(key), ": expected true or false, got ", shorten(*v));
        return v->get<bool>();
    }
    [[nodiscard]] double number(std::string_view key, double fallback) {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_number() || !std::isfinite(v->get<double>()))
            fail(ctx_.at(key), ": expected a number, got ", shorten(*v));
        return v->get<double>();
    }
    /// An integer or a [height, width] pair.
    [[nodiscard]] Extent2 extent(std::string_view key, Extent2 fallback, bool required = false,
                                 bool allow_zero = false) {
        const json* v = find(key);
        if (!v) {
            if (required) fail(ctx_.at(key), ": missing (required for type '", type_, "')");
            return fallback;
        }
        if (v->is_array()) {
            if (v->size() != 2) fail(ctx_.at(key), ": expected an integer or [height, width], got ", shorten(*v));
            return {positive((*v)[0], ctx_.at(key) + "[0]", allow_zero),
                    positive((*v)[1], ctx_.at(key) + "[1]", allow_zero)};
        }
        if (!v->is_number_integer())
            fail(ctx_.at(key), ": expected an integer or [height, width], got ", shorten(*v));
        return positive(*v, ctx_.at(key), allow_zero);
    }
    [[nodiscard]] Shape shape_field(std::string_view key) {
        const json* v = find(key);
        if (!v) fail(ctx_.at(key), ": missing (required for type '", type_, "')");
        return model_json_detail::shape(*v, ctx_.at(key));
    }
    void set_type(std::string_view t) { type_ = t; }
    [[nodiscard]] const Ctx& ctx() const { return ctx_; }

    /// Fails on any key that no reader asked for, suggesting the closest accepted key.
    void reject_unknown() const {
        for (auto it = o_.begin(); it != o_.end(); ++it) {
            bool known = false;
            for (const std::string& u : used_) known = known || u == it.key();
            if (known) continue;
            std::string message = ctx_.at(it.key()) + ": unknown field for type '" + type_ + "'";
            const auto close = roofplan::detail::close_matches(it.key(), used_, 1);
            if (!close.empty()) message += "; did you mean '" + close.front() + "'?";
            message += " Accepted:";
            for (const std::string& u : used_) {
                message += ' ';
                message += u;
            }
            fail(message);
        }
    }

private:
    const json& o_;
    Ctx ctx_;
    std::string type_;
    std::vector<std::string> used_;
};

inline constexpr std::array<std::string_view, 22> layer_types{
    "conv2d", "linear", "attention", "matmul", "batchnorm2d", "layernorm", "rmsnorm", "lrn",
    "relu", "gelu", "tanh", "sigmoid", "silu", "softmax", "dropout", "maxpool2d", "avgpool2d",
    "adaptive_avgpool2d", "embedding", "add", "multiply", "concat"};
inline constexpr std::array<std::string_view, 4> more_layer_types{"flatten", "lstm", "gru", "conv_transpose2d"};

[[noreturn]] inline void unknown_type(const std::string& where, const std::string& type) {
    std::vector<std::string_view> all(layer_types.begin(), layer_types.end());
    all.insert(all.end(), more_layer_types.begin(), more_layer_types.end());
    std::string message = where + ": unknown layer type '" + type + "'";
    const auto close = roofplan::detail::close_matches(type, all, 3);
    if (!close.empty()) {
        message += "; did you mean";
        for (const std::string& c : close) {
            message += " '";
            message += c;
            message += '\'';
        }
        message += "?";
    }
    message += " Accepted:";
    for (std::string_view t : all) {
        message += ' ';
        message += t;
    }
    fail(message);
}

inline void need_rank(const Shape& s, int rank, const std::string& where, std::string_view type, std::string_view form) {
    if (s.rank() != rank)
        fail(where, ": a ", type, " layer reads a ", form, " input, but the input shape is ", s.to_string(),
             " (give \"input\" or fix the previous layer)");
}

/// [rows, width] view of a shape: the last axis is the width, the others are rows.
inline std::pair<std::int64_t, std::int64_t> rows_width(const Shape& s) {
    std::int64_t rows = 1;
    for (int i = 0; i + 1 < s.rank(); ++i) rows = roofplan::detail::mul(rows, s[i], "rows");
    return {rows, s[s.rank() - 1]};
}

/// Adds one layer described by `f` (type already read) that reads `in`; returns its output shape.
inline Shape add_layer(Model& m, const LayerName& name, const std::string& type, Fields& f, const Shape& in,
                       bool first) {
    const std::string where = f.ctx().at("type");
    const bool grad = f.boolean("needs_input_gradient", !first);
    const std::int64_t repeat = f.integer("repeat", 1);
    auto push = [&](const auto& layer) { return m.add(name, layer, grad, repeat); };
    if (type == "conv2d") {
        need_rank(in, 3, where, type, "CxHxW");
        const std::int64_t out = f.integer("out_channels", 0, true);
        const Extent2 kernel = f.extent("kernel", 1, true);
        const Extent2 stride = f.extent("stride", 1);
        const Extent2 padding = f.extent("padding", 0, false, true);
        const Extent2 dilation = f.extent("dilation", 1);
        const std::int64_t groups = f.integer("groups", 1);
        const bool bias = f.boolean("bias", true);
        f.reject_unknown();
        return push(Conv2D{{.in_channels = in[0], .out_channels = out, .in_height = in[1], .in_width = in[2],
                            .kernel = kernel, .stride = stride, .padding = padding, .dilation = dilation,
                            .groups = groups, .bias = bias}});
    }
    if (type == "conv_transpose2d") {
        need_rank(in, 3, where, type, "CxHxW");
        const std::int64_t out = f.integer("out_channels", 0, true);
        const Extent2 kernel = f.extent("kernel", 1, true);
        const Extent2 stride = f.extent("stride", 1);
        const Extent2 padding = f.extent("padding", 0, false, true);
        const Extent2 output_padding = f.extent("output_padding", 0, false, true);
        const Extent2 dilation = f.extent("dilation", 1);
        const std::int64_t groups = f.integer("groups", 1);
        const bool bias = f.boolean("bias", true);
        f.reject_unknown();
        return push(ConvTranspose2D{{.in_channels = in[0], .out_channels = out, .in_height = in[1],
                                     .in_width = in[2], .kernel = kernel, .stride = stride, .padding = padding,
                                     .output_padding = output_padding, .dilation = dilation, .groups = groups,
                                     .bias = bias}});
    }
    if (type == "linear") {
        const std::int64_t out = f.integer("out_features", 0, true);
        const bool bias = f.boolean("bias", true);
        const bool tied = f.boolean("tied", false);
        f.reject_unknown();
        const auto [rows, width] = rows_width(in);
        return push(Linear{{.in_features = width, .out_features = out, .bias = bias, .rows = rows, .tied = tied}});
    }
    if (type == "attention") {
        need_rank(in, 2, where, type, "[sequence, width]");
        const std::int64_t heads = f.integer("heads", 0, true);
        const std::int64_t head_dim = f.integer("head_dim", 0, false, true);
        const std::int64_t kv_heads = f.integer("kv_heads", 0, false, true);
        const std::int64_t kv_len = f.integer("kv_len", 0, false, true);
        const bool causal = f.boolean("causal", false);
        const bool bias = f.boolean("bias", true);
        const bool rotary = f.boolean("rotary", false);
        f.reject_unknown();
        return push(MultiHeadAttention{{.model_dim = in[1], .heads = heads, .head_dim = head_dim,
                                        .kv_heads = kv_heads, .q_len = in[0], .kv_len = kv_len, .causal = causal,
                                        .bias = bias, .rotary = rotary}});
    }
    if (type == "matmul") {
        const std::int64_t count = f.integer("count", 1);
        const std::int64_t mm = f.integer("m", 0, true);
        const std::int64_t k = f.integer("k", 0, true);
        const std::int64_t n = f.integer("n", 0, true);
        f.reject_unknown();
        return push(MatMul{{.count = count, .m = mm, .k = k, .n = n}});
    }
    if (type == "batchnorm2d" || type == "lrn") {
        need_rank(in, 3, where, type, "CxHxW");
        if (type == "lrn") {
            const std::int64_t size = f.integer("size", 5);
            f.reject_unknown();
            return push(LocalResponseNorm{{.channels = in[0], .height = in[1], .width = in[2], .size = size}});
        }
        const bool affine = f.boolean("affine", true);
        f.reject_unknown();
        return push(BatchNorm2d{{.channels = in[0], .height = in[1], .width = in[2], .affine = affine}});
    }
    if (type == "layernorm" || type == "rmsnorm") {
        const auto [rows, width] = rows_width(in);
        if (type == "rmsnorm") {
            f.reject_unknown();
            return push(RMSNorm{{.width = width, .rows = rows}});
        }
        const bool affine = f.boolean("affine", true);
        f.reject_unknown();
        return push(LayerNorm{{.width = width, .rows = rows, .affine = affine}});
    }
    if (type == "relu" || type == "gelu" || type == "tanh" || type == "sigmoid" || type == "silu") {
        f.reject_unknown();
        const ActivationKind kind = type == "relu" ? ActivationKind::relu : type == "gelu" ? ActivationKind::gelu
                                    : type == "tanh" ? ActivationKind::tanh : type == "sigmoid" ? ActivationKind::sigmoid
                                                                                               : ActivationKind::silu;
        return push(Activation{{.kind = kind, .shape = in}});
    }
    if (type == "softmax") {
        f.reject_unknown();
        return push(Softmax{{.shape = in}});
    }
    if (type == "dropout") {
        const double p = f.number("probability", 0.5);
        if (!(p >= 0.0 && p < 1.0)) fail(f.ctx().at("probability"), ": expected a number in [0, 1), got ", std::to_string(p));
        f.reject_unknown();
        return push(Dropout{{.shape = in, .probability = p}});
    }
    if (type == "maxpool2d" || type == "avgpool2d") {
        need_rank(in, 3, where, type, "CxHxW");
        const Extent2 kernel = f.extent("kernel", 2, true);
        const Extent2 stride = f.extent("stride", 0, false, true);
        const Extent2 padding = f.extent("padding", 0, false, true);
        const bool ceil_mode = f.boolean("ceil_mode", false);
        f.reject_unknown();
        return push(Pool2D{{.kind = type == "maxpool2d" ? PoolKind::max : PoolKind::average, .channels = in[0],
                            .in_height = in[1], .in_width = in[2], .kernel = kernel, .stride = stride,
                            .padding = padding, .ceil_mode = ceil_mode}});
    }
    if (type == "adaptive_avgpool2d") {
        need_rank(in, 3, where, type, "CxHxW");
        const Extent2 output = f.extent("output", 1);
        f.reject_unknown();
        return push(AdaptiveAvgPool2D{{.channels = in[0], .in_height = in[1], .in_width = in[2], .output = output}});
    }
    if (type == "embedding") {
        const std::int64_t vocabulary = f.integer("vocabulary", 0, true);
        const std::int64_t width = f.integer("width", 0, true);
        f.reject_unknown();
        return push(Embedding{{.vocabulary = vocabulary, .width = width, .rows = in.elements()}});
    }
    if (type == "add") {
        const std::int64_t inputs = f.integer("inputs", 2);
        f.reject_unknown();
        return push(Add{{.shape = in, .inputs = inputs}});
    }
    if (type == "multiply") {
        f.reject_unknown();
        return push(Multiply{{.shape = in}});
    }
    if (type == "concat") {
        const Shape output = f.shape_field("output");
        const std::int64_t inputs = f.integer("inputs", 2);
        f.reject_unknown();
        return push(Concat{{.output = output, .inputs = inputs}});
    }
    if (type == "flatten") {
        f.reject_unknown();
        return push(Flatten{{.shape = in}});
    }
    if (type == "lstm" || type == "gru") {
        need_rank(in, 2, where, type, "[sequence, features]");
        const std::int64_t hidden = f.integer("hidden_size", 0, true);
        const std::int64_t layers = f.integer("num_layers", 1);
        const bool bidirectional = f.boolean("bidirectional", false);
        const std::int64_t bias_vectors = f.integer("bias_vectors", 2, false, true);
        f.reject_unknown();
        if (type == "gru")
            return push(GRU{{.input_size = in[1], .hidden_size = hidden, .seq_len = in[0], .num_layers = layers,
                             .bidirectional = bidirectional, .bias_vectors = bias_vectors}});
        return push(LSTM{{.input_size = in[1], .hidden_size = hidden, .seq_len = in[0], .num_layers = layers,
                          .bidirectional = bidirectional, .bias_vectors = bias_vectors}});
    }
    unknown_type(where, type);
}

inline std::string read_file(const std::string& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) fail("cannot open '", file, "'");
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace model_json_detail

/// A model from a parsed "roofplan-model/1" document; `file` names it in error messages.
inline Model model_from_json(const nlohmann::json& j, const std::string& file = "model") {
    using namespace model_json_detail;
    if (!j.is_object()) fail(file, ": expected a model object {\"schema\": \"roofplan-model/1\", ...}");
    Fields top(j, Ctx{file, ""});
    top.set_type("model");
    const json* schema = top.find("schema");
    if (!schema || !schema->is_string() || schema->get<std::string>() != "roofplan-model/1")
        fail(file, ": schema: expected \"roofplan-model/1\", got ",
             schema ? shorten(*schema) : std::string("nothing"));
    const json* id = top.find("id");
    if (!id || !id->is_string() || id->get<std::string>().empty() || id->get<std::string>().size() > 31)
        fail(file, ": id: expected a string of 1 to 31 characters, got ", id ? shorten(*id) : std::string("nothing"));
    std::string description = id->get<std::string>();
    if (const json* d = top.find("description")) {
        if (!d->is_string() || d->get<std::string>().size() > 255)
            fail(file, ": description: expected a string of at most 255 characters");
        description = d->get<std::string>();
    }
    const json* input = top.find("input");
    if (!input) fail(file, ": input: missing (required: the per-instance input shape, e.g. [3, 224, 224])");
    const Shape input_shape = shape(*input, file + ": input");
    const json* layers = top.find("layers");
    if (!layers || !layers->is_array() || layers->empty())
        fail(file, ": layers: expected a non-empty array of layer objects");
    if (layers->size() > 100'000) fail(file, ": layers: more than 100,000 layers");
    top.reject_unknown();

    Model m(id->get<std::string>(), description, input_shape);
    m.reserve(layers->size());
    Shape current = input_shape;
    for (std::size_t i = 0; i < layers->size(); ++i) {
        const std::string path = "layers[" + std::to_string(i) + "]";
        const json& l = (*layers)[i];
        if (!l.is_object()) fail(file, ": ", path, ": expected a layer object, got ", shorten(l));
        Fields f(l, Ctx{file, path});
        const json* name = f.find("name");
        if (!name || !name->is_string() || name->get<std::string>().empty() || name->get<std::string>().size() > 63)
            fail(f.ctx().at("name"), ": expected a string of 1 to 63 characters, got ",
                 name ? shorten(*name) : std::string("nothing"));
        if (m.find(name->get<std::string>()))
            fail(f.ctx().at("name"), ": '", name->get<std::string>(), "' is used by an earlier layer");
        const json* type = f.find("type");
        if (!type || !type->is_string()) fail(f.ctx().at("type"), ": missing (a layer type such as \"conv2d\")");
        f.set_type(type->get<std::string>());
        Shape in = current;
        if (const json* given = f.find("input")) in = shape(*given, f.ctx().at("input"));
        try {
            current = add_layer(m, LayerName(name->get<std::string>()), type->get<std::string>(), f, in, i == 0);
        } catch (const roofplan::invalid_argument& e) {
            const std::string what = e.what();
            if (what.rfind(file + ":", 0) == 0) throw;
            fail(file, ": ", path, " ('", name->get<std::string>(), "'): ", what);
        }
    }
    return m;
}

/// A model from a "roofplan-model/1" JSON text.
inline Model model_from_json_text(const std::string& text, const std::string& file = "model") {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        roofplan::detail::fail(file, ": not valid JSON (", e.what(), ")");
    }
    return model_from_json(j, file);
}

/// Reads a "roofplan-model/1" file.  Example: `Model m = roofplan::io::load_model_json("net.json");`
inline Model load_model_json(const std::string& file) {
    return model_from_json_text(model_json_detail::read_file(file), file);
}

/// Writes any model (a zoo model, an imported one) as "roofplan-model/1"; every layer carries its "input"
/// shape, so the document reads back to the same layers.
inline nlohmann::json model_to_json(const Model& m) {
    using json = nlohmann::json;
    auto shape_json = [](const Shape& s) {
        json a = json::array();
        for (int i = 0; i < s.rank(); ++i) a.push_back(s[i]);
        return a;
    };
    auto ext = [](Extent2 e) { return e.h == e.w ? json(e.h) : json::array({e.h, e.w}); };
    json layers = json::array();
    for (std::size_t i = 0; i < m.nodes().size(); ++i) {
        const Node& n = m.nodes()[i];
        json l = {{"name", n.name.view()}, {"input", shape_json(roofplan::input_shape(n.layer))}};
        if (n.repeat != 1) l["repeat"] = n.repeat;
        if (n.needs_input_gradient == (i == 0)) l["needs_input_gradient"] = n.needs_input_gradient;
        std::visit(
            [&](const auto& layer) {
                using L = std::decay_t<decltype(layer)>;
                const auto& c = layer.config();
                if constexpr (std::same_as<L, Conv2D>) {
                    l["type"] = "conv2d";
                    l["out_channels"] = c.out_channels;
                    l["kernel"] = ext(c.kernel);
                    l["stride"] = ext(c.stride);
                    l["padding"] = ext(c.padding);
                    l["dilation"] = ext(c.dilation);
                    l["groups"] = c.groups;
                    l["bias"] = c.bias;
                } else if constexpr (std::same_as<L, ConvTranspose2D>) {
                    l["type"] = "conv_transpose2d";
                    l["out_channels"] = c.out_channels;
                    l["kernel"] = ext(c.kernel);
                    l["stride"] = ext(c.stride);
                    l["padding"] = ext(c.padding);
                    l["output_padding"] = ext(c.output_padding);
                    l["dilation"] = ext(c.dilation);
                    l["groups"] = c.groups;
                    l["bias"] = c.bias;
                } else if constexpr (std::same_as<L, Linear>) {
                    l["type"] = "linear";
                    l["out_features"] = c.out_features;
                    l["bias"] = c.bias;
                    if (c.tied) l["tied"] = true;
                    // rows·in_features, as [rows, in] so the reader recovers both
                    l["input"] = c.rows == 1 ? json::array({c.in_features}) : json::array({c.rows, c.in_features});
                } else if constexpr (std::same_as<L, MultiHeadAttention>) {
                    l["type"] = "attention";
                    l["heads"] = c.heads;
                    l["head_dim"] = c.head_dim;
                    l["kv_heads"] = c.kv_heads;
                    l["kv_len"] = c.kv_len;
                    l["causal"] = c.causal;
                    l["bias"] = c.bias;
                    l["rotary"] = c.rotary;
                } else if constexpr (std::same_as<L, MatMul>) {
                    l["type"] = "matmul";
                    l["count"] = c.count;
                    l["m"] = c.m;
                    l["k"] = c.k;
                    l["n"] = c.n;
                } else if constexpr (std::same_as<L, BatchNorm2d>) {
                    l["type"] = "batchnorm2d";
                    l["affine"] = c.affine;
                } else if constexpr (std::same_as<L, LayerNorm>) {
                    l["type"] = "layernorm";
                    l["affine"] = c.affine;
                    l["input"] = json::array({c.rows, c.width});
                } else if constexpr (std::same_as<L, RMSNorm>) {
                    l["type"] = "rmsnorm";
                    l["input"] = json::array({c.rows, c.width});
                } else if constexpr (std::same_as<L, LocalResponseNorm>) {
                    l["type"] = "lrn";
                    l["size"] = c.size;
                } else if constexpr (std::same_as<L, Activation>) {
                    l["type"] = std::string(layer.kind_name());
                } else if constexpr (std::same_as<L, Softmax>) {
                    l["type"] = "softmax";
                } else if constexpr (std::same_as<L, Dropout>) {
                    l["type"] = "dropout";
                    l["probability"] = c.probability;
                } else if constexpr (std::same_as<L, Pool2D>) {
                    l["type"] = std::string(layer.kind_name());
                    l["kernel"] = ext(c.kernel);
                    l["stride"] = ext(c.stride);
                    l["padding"] = ext(c.padding);
                    l["ceil_mode"] = c.ceil_mode;
                } else if constexpr (std::same_as<L, AdaptiveAvgPool2D>) {
                    l["type"] = "adaptive_avgpool2d";
                    l["output"] = ext(c.output);
                } else if constexpr (std::same_as<L, Embedding>) {
                    l["type"] = "embedding";
                    l["vocabulary"] = c.vocabulary;
                    l["width"] = c.width;
                } else if constexpr (std::same_as<L, Add>) {
                    l["type"] = "add";
                    l["inputs"] = c.inputs;
                } else if constexpr (std::same_as<L, Multiply>) {
                    l["type"] = "multiply";
                } else if constexpr (std::same_as<L, Concat>) {
                    l["type"] = "concat";
                    l["output"] = shape_json(c.output);
                    l["inputs"] = c.inputs;
                } else if constexpr (std::same_as<L, Flatten>) {
                    l["type"] = "flatten";
                } else if constexpr (std::same_as<L, LSTM> || std::same_as<L, GRU>) {
                    l["type"] = std::same_as<L, LSTM> ? "lstm" : "gru";
                    l["hidden_size"] = c.hidden_size;
                    l["num_layers"] = c.num_layers;
                    l["bidirectional"] = c.bidirectional;
                    l["bias_vectors"] = c.bias_vectors;
                } else {
                    static_assert(std::same_as<L, AdditiveAttention>, "model_to_json: a layer type is missing");
                    roofplan::detail::fail("model_to_json: layer '", n.name.view(),
                                           "' (additive attention) has no roofplan-model/1 form");
                }
            },
            n.layer);
        layers.push_back(std::move(l));
    }
    return {{"schema", "roofplan-model/1"},
            {"id", m.id()},
            {"description", m.description()},
            {"input", shape_json(m.input_shape())},
            {"layers", std::move(layers)}};
}

}  // namespace roofplan::io
