// roofplan/shape.hpp — per-instance tensor shapes (the batch dimension is never part of a Shape).
#pragma once

#include <roofplan/detail/checked.hpp>

#include <array>
#include <cstdint>
#include <string>

namespace roofplan {

/// A per-instance tensor shape of rank 0..4, e.g. {C, H, W} for an image feature map or {L, D} for a
/// sequence of L tokens of width D.  Example: `Shape{64, 56, 56}.elements() == 200704`.
class Shape {
public:
    static constexpr int max_rank = 4;

    constexpr Shape() = default;
    constexpr Shape(std::initializer_list<std::int64_t> dims) {
        if (dims.size() > max_rank) detail::fail("Shape: rank ", static_cast<std::int64_t>(dims.size()), " exceeds ", max_rank);
        for (std::int64_t d : dims) {
            if (d < 1) detail::fail("Shape: every dimension must be >= 1, got ", d);
            dims_[static_cast<std::size_t>(rank_++)] = d;
        }
    }

    [[nodiscard]] constexpr int rank() const { return rank_; }
    [[nodiscard]] constexpr std::int64_t operator[](int axis) const { return dims_[static_cast<std::size_t>(axis)]; }
    [[nodiscard]] constexpr std::int64_t elements() const {
        std::int64_t n = 1;
        for (int i = 0; i < rank_; ++i) n = detail::mul(n, dims_[static_cast<std::size_t>(i)], "tensor size");
        return n;
    }
    [[nodiscard]] constexpr bool operator==(const Shape& other) const {
        if (rank_ != other.rank_) return false;
        for (int i = 0; i < rank_; ++i)
            if (dims_[static_cast<std::size_t>(i)] != other.dims_[static_cast<std::size_t>(i)]) return false;
        return true;
    }
    /// "64x56x56"
    [[nodiscard]] constexpr std::string to_string() const {
        std::string out;
        for (int i = 0; i < rank_; ++i) {
            if (i) out += 'x';
            out += detail::to_text(dims_[static_cast<std::size_t>(i)]);
        }
        return out.empty() ? std::string("scalar") : out;
    }

private:
    std::array<std::int64_t, max_rank> dims_{};
    int rank_ = 0;
};

/// A height/width pair that converts from one integer for the square case: `Extent2 k = 3;` or `{1, 7}`.
struct Extent2 {
    std::int64_t h = 0;
    std::int64_t w = 0;
    constexpr Extent2() = default;
    constexpr Extent2(std::int64_t both) : h(both), w(both) {}  // NOLINT(google-explicit-constructor): by design
    constexpr Extent2(std::int64_t height, std::int64_t width) : h(height), w(width) {}
    constexpr bool operator==(const Extent2&) const = default;
};

}  // namespace roofplan
