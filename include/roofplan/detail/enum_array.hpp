// roofplan/detail/enum_array.hpp — the dependency-free half of roofplan/enum_names.hpp: the name table an enum
// specialises (EnumNames), the generic to_string and enum_values over it, and EnumArray, a fixed array indexed by
// the enum instead of a bare integer.  No dependencies beyond the standard library: headers the CUDA programs
// include under nvcc (system/collective_kind.hpp) name their enums with it.  Parsing names, with its errors, is in
// roofplan/enum_names.hpp.
//
//   EnumArray<LinkKind, double> latency{{1e-6, 1e-6, 2.5e-6, 3e-6, 10e-6}};
//   latency[LinkKind::pcie] = 2e-6;   // latency[2] does not compile
//
// The enumerators must be 0, 1, ..., N-1 (as roofplan's enums are); an EnumArray is an aggregate, so it is a
// literal type and initialises like std::array.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <string_view>
#include <type_traits>

namespace roofplan {

/// Another name an enum value answers to when parsed ("fp16" for Precision::amp_fp16).
template <class E>
struct EnumAlias {
    std::string_view name;
    E value;
};

/// The name table of an enum (specialise it; see roofplan/enum_names.hpp).  `what`, when given, names the enum in
/// messages ("data-parallel mode"); else `field` does.  `notes`, when given, says what each name means in the list
/// of accepted names ("ddp (DistributedDataParallel)").
template <class E>
struct EnumNames;

/// An enum with a name table.
template <class E>
concept NamedEnum = std::is_enum_v<E> && requires {
    { EnumNames<E>::field } -> std::convertible_to<std::string_view>;
    EnumNames<E>::names.size();
};

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

/// A fixed-size array indexed by an enum's values: `EnumArray<Phase, units::seconds> time; time[Phase::forward]`.
template <NamedEnum E, class T>
struct EnumArray {
    std::array<T, enum_count<E>> values{};

    [[nodiscard]] constexpr T& operator[](E e) { return values[static_cast<std::size_t>(e)]; }
    [[nodiscard]] constexpr const T& operator[](E e) const { return values[static_cast<std::size_t>(e)]; }
    [[nodiscard]] static constexpr std::size_t size() { return enum_count<E>; }
    constexpr void fill(const T& value) { values.fill(value); }
    [[nodiscard]] constexpr auto begin() { return values.begin(); }
    [[nodiscard]] constexpr auto end() { return values.end(); }
    [[nodiscard]] constexpr auto begin() const { return values.begin(); }
    [[nodiscard]] constexpr auto end() const { return values.end(); }
    [[nodiscard]] constexpr bool operator==(const EnumArray& other) const
        requires std::equality_comparable<T>
    {
        return values == other.values;
    }
};

}  // namespace roofplan
