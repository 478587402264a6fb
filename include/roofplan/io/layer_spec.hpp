// roofplan/io/layer_spec.hpp — one layer from a one-line text spec, for `roofplan explain` and scripts.
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/detail/suggest.hpp>
#include <roofplan/layers/layer.hpp>

#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan::io {

namespace detail {

using roofplan::detail::fail;

/// One key a layer kind accepts: its name, an optional alias and what it means (for error messages).
struct SpecKey {
    std::string_view name;
    std::string_view alias;
    std::string_view meaning;
};

inline constexpr std::int64_t spec_max_value = 1'000'000'000;

/// The key=value pairs of one spec, checked against the keys its kind accepts.
class SpecReader {
public:
    SpecReader(std::string_view kind, const std::vector<std::pair<std::string, std::string>>& pairs,
               std::vector<SpecKey> keys)
        : kind_(kind), keys_(std::move(keys)) {
        for (const auto& [key, value] : pairs) {
            const SpecKey* k = find(key);
            if (k == nullptr) {
                std::vector<std::string> names;
                for (const SpecKey& known : keys_)  // long names first: 'kernal' suggests kernel, not k
                    if (!known.alias.empty()) names.emplace_back(known.alias);
                for (const SpecKey& known : keys_) names.emplace_back(known.name);
                const auto close = roofplan::detail::close_matches(key, names, 3);
                fail(kind_, ": unknown key '", key, "'", close.empty() ? "" : " (did you mean " + close.front() + "?)",
                     "; accepted: ", accepted());
            }
            for (const auto& seen : values_)
                if (seen.first == k->name)
                    fail(kind_, ": '", k->name, "' is given twice", k->alias.empty() ? "" : " (alias '", k->alias,
                         k->alias.empty() ? "" : "')");
            values_.emplace_back(std::string(k->name), value);
        }
    }

    [[nodiscard]] bool has(std::string_view name) const { return raw(name) != nullptr; }

    /// An integer in [min, 1e9]; `fallback` < 0 means the key is required.
    [[nodiscard]] std::int64_t integer(std::string_view name, std::int64_t fallback = -1, std::int64_t min = 1) const {
        const std::string* text = raw(name);
        if (text == nullptr) {
            if (fallback < 0) missing(name);
            return fallback;
        }
        return parse_integer(name, *text, min);
    }

    /// "3" (square) or "1x7" (height x width).
    [[nodiscard]] Extent2 extent(std::string_view name, std::int64_t fallback = -1, std::int64_t min = 1) const {
        const std::string* text = raw(name);
        if (text == nullptr) {
            if (fallback < 0) missing(name);
            return fallback;
        }
        const auto x = text->find('x');
        if (x == std::string::npos) return parse_integer(name, *text, min);
        return {parse_integer(name, text->substr(0, x), min), parse_integer(name, text->substr(x + 1), min)};
    }

    /// 1/0, true/false, yes/no; a bare key (`causal`) means true.
    [[nodiscard]] bool flag(std::string_view name, bool fallback) const {
        const std::string* text = raw(name);
        if (text == nullptr) return fallback;
        if (text->empty()) return true;
        std::string v;
        for (char c : *text) v += roofplan::detail::lower(c);
        if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
        if (v == "0" || v == "false" || v == "no" || v == "off") return false;
        fail(kind_, ": ", name, "='", *text, "' is not a boolean; accepted: 1, 0, true, false, yes, no");
    }

    /// "64x56x56": 1 to 4 positive dimensions.
    [[nodiscard]] Shape shape(std::string_view name) const {
        const std::string* text = raw(name);
        if (text == nullptr) missing(name);
        std::vector<std::int64_t> dims;
        std::size_t start = 0;
        for (;;) {
            const std::size_t x = text->find('x', start);
            dims.push_back(parse_integer(name, text->substr(start, x == std::string::npos ? std::string::npos : x - start), 1));
            if (x == std::string::npos) break;
            start = x + 1;
        }
        switch (dims.size()) {
            case 1: return Shape{dims[0]};
            case 2: return Shape{dims[0], dims[1]};
            case 3: return Shape{dims[0], dims[1], dims[2]};
            case 4: return Shape{dims[0], dims[1], dims[2], dims[3]};
            default: fail(kind_, ": ", name, "='", *text, "' has ", static_cast<std::int64_t>(dims.size()),
                          " dimensions; a shape has 1 to 4, e.g. 64x56x56");
        }
    }

