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
// own "input" shape (a branch).  The types and their fields are the layers' own field tables (`L::describe()`,
// include/roofplan/layers/): the reader and the writer loop over them and name no layer; docs/model-files.md lists
// them.  Every error names the file, the JSON path of the bad field (`layers[3].kernel`) and what was expected;
// unknown fields are errors too.
#pragma once

#include <roofplan/detail/suggest.hpp>
#include <roofplan/io/read.hpp>
#include <roofplan/model/model.hpp>

#include <nlohmann/json.hpp>

#include <array>
#include <cmath>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

namespace roofplan::io {

namespace model_json_detail {

using json = nlohmann::json;
using roofplan::detail::fail;

/// Largest dimension or count a hand-written model may use (a guard against typos such as 1e12).
inline constexpr std::int64_t max_dimension = std::int64_t{1} << 31;
/// The most layers a model file may hold.
inline constexpr std::size_t max_layers = 100'000;

struct Ctx {
    std::string file;
    std::string path;  ///< JSON path of the current object, e.g. "layers[3]"
    [[nodiscard]] std::string at(std::string_view key) const {
        return file + ": " + (path.empty() ? std::string(key) : path + "." + std::string(key));
    }
};


inline std::int64_t positive(const json& v, const std::string& where, std::int64_t low = 1) {
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
                                       std::int64_t low = 1) {
        const json* v = find(key);
        if (!v) {
            if (required) fail(ctx_.at(key), ": missing (required for type '", type_, "')");
            return fallback;
        }
        return positive(*v, ctx_.at(key), low);
    }
    [[nodiscard]] bool boolean(std::string_view key, bool fallback) {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_boolean()) fail(ctx_.at(key), ": expected true or false, got ", shorten(*v));
        return v->get<bool>();
    }
    /// A number, in [low, below) when `below` > 0.
    [[nodiscard]] double number(std::string_view key, double fallback, std::int64_t low = 0, std::int64_t below = 0) {
        const json* v = find(key);
        if (!v) return fallback;
        if (!v->is_number() || !std::isfinite(v->get<double>()))
            fail(ctx_.at(key), ": expected a number, got ", shorten(*v));
        const double value = v->get<double>();
        if (below > 0 && !(value >= static_cast<double>(low) && value < static_cast<double>(below)))
            fail(ctx_.at(key), ": expected a number in [", low, ", ", below, "), got ", shorten(*v));
        return value;
    }
    /// An integer or a [height, width] pair.
    [[nodiscard]] Extent2 extent(std::string_view key, Extent2 fallback, bool required = false, std::int64_t low = 1) {
        const json* v = find(key);
        if (!v) {
            if (required) fail(ctx_.at(key), ": missing (required for type '", type_, "')");
            return fallback;
        }
        if (v->is_array()) {
            if (v->size() != 2) fail(ctx_.at(key), ": expected an integer or [height, width], got ", shorten(*v));
            return {positive((*v)[0], ctx_.at(key) + "[0]", low), positive((*v)[1], ctx_.at(key) + "[1]", low)};
        }
        if (!v->is_number_integer())
            fail(ctx_.at(key), ": expected an integer or [height, width], got ", shorten(*v));
        return positive(*v, ctx_.at(key), low);
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

[[noreturn]] inline void unknown_type(const std::string& where, const std::string& type) {
    const std::vector<std::string_view> all = layer_type_names();
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

/// A count a model file takes from the layer's input shape (its rank is checked already).
inline std::int64_t from_input(layers::Source source, const Shape& in) {
    using layers::Source;
    switch (source) {
        case Source::input_axis0: return in[0];
        case Source::input_axis1: return in[1];
        case Source::input_axis2: return in[2];
        case Source::input_last: return rows_width(in).second;
        case Source::input_rows: return rows_width(in).first;
        case Source::input_elements: return in.elements();
        case Source::key:
        case Source::input_shape: break;
    }
    fail("model_json: an integer field cannot come from the whole input shape");
}

/// Sets one field of `config` from its key (absent: the Config's default) or from the input shape.
template <unsigned Used, class Config>
void read_field(Fields& f, const layers::Field<Config>& field, Config& config, const Shape& in) {
    const bool from_key = field.source == layers::Source::key;
    const std::string_view key = field.file_key();
    layers::visit_member<Used>(
        field.member, [&]<class T>(T Config::*member) {
            T& value = config.*member;
            if constexpr (std::same_as<T, std::int64_t>)
                value = from_key ? f.integer(key, value, field.required(), field.min) : from_input(field.source, in);
            else if constexpr (std::same_as<T, Extent2>) value = f.extent(key, value, field.required(), field.min);
            else if constexpr (std::same_as<T, bool>) value = f.boolean(key, value);
            else if constexpr (std::same_as<T, double>) value = f.number(key, value, field.min, field.below);
            else value = from_key ? f.shape_field(key) : in;
        });
}

/// Adds a layer of type L (the kind its type name picks) from the fields of `f` and the input shape `in`.
template <class L>
Shape add_as(Model& m, const LayerName& name, std::size_t kind, std::string_view type, Fields& f, const Shape& in,
             bool grad, std::int64_t repeat) {
    constexpr auto description = L::describe();
    if (description.input.rank != 0)
        need_rank(in, description.input.rank, f.ctx().at("type"), type, description.input.text);
    typename L::Config config = description.defaults(kind);
    for (const auto& field : description.fields) read_field<description.member_types()>(f, field, config, in);
    f.reject_unknown();
    return m.add(name, L{config}, grad, repeat);
}

/// Adds one layer described by `f` (type already read) that reads `in`; returns its output shape.
inline Shape add_layer(Model& m, const LayerName& name, const std::string& type, Fields& f, const Shape& in,
                       bool first) {
    const bool grad = f.boolean("needs_input_gradient", !first);
    const std::int64_t repeat = f.integer("repeat", 1);
    std::optional<Shape> out;
    for_each_layer_type([&]<class L>(std::type_identity<L>) {
        if (out) return;
        if (const auto kind = L::describe().find_type(type)) out = add_as<L>(m, name, *kind, type, f, in, grad, repeat);
    });
    if (!out) unknown_type(f.ctx().at("type"), type);
    return *out;
}

}  // namespace model_json_detail

/// The most trainable parameters a model from a file may have: 2^40 (about 1.1e12; 4 TiB of FP32 weights, more than
/// any node's GPUs hold).  Prediction lowers the optimizer per 64 Ki-element chunk, so the ceiling also bounds its
/// time (well under a second at the limit).
inline constexpr std::int64_t max_model_params = std::int64_t{1} << 40;

/// Fails when a model read from `file` is larger than the documented limits (its parameters; a count that
/// overflows 64 bits fails in Model::params itself).
inline void check_model_size(const Model& m, const std::string& file) {
    std::int64_t params = 0;
    try {
        params = m.params();
    } catch (const roofplan::Error& e) {
        roofplan::detail::fail(file, ": ", e.what());
    }
    if (params > max_model_params)
        roofplan::detail::fail(file, ": ", params, " trainable parameters, more than 2^40 (",
                               max_model_params, ", the limit of a model file)");
}

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
    io::require_printable(description, file + ": id");
    if (const json* d = top.find("description")) {
        if (!d->is_string() || d->get<std::string>().size() > 255)
            fail(file, ": description: expected a string of at most 255 characters");
        description = d->get<std::string>();
        io::require_printable(description, file + ": description");
    }
    const json* input = top.find("input");
    if (!input) fail(file, ": input: missing (required: the per-instance input shape, e.g. [3, 224, 224])");
    const Shape input_shape = shape(*input, file + ": input");
    const json* layers = top.find("layers");
    if (!layers || !layers->is_array() || layers->empty())
        fail(file, ": layers: expected a non-empty array of layer objects");
    if (layers->size() > max_layers)
        fail(file, ": layers: more than ", static_cast<std::int64_t>(max_layers), " layers (the limit of a model file)");
    top.reject_unknown();

    Model m(id->get<std::string>(), description, input_shape);
    m.reserve(layers->size());
    Shape current = input_shape;
    std::unordered_set<std::string> names;  // (Model::find is a linear search: n layers would take O(n^2))
    names.reserve(layers->size());
    for (std::size_t i = 0; i < layers->size(); ++i) {
        const std::string path = "layers[" + std::to_string(i) + "]";
        const json& l = (*layers)[i];
        if (!l.is_object()) fail(file, ": ", path, ": expected a layer object, got ", shorten(l));
        Fields f(l, Ctx{file, path});
        const json* name = f.find("name");
        if (!name || !name->is_string() || name->get<std::string>().empty() || name->get<std::string>().size() > 63)
            fail(f.ctx().at("name"), ": expected a string of 1 to 63 characters, got ",
                 name ? shorten(*name) : std::string("nothing"));
        io::require_printable(name->get_ref<const std::string&>(), f.ctx().at("name"));
        if (!names.insert(name->get<std::string>()).second)
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
    check_model_size(m, file);
    return m;
}

/// A model from a "roofplan-model/1" JSON text.
inline Model model_from_json_text(const std::string& text, const std::string& file = "model") {
    return model_from_json(io::parse(text, file), file);
}

/// Reads a "roofplan-model/1" file.  Example: `Model m = roofplan::io::load_model_json("net.json");`
inline Model load_model_json(const std::string& file) {
    return model_from_json_text(io::read_text(file), file);
}

namespace model_json_detail {

inline json shape_json(const Shape& s) {
    json a = json::array();
    for (int i = 0; i < s.rank(); ++i) a.push_back(s[i]);
    return a;
}

/// One field as files give it (an extent as one integer when square); fields taken from the input shape are not
/// written, nor `when_set` fields at their default.
template <unsigned Used, class Config>
void write_field(json& l, const layers::Field<Config>& field, const Config& config) {
    if (field.source != layers::Source::key) return;
    layers::visit_member<Used>(
        field.member, [&]<class T>(T Config::*member) {
            const T& value = config.*member;
            static const Config defaults{};
            if (field.presence == layers::Presence::when_set && value == defaults.*member) return;
            json& out = l[std::string(field.file_key())];
            if constexpr (std::same_as<T, Shape>) out = shape_json(value);
            else if constexpr (std::same_as<T, Extent2>)
                out = value.h == value.w ? json(value.h) : json::array({value.h, value.w});
            else out = value;
        });
}

}  // namespace model_json_detail

/// Writes any model (a zoo model, an imported one) as "roofplan-model/1"; every layer carries its "input"
/// shape, so the document reads back to the same layers.
inline nlohmann::json model_to_json(const Model& m) {
    using namespace model_json_detail;
    json layers = json::array();
    for (std::size_t i = 0; i < m.nodes().size(); ++i) {
        const Node& n = m.nodes()[i];
        json l = {{"name", n.name.view()}, {"input", shape_json(roofplan::input_shape(n.layer))}};
        if (n.repeat != 1) l["repeat"] = n.repeat;
        if (n.needs_input_gradient == (i == 0)) l["needs_input_gradient"] = n.needs_input_gradient;
        std::visit(
            [&]<class L>(const L& layer) {
                constexpr auto description = L::describe();
                l["type"] = std::string(description.type_of(layer.config()));
                for (const auto& field : description.fields)
                    write_field<description.member_types()>(l, field, layer.config());
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
