// roofplan/layers/describe.hpp — the field table every layer declares beside itself (`L::describe()`): its type
// names, and each field's keys, type, default, meaning and where a reader finds it.  The roofplan-model/1 reader and
// writer (io/model_json.hpp) and the layer-spec parser (io/layer_spec.hpp) loop over these tables; neither names a
// layer.  A field's default is its `Config` member's initialiser: one place, read by every reader.
#pragma once

#include <roofplan/shape.hpp>

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <variant>

namespace roofplan::layers {

/// Where a model file gives a field: under its own key, or implied by the layer's input shape (the previous
/// layer's output).  A layer spec has no input shape: there every field is a key.
enum class Source : std::uint8_t {
    key,
    input_axis0,     ///< that axis of the input (the description's `input.rank` fixes the rank)
    input_axis1,
    input_axis2,
    input_last,      ///< the last axis: a feature width
    input_rows,      ///< the product of the other axes: how many vectors of that width
    input_elements,  ///< every element (token ids)
    input_shape,     ///< the whole shape
};

enum class Presence : std::uint8_t {
    optional,  ///< absent means the Config's default
    required,  ///< absent is an error
    when_set,  ///< optional, and written to files only when it differs from the default (keeps them short)
};

/// The Config member a field sets; its type is the field's type (an integer, an extent `3` or `1x7`, a boolean,
/// a number, a shape).
template <class Config>
using FieldMember =
    std::variant<std::int64_t Config::*, Extent2 Config::*, bool Config::*, double Config::*, Shape Config::*>;

/// A member type's bit in a set of them (FieldMember's alternatives, in order).
template <class T>
inline constexpr unsigned member_type_bit = std::same_as<T, std::int64_t> ? 1U
                                            : std::same_as<T, Extent2>    ? 2U
                                            : std::same_as<T, bool>       ? 4U
                                            : std::same_as<T, double>     ? 8U
                                                                          : 16U;

/// Calls `visit(member)` with the field's typed member pointer.  `Used` is the set of member types the layer's fields
/// have (`Description::member_types()`): only those branches are instantiated, so no code reads a Config through a
/// pointer of a type it has no member of (GCC's flow warnings would flag those impossible paths).
template <unsigned Used, class Config, class Visit>
constexpr void visit_member(const FieldMember<Config>& member, Visit&& visit) {
    std::visit(
        [&]<class T>(T Config::*typed) {
            if constexpr ((Used & member_type_bit<T>) != 0) visit(typed);
        },
        member);
}

/// One field of a layer.  `key` is the short key of layer specs ("cout"); `name` the long one ("out_channels"),
/// which specs accept too and model files use (a field without a long name is `key` everywhere).
template <class Config>
struct Field {
    std::string_view key;
    std::string_view name;
    FieldMember<Config> member;
    std::string_view meaning;  ///< for errors and docs: "output channels"
    Source source = Source::key;
    Presence presence = Presence::optional;
    std::int64_t min = 1;    ///< integers and extents: the least accepted (0 where 0 means "derive it")
    std::int64_t below = 0;  ///< numbers: accepted in [min, below); 0: no upper bound

    [[nodiscard]] constexpr std::string_view file_key() const { return name.empty() ? key : name; }
    [[nodiscard]] constexpr bool required() const { return presence == Presence::required; }

    [[nodiscard]] constexpr Field from(Source where) const { return with([&](Field& f) { f.source = where; }); }
    [[nodiscard]] constexpr Field needed() const { return with([](Field& f) { f.presence = Presence::required; }); }
    [[nodiscard]] constexpr Field written_when_set() const {
        return with([](Field& f) { f.presence = Presence::when_set; });
    }
    [[nodiscard]] constexpr Field at_least(std::int64_t least) const { return with([&](Field& f) { f.min = least; }); }
    [[nodiscard]] constexpr Field in_range(std::int64_t least, std::int64_t upper) const {
        return with([&](Field& f) {
            f.min = least;
            f.below = upper;
        });
    }

private:
    template <class Change>
    [[nodiscard]] constexpr Field with(Change change) const {
        Field f = *this;
        change(f);
        return f;
    }
};

/// A field of `Config` set through `member`: `field("cout", "out_channels", &Config::out_channels, "output channels")`.
template <class Config, class T>
constexpr Field<Config> field(std::string_view key, std::string_view name, T Config::*member,
                              std::string_view meaning) {
    return Field<Config>{.key = key, .name = name, .member = member, .meaning = meaning};
}

/// Several field lists as one, in order: `join(std::array{cin, cout}, hw, std::array{bias})`.
template <class T, std::size_t... N>
constexpr std::array<T, (N + ...)> join(const std::array<T, N>&... parts) {
    std::array<T, (N + ...)> out{};
    std::size_t next = 0;
    const auto put = [&](const auto& part) {
        for (const T& item : part) out[next++] = item;
    };
    (put(parts), ...);
    return out;
}

/// The rank a model file's input must have for the layer (0: any) and how errors say it ("CxHxW").
struct InputForm {
    int rank = 0;
    std::string_view text;
};

/// With several type names (relu, gelu, ...), the kind a name picks: its index in `types`.
template <class Config>
struct KindAccess {
    std::size_t (*get)(const Config&) = nullptr;
    void (*set)(Config&, std::size_t) = nullptr;
};

/// A layer's field table.  Example: `Conv2D::describe().fields[1].file_key() == "out_channels"`.
template <class Config, std::size_t FieldCount, std::size_t TypeCount = 1>
struct Description {
    std::array<std::string_view, TypeCount> types;
    InputForm input{};
    std::array<Field<Config>, FieldCount> fields;
    KindAccess<Config> kind{};

    /// The type name of a configuration ("relu" for an Activation of kind relu).
    [[nodiscard]] constexpr std::string_view type_of(const Config& config) const {
        if constexpr (TypeCount == 1) return types[0];
        else return types[kind.get(config)];
    }
    /// The index of `type` among the names, if it is one of them.
    [[nodiscard]] constexpr std::optional<std::size_t> find_type(std::string_view type) const {
        for (std::size_t i = 0; i < TypeCount; ++i)
            if (types[i] == type) return i;
        return std::nullopt;
    }
    /// The set of member types the fields have (see visit_member).
    [[nodiscard]] constexpr unsigned member_types() const {
        unsigned used = 0;
        for (const Field<Config>& f : fields) used |= 1U << f.member.index();
        return used;
    }
    /// A default configuration of the kind that type name `index` picks.
    [[nodiscard]] constexpr Config defaults(std::size_t index) const {
        Config config{};
        if constexpr (TypeCount > 1) kind.set(config, index);
        else (void)index;
        return config;
    }
};

/// A layer that declares its field table.
template <class L>
concept Described = requires(const L& layer) {
    { L::describe().type_of(layer.config()) } -> std::convertible_to<std::string_view>;
    { L::describe().defaults(0) } -> std::same_as<typename L::Config>;
};

}  // namespace roofplan::layers