    /// Every key with its alias: "cin|in_channels, cout|out_channels, ...".  (Appends only: GCC 12 at -O3 warns
    /// falsely (-Wrestrict) on "literal" + std::string&&.)
    [[nodiscard]] std::string accepted() const {
        std::string out;
        for (const SpecKey& k : keys_) {
            if (!out.empty()) out += ", ";
            out += k.name;
            if (!k.alias.empty()) {
                out += '|';
                out += k.alias;
            }
        }
        return out;
    }

private:
    [[nodiscard]] const SpecKey* find(std::string_view key) const {
        for (const SpecKey& k : keys_)
            if (roofplan::detail::iequals(k.name, key) || (!k.alias.empty() && roofplan::detail::iequals(k.alias, key)))
                return &k;
        return nullptr;
    }
    [[nodiscard]] const std::string* raw(std::string_view name) const {
        for (const auto& [key, value] : values_)
            if (key == name) return &value;
        return nullptr;
    }
    [[noreturn]] void missing(std::string_view name) const {
        std::string_view meaning;
        for (const SpecKey& k : keys_)
            if (k.name == name) meaning = k.meaning;
        fail(kind_, ": missing ", name, " (", meaning, "); accepted keys: ", accepted());
    }
    [[nodiscard]] std::int64_t parse_integer(std::string_view name, const std::string& text, std::int64_t min) const {
        if (text.empty()) fail(kind_, ": ", name, " needs a value, e.g. ", name, "=3");
        std::int64_t v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec == std::errc::invalid_argument || ptr != text.data() + text.size())
            fail(kind_, ": ", name, "='", text, "' is not an integer");
        if (ec == std::errc::result_out_of_range || v < min || v > spec_max_value)
            fail(kind_, ": ", name, "=", text, " is out of range; accepted: ", min, " to ", spec_max_value);
        return v;
    }

    std::string kind_;
    std::vector<SpecKey> keys_;
    std::vector<std::pair<std::string, std::string>> values_;
};

inline constexpr std::string_view spec_kinds[] = {
    "conv2d", "linear", "attention", "maxpool2d", "avgpool2d", "adaptive_avgpool2d", "batchnorm2d", "layernorm",
    "rmsnorm", "lrn", "relu", "gelu", "tanh", "sigmoid", "silu", "softmax", "embedding", "lstm"};

inline constexpr SpecKey key_c{"c", "channels", "channels"};
inline constexpr SpecKey key_h{"h", "height", "input height"};
inline constexpr SpecKey key_w{"w", "width", "input width"};

}  // namespace detail

/// The layer kinds a spec may name.
inline std::string layer_spec_kinds() {
    std::string out;
    for (std::string_view k : detail::spec_kinds) {
        if (!out.empty()) out += ", ";
        out += k;
    }
    return out;
}

