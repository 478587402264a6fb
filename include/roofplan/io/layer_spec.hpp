// roofplan/io/layer_spec.hpp — one layer from a one-line text spec, for `roofplan explain` and scripts.
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/detail/suggest.hpp>
#include <roofplan/layers/layer.hpp>

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
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

    /// An integer in [min, 1e9].
    [[nodiscard]] std::int64_t integer(std::string_view name, std::int64_t min) const {
        return parse_integer(name, *raw(name), min);
    }

    /// "3" (square) or "1x7" (height x width).
    [[nodiscard]] Extent2 extent(std::string_view name, std::int64_t min) const {
        const std::string& text = *raw(name);
        const auto x = text.find('x');
        if (x == std::string::npos) return parse_integer(name, text, min);
        return {parse_integer(name, text.substr(0, x), min), parse_integer(name, text.substr(x + 1), min)};
    }

    /// 1/0, true/false, yes/no; a bare key (`causal`) means true.
    [[nodiscard]] bool flag(std::string_view name) const {
        const std::string& text = *raw(name);
        if (text.empty()) return true;
        std::string v;
        for (char c : text) v += roofplan::detail::lower(c);
        if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
        if (v == "0" || v == "false" || v == "no" || v == "off") return false;
        fail(kind_, ": ", name, "='", text, "' is not a boolean; accepted: 1, 0, true, false, yes, no");
    }

    /// A number in [min, below) (no upper bound when `below` is 0).
    [[nodiscard]] double number(std::string_view name, std::int64_t min, std::int64_t below) const {
        const std::string& text = *raw(name);
        double v = 0;
        const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
        if (text.empty() || ec != std::errc{} || ptr != text.data() + text.size())
            fail(kind_, ": ", name, "='", text, "' is not a number");
        if (!(v >= static_cast<double>(min) && (below == 0 || v < static_cast<double>(below))))
            fail(kind_, ": ", name, "=", text, " is out of range; accepted: a number in [", min, ", ",
                 below == 0 ? std::string("∞") : std::to_string(below), ")");
        return v;
    }

    /// "64x56x56": 1 to 4 positive dimensions.
    [[nodiscard]] Shape shape(std::string_view name) const {
        const std::string& text = *raw(name);
        std::vector<std::int64_t> dims;
        std::size_t start = 0;
        for (;;) {
            const std::size_t x = text.find('x', start);
            dims.push_back(parse_integer(name, text.substr(start, x == std::string::npos ? std::string::npos : x - start), 1));
            if (x == std::string::npos) break;
            start = x + 1;
        }
        switch (dims.size()) {
            case 1: return Shape{dims[0]};
            case 2: return Shape{dims[0], dims[1]};
            case 3: return Shape{dims[0], dims[1], dims[2]};
            case 4: return Shape{dims[0], dims[1], dims[2], dims[3]};
            default: fail(kind_, ": ", name, "='", text, "' has ", static_cast<std::int64_t>(dims.size()),
                          " dimensions; a shape has 1 to 4, e.g. 64x56x56");
        }
    }

    [[noreturn]] void missing(std::string_view name) const {
        std::string_view meaning;
        for (const SpecKey& k : keys_)
            if (k.name == name) meaning = k.meaning;
        fail(kind_, ": missing ", name, " (", meaning, "); accepted keys: ", accepted());
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

/// Sets one field of `config` from its key; an absent key keeps the Config's default (or is an error if required).
template <unsigned Used, class Config>
void read_spec_field(const SpecReader& r, const layers::Field<Config>& field, Config& config) {
    const std::string_view key = field.key;
    if (!r.has(key)) {
        if (field.required()) r.missing(key);
        return;
    }
    layers::visit_member<Used>(
        field.member, [&]<class T>(T Config::*member) {
            T& value = config.*member;
            if constexpr (std::same_as<T, std::int64_t>) value = r.integer(key, field.min);
            else if constexpr (std::same_as<T, Extent2>) value = r.extent(key, field.min);
            else if constexpr (std::same_as<T, bool>) value = r.flag(key);
            else if constexpr (std::same_as<T, double>) value = r.number(key, field.min, field.below);
            else value = r.shape(key);
        });
}

/// A layer of type L (the kind its type name picks) from the key=value pairs of spec `text`.
template <class L>
AnyLayer parse_as(std::size_t kind_index, const std::string& kind,
                  const std::vector<std::pair<std::string, std::string>>& pairs, std::string_view text) {
    constexpr auto description = L::describe();
    std::vector<SpecKey> keys;
    for (const auto& field : description.fields) keys.push_back({field.key, field.name, field.meaning});
    const SpecReader r(kind, pairs, std::move(keys));
    typename L::Config config = description.defaults(kind_index);
    for (const auto& field : description.fields) read_spec_field<description.member_types()>(r, field, config);
    try {
        return AnyLayer{L{config}};
    } catch (const roofplan::invalid_argument& e) {  // impossible shapes: the descriptor's message, quoting the spec
        fail(e.what(), " (in spec \"", text, "\")");
    }
}

/// The tokens of a spec: words separated by spaces, tabs or commas.
inline std::vector<std::string> spec_tokens(std::string_view text) {
    std::vector<std::string> tokens;
    for (std::size_t i = 0; i < text.size();) {
        while (i < text.size() && (text[i] == ' ' || text[i] == '\t' || text[i] == ',')) ++i;
        std::size_t j = i;
        while (j < text.size() && text[j] != ' ' && text[j] != '\t' && text[j] != ',') ++j;
        if (j > i) tokens.emplace_back(text.substr(i, j - i));
        i = j;
    }
    return tokens;
}

/// key=value pairs (a bare key has an empty value: true for booleans).
inline std::vector<std::pair<std::string, std::string>> spec_pairs(const std::string& kind,
                                                                   const std::vector<std::string>& tokens) {
    std::vector<std::pair<std::string, std::string>> pairs;
    for (std::size_t i = 1; i < tokens.size(); ++i) {
        const auto eq = tokens[i].find('=');
        if (eq == 0) fail(kind, ": '", tokens[i], "' has no key before '='");
        if (eq == std::string::npos) pairs.emplace_back(tokens[i], "");
        else if (eq + 1 == tokens[i].size()) fail(kind, ": ", tokens[i], " has no value");
        else pairs.emplace_back(tokens[i].substr(0, eq), tokens[i].substr(eq + 1));
    }
    return pairs;
}

}  // namespace detail

