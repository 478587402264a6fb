// roofplan/detail/suggest.hpp — case-insensitive id matching and "did you mean" suggestions.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan::detail {

constexpr char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

constexpr bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

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

/// The candidates closest to `wanted` (edit distance ≤ max(2, |wanted|/3), or sharing a prefix/substring),
/// best first, at most `limit`.
template <class Range>
std::vector<std::string> close_matches(std::string_view wanted, const Range& candidates, std::size_t limit = 5) {
    std::vector<std::pair<std::size_t, std::string>> scored;
    std::string low(wanted);
    for (char& c : low) c = lower(c);
    const std::size_t threshold = std::max<std::size_t>(2, wanted.size() / 3);
    for (const auto& candidate : candidates) {
        const std::string_view name(candidate);
        std::string cand(name);
        for (char& c : cand) c = lower(c);
        std::size_t d = edit_distance(low, cand);
        const bool related = !low.empty() && (cand.find(low) != std::string::npos || low.find(cand) != std::string::npos);
        if (related) d = std::min<std::size_t>(d, 1);
        if (d <= threshold) scored.emplace_back(d, std::string(name));
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::string> out;
    for (std::size_t i = 0; i < scored.size() && i < limit; ++i) out.push_back(scored[i].second);
    return out;
}

}  // namespace roofplan::detail
