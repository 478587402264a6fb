// roofplan/detail/enum_array.hpp — a fixed array indexed by an enumeration instead of a bare integer.
//
//   EnumArray<LinkKind, double, 5> latency{{1e-6, 1e-6, 2.5e-6, 3e-6, 10e-6}};
//   latency[LinkKind::pcie] = 2e-6;   // latency[2] does not compile
//
// The enumerators must be 0, 1, ..., N-1 (as roofplan's enums are); an aggregate, so it is a literal type and
// initialises like std::array.
#pragma once

#include <array>
#include <cstddef>
#include <type_traits>

namespace roofplan {

template <class Enum, class T, std::size_t N>
struct EnumArray {
    static_assert(std::is_enum_v<Enum>, "EnumArray is indexed by an enumeration");
    std::array<T, N> values{};

    [[nodiscard]] constexpr T& operator[](Enum e) { return values[index(e)]; }
    [[nodiscard]] constexpr const T& operator[](Enum e) const { return values[index(e)]; }
    [[nodiscard]] static constexpr std::size_t size() { return N; }
    constexpr void fill(const T& value) { values.fill(value); }
    [[nodiscard]] constexpr auto begin() { return values.begin(); }
    [[nodiscard]] constexpr auto end() { return values.end(); }
    [[nodiscard]] constexpr auto begin() const { return values.begin(); }
    [[nodiscard]] constexpr auto end() const { return values.end(); }
    friend constexpr bool operator==(const EnumArray&, const EnumArray&) = default;

private:
    static constexpr std::size_t index(Enum e) { return static_cast<std::size_t>(e); }
};

}  // namespace roofplan