/// Parses a one-line layer spec, `KIND key=value ...` (keys in any order, case-insensitive), into a layer.
/// Example: `parse_layer_spec("conv2d cin=64 cout=64 k=3 s=1 p=1 h=56 w=56")` is ResNet-50's layer1.0.conv2 with a
/// bias (params 36,928).  Kernels, strides and paddings take `3` or `1x7`; shapes take `64x56x56`; booleans take
/// 1/0/true/false or the bare key.  Errors name the kind, the key, the bad value and what is accepted.
inline AnyLayer parse_layer_spec(std::string_view text) {
    using detail::SpecKey;
    using detail::SpecReader;
    using roofplan::detail::fail;
    std::vector<std::string> tokens;
    for (std::size_t i = 0; i < text.size();) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == ',')) ++i;
        std::size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != ',') ++j;
        if (j > i) tokens.emplace_back(text.substr(i, j - i));
        i = j;
    }
    if (tokens.empty()) fail("empty layer spec; expected e.g. \"conv2d cin=64 cout=64 k=3 s=1 p=1 h=56 w=56\"");
    std::string kind;
    for (char c : tokens[0]) kind += roofplan::detail::lower(c);
    bool known = false;
    for (std::string_view k : detail::spec_kinds) known = known || k == kind;
    if (!known) {
        const auto close = roofplan::detail::close_matches(kind, detail::spec_kinds, 3);
        fail("unknown layer kind '", tokens[0], "'", close.empty() ? "" : " (did you mean " + close.front() + "?)",
             "; accepted: ", layer_spec_kinds());
    }
    std::vector<std::pair<std::string, std::string>> pairs;
    for (std::size_t i = 1; i < tokens.size(); ++i) {
        const auto eq = tokens[i].find('=');
        if (eq == 0) fail(kind, ": '", tokens[i], "' has no key before '='");
        if (eq == std::string::npos) pairs.emplace_back(tokens[i], "");  // a bare key: true for booleans
        else if (eq + 1 == tokens[i].size()) fail(kind, ": ", tokens[i], " has no value");
        else pairs.emplace_back(tokens[i].substr(0, eq), tokens[i].substr(eq + 1));
    }
    // Wraps descriptor errors (impossible shapes) so that they quote the spec.
    const auto build = [&](auto make) -> AnyLayer {
        try {
            return make();
        } catch (const roofplan::invalid_argument& e) {
            fail(e.what(), " (in spec \"", text, "\")");
        }
    };

    if (kind == "conv2d") {
        const SpecReader r(kind, pairs, {{"cin", "in_channels", "input channels"}, {"cout", "out_channels", "output channels"},
                                          {"k", "kernel", "kernel size, 3 or 1x7"}, {"s", "stride", "stride, default 1"},
                                          {"p", "padding", "zero padding, default 0"}, {"d", "dilation", "dilation, default 1"},
                                          {"g", "groups", "groups, default 1"}, detail::key_h, detail::key_w,
                                          {"bias", "", "bias, default 1"}});
        return build([&] {
            return AnyLayer{Conv2D{{.in_channels = r.integer("cin"), .out_channels = r.integer("cout"),
                                    .in_height = r.integer("h"), .in_width = r.integer("w"), .kernel = r.extent("k"),
                                    .stride = r.extent("s", 1), .padding = r.extent("p", 0, 0),
                                    .dilation = r.extent("d", 1), .groups = r.integer("g", 1), .bias = r.flag("bias", true)}}};
        });
    }
    if (kind == "linear") {
        const SpecReader r(kind, pairs, {{"in", "in_features", "input features"}, {"out", "out_features", "output features"},
                                          {"rows", "seq", "vectors per instance (sequence length), default 1"},
                                          {"bias", "", "bias, default 1"}});
        return build([&] {
            return AnyLayer{Linear{{.in_features = r.integer("in"), .out_features = r.integer("out"),
                                    .bias = r.flag("bias", true), .rows = r.integer("rows", 1)}}};
        });
    }
    if (kind == "attention") {
        const SpecReader r(kind, pairs, {{"d", "model_dim", "model width"}, {"heads", "", "attention heads"},
                                          {"seq", "q_len", "query length"}, {"kv_len", "", "key length, default seq"},
                                          {"head_dim", "", "width per head, default d/heads"},
                                          {"kv_heads", "", "key/value heads (GQA), default heads"},
                                          {"causal", "", "causal mask, default 0"}, {"bias", "", "projection biases, default 1"},
                                          {"rotary", "", "rotary embeddings, default 0"}});
        return build([&] {
            return AnyLayer{MultiHeadAttention{{.model_dim = r.integer("d"), .heads = r.integer("heads"),
                                                .head_dim = r.integer("head_dim", 0), .kv_heads = r.integer("kv_heads", 0),
                                                .q_len = r.integer("seq"), .kv_len = r.integer("kv_len", 0),
                                                .causal = r.flag("causal", false), .bias = r.flag("bias", true),
                                                .rotary = r.flag("rotary", false)}}};
        });
    }
    if (kind == "maxpool2d" || kind == "avgpool2d") {
        const SpecReader r(kind, pairs, {detail::key_c, detail::key_h, detail::key_w, {"k", "kernel", "window, 3 or 2x2"},
                                          {"s", "stride", "stride, default k"}, {"p", "padding", "padding, default 0"},
                                          {"ceil", "ceil_mode", "ceil mode, default 0"}});
        return build([&] {
            return AnyLayer{Pool2D{{.kind = kind == "maxpool2d" ? PoolKind::max : PoolKind::average,
                                    .channels = r.integer("c"), .in_height = r.integer("h"), .in_width = r.integer("w"),
                                    .kernel = r.extent("k"), .stride = r.has("s") ? r.extent("s") : Extent2{0},
                                    .padding = r.extent("p", 0, 0), .ceil_mode = r.flag("ceil", false)}}};
        });
    }
    if (kind == "adaptive_avgpool2d") {
        const SpecReader r(kind, pairs, {detail::key_c, detail::key_h, detail::key_w, {"out", "output", "output grid, default 1"}});
        return build([&] {
            return AnyLayer{AdaptiveAvgPool2D{{.channels = r.integer("c"), .in_height = r.integer("h"),
                                               .in_width = r.integer("w"), .output = r.extent("out", 1)}}};
        });
    }
    if (kind == "batchnorm2d") {
        const SpecReader r(kind, pairs, {detail::key_c, detail::key_h, detail::key_w, {"affine", "", "γ and β, default 1"}});
        return build([&] {
            return AnyLayer{BatchNorm2d{{.channels = r.integer("c"), .height = r.integer("h"), .width = r.integer("w"),
                                         .affine = r.flag("affine", true)}}};
        });
    }
    if (kind == "layernorm" || kind == "rmsnorm") {
        std::vector<SpecKey> keys{{"d", "width", "normalised width"}, {"rows", "seq", "vectors per instance, default 1"}};
        if (kind == "layernorm") keys.push_back({"affine", "", "γ and β, default 1"});
        const SpecReader r(kind, pairs, keys);
        return build([&] {
            if (kind == "rmsnorm") return AnyLayer{RMSNorm{{.width = r.integer("d"), .rows = r.integer("rows", 1)}}};
            return AnyLayer{LayerNorm{{.width = r.integer("d"), .rows = r.integer("rows", 1), .affine = r.flag("affine", true)}}};
        });
    }
    if (kind == "lrn") {
        const SpecReader r(kind, pairs, {detail::key_c, detail::key_h, detail::key_w, {"size", "", "neighbourhood, default 5"}});
        return build([&] {
            return AnyLayer{LocalResponseNorm{{.channels = r.integer("c"), .height = r.integer("h"),
                                               .width = r.integer("w"), .size = r.integer("size", 5)}}};
        });
    }
    if (kind == "softmax") {
        const SpecReader r(kind, pairs, {{"shape", "", "per-instance shape, e.g. 12x384x384"}});
        return build([&] { return AnyLayer{Softmax{{.shape = r.shape("shape")}}}; });
    }
    if (kind == "embedding") {
        const SpecReader r(kind, pairs, {{"vocab", "vocabulary", "table rows (tokens)"}, {"d", "width", "embedding width"},
                                          {"rows", "seq", "tokens per instance, default 1"}});
        return build([&] {
            return AnyLayer{Embedding{{.vocabulary = r.integer("vocab"), .width = r.integer("d"), .rows = r.integer("rows", 1)}}};
        });
    }
    if (kind == "lstm") {
        const SpecReader r(kind, pairs, {{"in", "input_size", "input features"}, {"hidden", "hidden_size", "hidden width"},
                                          {"seq", "seq_len", "time steps"}, {"layers", "num_layers", "stacked layers, default 1"},
                                          {"bidirectional", "", "default 0"},
                                          {"bias_vectors", "", "2 (PyTorch, default), 1 (TensorFlow) or 0"}});
        return build([&] {
            return AnyLayer{LSTM{{.input_size = r.integer("in"), .hidden_size = r.integer("hidden"),
                                  .seq_len = r.integer("seq"), .num_layers = r.integer("layers", 1),
                                  .bidirectional = r.flag("bidirectional", false),
                                  .bias_vectors = r.integer("bias_vectors", 2, 0)}}};
        });
    }
    // relu, gelu, tanh, sigmoid, silu
    const SpecReader r(kind, pairs, {{"shape", "", "per-instance shape, e.g. 64x56x56"}});
    ActivationKind a = ActivationKind::relu;
    for (ActivationKind k : {ActivationKind::relu, ActivationKind::gelu, ActivationKind::tanh, ActivationKind::sigmoid,
                             ActivationKind::silu})
        if (layers::to_string(k) == kind) a = k;
    return build([&] { return AnyLayer{Activation{{.kind = a, .shape = r.shape("shape")}}}; });
}

}  // namespace roofplan::io
