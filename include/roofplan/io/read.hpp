// roofplan/io/read.hpp — how every file roofplan reads becomes JSON, with the limits every reader shares: at most
// `max_file_bytes` read (a device such as /dev/zero is cut off there), nesting at most `max_depth` deep, numbers
// that fit a double, and objects whose keys a reader names (an unknown key is an error with the closest accepted
// one).  Errors name the file, the JSON path and the limit or what is accepted (docs/model-files.md, "Limits").
//
//     const nlohmann::json j = roofplan::io::parse(roofplan::io::read_text("devices.json"), "devices.json");
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/io/file.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan::io {

/// Fails when JSON text nests objects and arrays deeper than ReadLimits::max_depth (a linear scan before parsing:
/// nlohmann's parser recurses per level, and its callback parser takes quadratic time on long arrays).
inline void check_depth(std::string_view text, const std::string& file) {
    constexpr int limit = ReadLimits::max_depth;
    int depth = 0;
    bool in_string = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '[' || c == '{') {
            if (++depth > limit)
                roofplan::detail::fail(file, ": nested deeper than ", limit, " levels (the limit of a file roofplan reads)");
        } else if (c == ']' || c == '}') {
            --depth;
        }
    }
}

/// Parses JSON text; nesting deeper than ReadLimits::max_depth, numbers beyond a double's range and invalid JSON
/// are errors naming `file`.
inline nlohmann::json parse(const std::string& text, const std::string& file) {
    check_depth(text, file);
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::out_of_range& e) {  // 1e400
        roofplan::detail::fail(file, ": a number out of range (", e.what(), "); numbers must fit a double");
    } catch (const nlohmann::json::exception& e) {
        roofplan::detail::fail(file, ": not valid JSON (", e.what(), ")");
    }
}

/// A value as short text for messages (at most 60 characters; never recursive beyond the depth limit).
inline std::string shorten(const nlohmann::json& v) {
    std::string s = v.dump(-1, ' ', true, nlohmann::json::error_handler_t::replace);
    if (s.size() > 60) s = s.substr(0, 57) + "...";
    return s;
}

/// Fails on a key of `object` that is not in `accepted`: "<where>.<key>: unknown field; did you mean '...'?
/// Accepted: ...".  `where` is the object's place ("file: .devices[3]").
template <class Names>
void reject_unknown_fields(const nlohmann::json& object, const std::string& where, const Names& accepted) {
    if (!object.is_object()) return;
    for (auto it = object.begin(); it != object.end(); ++it) {
        bool known = false;
        for (std::string_view a : accepted) known = known || a == it.key();
        if (known) continue;
        std::string message = where + "." + it.key() + ": unknown field";
        const std::string close = roofplan::did_you_mean(it.key(), accepted, 1, "", "'");
        if (close.empty()) {
            message += '.';
        } else {
            message += "; ";
            message += close;
        }
        message += " Accepted:";
        for (std::string_view a : accepted) {
            message += ' ';
            message += a;
        }
        roofplan::detail::fail(message);
    }
}
inline void reject_unknown_fields(const nlohmann::json& object, const std::string& where,
                                  std::initializer_list<std::string_view> accepted) {
    reject_unknown_fields(object, where, std::vector<std::string_view>(accepted));
}

/// Fails unless `text` is free of control characters (they would reach terminals and reports as they are).
inline void require_printable(std::string_view text, const std::string& where) {
    for (unsigned char c : text)
        if (c < 0x20 || c == 0x7f)
            roofplan::detail::fail(where, ": contains a control character (code ", static_cast<int>(c),
                                   "); names and text fields must be printable");
}

}  // namespace roofplan::io
