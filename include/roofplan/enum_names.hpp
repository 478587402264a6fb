// roofplan/enum_names.hpp — one name table per enum, and the generic to_string / parse_enum / enum_values over it
// (the table, to_string, enum_values and EnumArray are in detail/enum_array.hpp, which has no dependencies).
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
#include <roofplan/detail/enum_array.hpp>
#include <roofplan/error.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <type_traits>

namespace roofplan {

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

}  // namespace roofplan