/// The layer kinds a spec may name: every layer type.
inline std::string layer_spec_kinds() {
    std::string out;
    for (std::string_view k : layer_type_names()) {
        if (!out.empty()) out += ", ";
        out += k;
    }
    return out;
}

/// Parses a one-line layer spec, `KIND key=value ...` (keys in any order, case-insensitive), into a layer.  The kinds
/// and keys are the layers' own field tables (`L::describe()`): a key is a field's short or long name.
/// Example: `parse_layer_spec("conv2d cin=64 cout=64 k=3 s=1 p=1 h=56 w=56")` is ResNet-50's layer1.0.conv2 with a
/// bias (params 36,928).  Kernels, strides and paddings take `3` or `1x7`; shapes take `64x56x56`; booleans take
/// 1/0/true/false or the bare key.  Errors name the kind, the key, the bad value and what is accepted.
inline AnyLayer parse_layer_spec(std::string_view text) {
    using roofplan::detail::fail;
    const std::vector<std::string> tokens = detail::spec_tokens(text);
    if (tokens.empty()) fail("empty layer spec; expected e.g. \"conv2d cin=64 cout=64 k=3 s=1 p=1 h=56 w=56\"");
    std::string kind;
    for (char c : tokens[0]) kind += roofplan::detail::lower(c);
    std::optional<AnyLayer> layer;
    for_each_layer_type([&]<class L>(std::type_identity<L>) {
        if (const auto index = L::describe().find_type(kind); index && !layer)
            layer = detail::parse_as<L>(*index, kind, detail::spec_pairs(kind, tokens), text);
    });
    if (!layer) {
        const auto close = roofplan::detail::close_matches(kind, layer_type_names(), 3);
        fail("unknown layer kind '", tokens[0], "'", close.empty() ? "" : " (did you mean " + close.front() + "?)",
             "; accepted: ", layer_spec_kinds());
    }
    return *layer;
}

}  // namespace roofplan::io
