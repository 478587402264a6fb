// roofplan/io/bounds.hpp — the bounds file of a recorded set (schema "roofplan-bounds/1"):
//   {"schema": "roofplan-bounds/1", "title": "Accuracy bars (H200)", "note": "...",
//    "bounds": [{"id": "h200.gemm.all.median", "what": "H200 GEMM, all classes: median |error|",
//                "bar": 0.10, "held": 0.15}, ...]}
// (validation/results/bounds.json holds the project's; validation/bounds.hpp judges figures against them).
#pragma once

#include <roofplan/io/json.hpp>
#include <roofplan/validation/bounds.hpp>

#include <string>

namespace roofplan::io {

/// The bounds of a document; errors name the file and the field.
inline validation::Bounds bounds_from_json(const json& j, const std::string& file) {
    if (!j.is_object()) roofplan::detail::fail(file, ": expected a bounds object");
    if (!j.contains("schema") || j.at("schema") != "roofplan-bounds/1")
        roofplan::detail::fail(file, ": .schema must be \"roofplan-bounds/1\"");
    validation::Bounds out;
    out.title = std::string(detail::text<127>(j, "title", file + ": ").view());
    const json& list = detail::field(j, "bounds", file + ": ");
    if (!list.is_array()) roofplan::detail::fail(file, ": .bounds must be an array");
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string where = file + ": .bounds[" + std::to_string(i) + "]";
        validation::Bound b;
        b.id = std::string(detail::text<127>(list[i], "id", where).view());
        b.what = std::string(detail::text<255>(list[i], "what", where).view());
        b.bar = detail::number(list[i], "bar", where);
        b.held = list[i].contains("held") ? detail::number(list[i], "held", where) : 0.0;
        if (!(b.bar >= 0) || !(b.held >= 0)) roofplan::detail::fail(where, ": bar and held must be fractions >= 0");
        out.bounds.push_back(std::move(b));
    }
    return out;
}

inline validation::Bounds load_bounds(const std::string& file) { return bounds_from_json(parse(read_text(file), file), file); }

}  // namespace roofplan::io
