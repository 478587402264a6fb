// roofplan/error.hpp — the exception roofplan throws, the input field it is about, and "did you mean" suggestions.
//
// Every invalid descriptor, shape, id, option or file makes roofplan throw `roofplan::Error` (a
// std::invalid_argument): `what()` says what was wrong and what is accepted, `field()` names the input it is about
// ("batch", "precision", "device", "nodes", ...; empty when it is about no one input).  A message may refer to other
// inputs by field too; `what()` writes them as their field names, and a front end writes them as it calls them:
//
//     try { (void)roofplan::find_device(name); }
//     catch (const roofplan::Error& e) {
//         std::cerr << e.message([](std::string_view f) { return "--" + std::string(f); }) << '\n';  // a CLI
//     }
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace roofplan {

/// A reference to an input field inside an error message (see `Error`): `field_ref("dataset")`.
struct FieldRef {
    std::string_view name;
};
constexpr FieldRef field_ref(std::string_view name) { return {name}; }

namespace detail {
inline constexpr char field_open = '\x1e';   ///< starts a field reference inside a message template
inline constexpr char field_close = '\x1f';  ///< ends it
}  // namespace detail

/// The exception roofplan throws for invalid descriptors, shapes, ids, options and files.
class Error : public std::invalid_argument {
public:
    /// `text` may hold field references (written by `detail::cat(field_ref("x"))`); `field` defaults to the first.
    explicit Error(const std::string& text, std::string field = {})
        : std::invalid_argument(render(text, [](std::string_view f) { return std::string(f); })),
          template_(text), field_(std::move(field)) {
        if (field_.empty()) field_ = first_field(text);
    }

    /// The input the error is about ("batch", "precision", ...), or empty.
    [[nodiscard]] const std::string& field() const noexcept { return field_; }

    /// The message with every field reference written as `name_of(field)` returns it (what() writes the fields'
    /// own names).
    template <class NameOf>
    [[nodiscard]] std::string message(NameOf&& name_of) const {
        return render(template_, name_of);
    }

private:
    template <class NameOf>
    static std::string render(std::string_view text, NameOf&& name_of) {
        std::string out;
        for (std::size_t i = 0; i < text.size();) {
            const std::size_t open = text.find(detail::field_open, i);
            const std::size_t close = open == std::string_view::npos ? open : text.find(detail::field_close, open);
            if (close == std::string_view::npos) {
                out += text.substr(i);
                break;
            }
            out += text.substr(i, open - i);
            out += name_of(text.substr(open + 1, close - open - 1));
            i = close + 1;
        }
        return out;
    }
    static std::string first_field(std::string_view text) {
        const std::size_t open = text.find(detail::field_open);
        const std::size_t close = open == std::string_view::npos ? open : text.find(detail::field_close, open);
        return close == std::string_view::npos ? std::string() : std::string(text.substr(open + 1, close - open - 1));
    }

    std::string template_;
    std::string field_;
};

/// Every entry point that takes a batch size checks it: an Error about "batch" unless batch >= 1.
constexpr void require_batch(std::int64_t batch) {
    if (batch < 1) throw Error("batch must be a positive integer, got " + std::to_string(batch), "batch");
}

/// The former name of `Error` (kept: code that catches roofplan::invalid_argument keeps working).
using invalid_argument = Error;

namespace detail {

constexpr char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

/// Levenshtein distance, case-insensitive.
inline std::size_t edit_distance(std::string_view a, std::string_view b) {
    std::vector<std::size_t> row(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        std::size_t diagonal = row[0];
        row[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            const std::size_t above = row[j];
            row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1)});
            diagonal = above;
        }
    }
    return row[b.size()];
}

}  // namespace detail

/// The candidates closest to `wanted` (edit distance ≤ max(2, |wanted|/3), or sharing a prefix/substring),
/// best first, at most `limit`.
template <class Range>
std::vector<std::string> close_matches(std::string_view wanted, const Range& candidates, std::size_t limit = 5) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    std::string low(wanted);
    for (char& c : low) c = detail::lower(c);
    const std::size_t threshold = std::max<std::size_t>(2, wanted.size() / 3);
    for (const auto& candidate : candidates) {
        const std::string_view name(candidate);
        std::string cand(name);
        for (char& c : cand) c = detail::lower(c);
        std::size_t d = detail::edit_distance(low, cand);
        const bool related = !low.empty() && (cand.find(low) != std::string::npos || low.find(cand) != std::string::npos);
        if (related) d = std::min<std::size_t>(d, 1);
        if (d <= threshold) scored.emplace_back(d, std::string(name));
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(scored[i].second);
    return out;
}

/// The one "did you mean" phrase: "did you mean resnet50?", "did you mean h100 or h200?" (the closest `limit`
/// candidates joined by `separator`, each between `quote`s), or "" when none is close.
template <class Range>
std::string did_you_mean(std::string_view wanted, const Range& candidates, std::size_t limit = 3,
                         std::string_view separator = " or ", std::string_view quote = "") {
    const std::vector<std::string> close = close_matches(wanted, candidates, limit);
    if (close.empty()) return {};
    std::string out = "did you mean ";
    for (std::size_t i = 0; i < close.size(); ++i) {
        if (i) out += separator;
        out += quote;
        out += close[i];
        out += quote;
    }
    return out + "?";
}

}  // namespace roofplan
