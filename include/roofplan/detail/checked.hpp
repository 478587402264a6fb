// roofplan/detail/checked.hpp — overflow-checked integer arithmetic and constexpr-friendly error text.
// Everything here works in constant evaluation; a failed check throws, which at compile time makes the
// enclosing constant expression ill-formed (so an invalid zoo model does not compile).
#pragma once

#include <roofplan/error.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>

namespace roofplan::detail {

using i64 = std::int64_t;

constexpr std::string to_text(i64 value) {
    // Digits are produced backwards into a buffer, then copied once.
    char buffer[24]{};
    std::size_t start = sizeof buffer;
    const bool negative = value < 0;
    std::uint64_t magnitude = negative ? 0 - static_cast<std::uint64_t>(value) : static_cast<std::uint64_t>(value);
    do {
        buffer[--start] = static_cast<char>('0' + magnitude % 10);
        magnitude /= 10;
    } while (magnitude != 0);
    if (negative) buffer[--start] = '-';
    return std::string(buffer + start, sizeof buffer - start);
}

constexpr std::string to_text(std::string_view text) { return std::string(text); }
constexpr std::string to_text(const char* text) { return std::string(text); }
constexpr std::string to_text(const std::string& text) { return text; }
constexpr std::string to_text(int value) { return to_text(static_cast<i64>(value)); }
/// A field reference stays a reference in the message (Error::what() and the front ends write it out).
constexpr std::string to_text(FieldRef field) {
    std::string out(1, field_open);
    out += field.name;
    out += field_close;
    return out;
}

/// Concatenates strings and integers: cat("layer", 3, ".conv") == "layer3.conv".
template <class... Parts>
constexpr std::string cat(const Parts&... parts) {
    std::string out;
    ((out += to_text(parts)), ...);
    return out;
}

/// Throws roofplan::Error with the concatenated message (about the first field it refers to, if any).
template <class... Parts>
[[noreturn]] constexpr void fail(const Parts&... parts) {
    throw roofplan::Error(cat(parts...));
}

/// Throws roofplan::Error about `field` with the concatenated message.
template <class... Parts>
[[noreturn]] constexpr void fail_about(std::string_view field, const Parts&... parts) {
    throw roofplan::Error(cat(parts...), std::string(field));
}

/// Out-of-line error path of the checked operations (keeps the hot path small).
[[noreturn]] constexpr void overflow(std::string_view what, i64 a, i64 b, char op) {
    if (a < 0 || b < 0) fail("internal error: negative operand in ", what);
    fail(what, " overflows 64 bits (", a, op == '*' ? " x " : " + ", b, "); the shape is too large to count");
}

/// a * b for non-negative operands, or an error naming what overflowed.
constexpr i64 mul(i64 a, i64 b, std::string_view what = "count") {
    i64 product = 0;
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
    if (!std::is_constant_evaluated()) {  // the fast path; nvcc's front end rejects it in constant evaluation
        if (__builtin_mul_overflow(a, b, &product) || (a | b) < 0) [[unlikely]]
            overflow(what, a, b, '*');
        return product;
    }
#endif
    if (a < 0 || b < 0 || (a != 0 && b > std::numeric_limits<i64>::max() / a)) overflow(what, a, b, '*');
    product = a * b;
    return product;
}

template <class... Rest>
constexpr i64 mul(i64 a, i64 b, i64 c, Rest... rest) {
    if constexpr (sizeof...(rest) == 0) {
        return mul(mul(a, b), c);
    } else {
        return mul(mul(a, b), c, rest...);
    }
}

constexpr i64 add(i64 a, i64 b, std::string_view what = "count") {
    i64 sum = 0;
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__CUDACC__)
    if (!std::is_constant_evaluated()) {
        if (__builtin_add_overflow(a, b, &sum) || (a | b) < 0) [[unlikely]]
            overflow(what, a, b, '+');
        return sum;
    }
#endif
    if (a < 0 || b < 0 || b > std::numeric_limits<i64>::max() - a) overflow(what, a, b, '+');
    sum = a + b;
    return sum;
}

/// Requires value >= 1; `layer` and `field` name the offending option in the message.
constexpr void require_positive(i64 value, std::string_view layer, std::string_view field) {
    if (value < 1) fail(layer, ": ", field, " must be a positive integer, got ", value);
}

constexpr void require_non_negative(i64 value, std::string_view layer, std::string_view field) {
    if (value < 0) fail(layer, ": ", field, " must be >= 0, got ", value);
}

using roofplan::require_batch;  // (public: roofplan/error.hpp)

}  // namespace roofplan::detail
