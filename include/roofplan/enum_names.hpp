// roofplan/enum_names.hpp — one name table per enum, and the generic to_string / parse_enum / enum_values over it.
//
// An enum gets its names by specialising EnumNames next to its declaration: the field its parse errors are about,
// the names in the order of the enumerators (0, 1, 2, ...), and accepted aliases:
//
//     enum class Mode { train, infer };
//     template <> struct EnumNames<Mode> {
//         static constexpr std::string_view field = "mode";
//         static constexpr std::array<std::string_view, 2> names{"train", "infer"};
//         static constexpr std::array<EnumAlias<Mode>, 2> aliases{{{"training", Mode::train}, {"inference", Mode::infer}}};
//     };
//     to_string(Mode::infer) == "infer";  parse_enum<Mode>("training") == Mode::train;
//     parse_enum<Mode>("trian")  // Error (field "mode"): "unknown mode 'trian'; accepted: train, infer; did you mean train?"
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/error.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace roofplan {

/// Another name an enum value answers to when parsed ("fp16" for Precision::amp_fp16).
template <class E>
struct EnumAlias {
    std::string_view name;
    E value;
};

/// The name table of an enum (specialise it; see above).  `what`, when given, names the enum in messages
/// ("data-parallel mode"); else `field` does.  `notes`, when given, says what each name means in the list of
/// accepted names ("ddp (DistributedDataParallel)").
template <class E>
struct EnumNames;

/// An enum with a name table.
template <class E>
concept NamedEnum = std::is_enum_v<E> && requires {
    { EnumNames<E>::field } -> std::convertible_to<std::string_view>;
    EnumNames<E>::names.size();
};

namespace detail {
template <class E>
constexpr std::string_view enum_what() {
    if constexpr (requires { EnumNames<E>::what; }) return EnumNames<E>::what;
    else return EnumNames<E>::field;
}
template <class E>
constexpr auto enum_aliases() {
    if constexpr (requires { EnumNames<E>::aliases; }) return EnumNames<E>::aliases;
    else return std::array<EnumAlias<E>, 0>{};
}
}  // namespace detail

/// How many values an enum has.
template <NamedEnum E>
inline constexpr std::size_t enum_count = EnumNames<E>::names.size();

/// Every value of an enum, in declaration order.
template <NamedEnum E>
constexpr std::array<E, enum_count<E>> enum_values() {
    std::array<E, enum_count<E>> out{};
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<E>(i);
    return out;
}

/// The value's name ("amp-fp16"), or "unknown" for a value outside the table.
template <NamedEnum E>
constexpr std::string_view to_string(E value) {
    const auto i = static_cast<std::size_t>(value);
    return i < enum_count<E> ? EnumNames<E>::names[i] : std::string_view("unknown");
}

/// The accepted names, comma-separated, with their notes ("sgd (with momentum), adam").
template <NamedEnum E>
constexpr std::string enum_names_text() {
    std::string out;
    for (std::size_t i = 0; i < enum_count<E>; ++i) {
        if (i) out += ", ";
        out += EnumNames<E>::names[i];
        if constexpr (requires { EnumNames<E>::notes; }) {
            if (!EnumNames<E>::notes[i].empty()) {
                out += " (";
                out += EnumNames<E>::notes[i];
                out += ")";
            }
        }
    }
    return out;
}

/// The value named `name` (a name or an alias, exactly), or an Error about the enum's field that lists the accepted
/// names and suggests the closest.
template <NamedEnum E>
constexpr E parse_enum(std::string_view name) {
    for (std::size_t i = 0; i < enum_count<E>; ++i)
        if (EnumNames<E>::names[i] == name) return static_cast<E>(i);
    for (const EnumAlias<E>& alias : detail::enum_aliases<E>())
        if (alias.name == name) return alias.value;
    std::string message = detail::cat("unknown ", detail::enum_what<E>(), " '", name, "'; accepted: ");
    message += enum_names_text<E>();
    if (const std::string hint = did_you_mean(name, EnumNames<E>::names, 1); !hint.empty()) message += "; " + hint;
    detail::fail_about(EnumNames<E>::field, message);
}

/// A fixed-size array indexed by an enum's values: `EnumArray<Phase, units::seconds> time; time[Phase::forward]`.
template <NamedEnum E, class T>
struct EnumArray {
    std::array<T, enum_count<E>> values{};

    [[nodiscard]] constexpr T& operator[](E e) { return values[static_cast<std::size_t>(e)]; }
    [[nodiscard]] constexpr const T& operator[](E e) const { return values[static_cast<std::size_t>(e)]; }
    [[nodiscard]] static constexpr std::size_t size() { return enum_count<E>; }
    [[nodiscard]] constexpr auto begin() { return values.begin(); }
    [[nodiscard]] constexpr auto end() { return values.end(); }
    [[nodiscard]] constexpr auto begin() const { return values.begin(); }
    [[nodiscard]] constexpr auto end() const { return values.end(); }
    constexpr bool operator==(const EnumArray&) const = default;
};

}  // namespace roofplan
