// roofplan/detail/suggest.hpp — case-insensitive id matching (the suggestions are public: roofplan/error.hpp).
#pragma once

#include <roofplan/error.hpp>

#include <string_view>

namespace roofplan::detail {

constexpr bool iequals(std::string_view a, std::string_view b) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (lower(a[i]) != lower(b[i])) return false;
    return true;
}

using roofplan::close_matches;

}  // namespace roofplan::detail
