// roofplan/detail/fixed_string.hpp — a fixed-capacity string usable in constant evaluation.
// (Layer and model names live here rather than in std::string: GCC 12's constexpr std::string cannot be
// moved between objects in constant evaluation, and fixed storage also keeps model building allocation-light.)
#pragma once

#include <roofplan/detail/checked.hpp>

#include <array>
#include <cstddef>
#include <string>
#include <string_view>

namespace roofplan {

template <std::size_t Capacity>
class FixedString {
public:
    constexpr FixedString() = default;
    constexpr FixedString(std::string_view text) { append(text); }  // NOLINT: implicit by design
    constexpr FixedString(const char* text) : FixedString(std::string_view(text)) {}  // NOLINT

    constexpr FixedString& append(std::string_view text) {
        if (size_ + text.size() > Capacity)
            detail::fail("name too long (more than ", static_cast<std::int64_t>(Capacity), " characters): ",
                         std::string(view()) + std::string(text));
        for (char ch : text) data_[size_++] = ch;
        return *this;
    }
    constexpr FixedString& append(std::int64_t value) {
        char digits[20]{};
        std::size_t n = 0;
        if (value < 0) detail::fail("FixedString: negative numbers are not used in names");
        do {
            digits[n++] = static_cast<char>('0' + value % 10);
            value /= 10;
        } while (value != 0);
        char reversed[20]{};
        for (std::size_t i = 0; i < n; ++i) reversed[i] = digits[n - 1 - i];
        return append(std::string_view(reversed, n));
    }
    constexpr FixedString& append(int value) { return append(static_cast<std::int64_t>(value)); }
    constexpr FixedString& append(const char* text) { return append(std::string_view(text)); }
    template <std::size_t N>
    constexpr FixedString& append(const FixedString<N>& other) { return append(other.view()); }

    [[nodiscard]] constexpr std::string_view view() const { return {data_.data(), size_}; }
    [[nodiscard]] std::string str() const { return std::string(view()); }
    [[nodiscard]] constexpr std::size_t size() const { return size_; }
    [[nodiscard]] constexpr bool empty() const { return size_ == 0; }
    constexpr operator std::string_view() const { return view(); }  // NOLINT: implicit by design
    constexpr bool operator==(std::string_view other) const { return view() == other; }
    template <std::size_t N>
    constexpr bool operator==(const FixedString<N>& other) const { return view() == other.view(); }

private:
    std::array<char, Capacity> data_{};
    std::size_t size_ = 0;
};

/// Concatenates names and numbers: `join<64>("layer", 3, ".conv1")`.
template <std::size_t Capacity, class... Parts>
constexpr FixedString<Capacity> join(const Parts&... parts) {
    FixedString<Capacity> out;
    (out.append(parts), ...);
    return out;
}

}  // namespace roofplan
