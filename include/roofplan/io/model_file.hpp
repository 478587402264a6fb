// roofplan/io/model_file.hpp — a model from where a front end names it: a zoo id, or a file whose type (by its
// extension) says how to read it (.json: roofplan-model/1; .onnx: the ONNX importer, when built with it).
//
//     const io::LoadedModel m = io::load_model({.model_file = "net.json"});
//     const io::LoadedModel r = io::load_model({.model = "bert-base", .seq = 384});
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/detail/suggest.hpp>
#include <roofplan/io/model_json.hpp>
#include <roofplan/models/zoo.hpp>
#if defined(ROOFPLAN_HAS_ONNX)
#include <roofplan/io/onnx.hpp>
#endif

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace roofplan::io {

/// Where a model comes from: exactly one of a zoo id and a file, and the sizes to build it for.
struct ModelSource {
    std::string model;                ///< zoo id
    std::string model_file;           ///< .onnx or .json (roofplan-model/1)
    bool strict = false;              ///< ONNX: unsupported operators are an error
    std::vector<std::string> inputs;  ///< ONNX: names of the graph inputs that carry data
    std::int64_t seq = 0;             ///< 0: the model's default (zoo) or the file's shapes
    std::int64_t image_size = 0;      ///< zoo CNNs only
};

/// An operator the ONNX importer left out (not counted), as many times as it occurs.
struct SkippedOperator {
    std::string op_type;
    std::int64_t count = 0;
    std::string first_node;
    std::string reason;
};

/// A model ready to predict: the model, its id for reports and its size (sequence length or image size).
struct LoadedModel {
    Model model;
    std::string id;
    std::int64_t size = 0;
    bool uses_seq = false;
    std::string source;  ///< "zoo", "onnx" or "json"
    /// ONNX: what the importer did.
    std::vector<SkippedOperator> unsupported;
    std::int64_t views_skipped = 0;
    std::int64_t constant_nodes_skipped = 0;
    std::int64_t nodes_fused = 0;
    std::vector<std::string> notes;
};

namespace detail {

inline bool has_extension(std::string_view file, std::string_view extension) {
    return file.size() >= extension.size() &&
           roofplan::detail::iequals(file.substr(file.size() - extension.size()), extension);
}

inline void load_onnx(const ModelSource& s, LoadedModel& out) {
#if defined(ROOFPLAN_HAS_ONNX)
    OnnxOptions options;
    options.seq = s.seq;
    options.strict = s.strict;
    options.data_inputs = s.inputs;
    OnnxImport imported = import_onnx(s.model_file, options);
    if (s.seq != 0 && !imported.seq_used)
        roofplan::detail::fail(field_ref("seq"), " ", s.seq, " given, but ", s.model_file,
                               " has no dynamic sequence dimension (its shapes are fixed)");
    out.model = std::move(imported.model);
    out.source = "onnx";
    for (const UnsupportedOp& u : imported.unsupported)
        out.unsupported.push_back({u.op_type, u.count, u.first_node, u.reason});
    out.views_skipped = imported.views;
    out.constant_nodes_skipped = imported.constant_nodes;
    out.nodes_fused = imported.fused;
    out.notes = imported.notes;
#else
    (void)out;
    roofplan::detail::fail_about("model_file", "this roofplan was built without ONNX support (install Debian "
                               "libonnx-dev and rebuild); ", s.model_file, " cannot be read");
#endif
}

inline LoadedModel load_file(const ModelSource& s) {
    if (s.image_size != 0)
        roofplan::detail::fail(field_ref("image_size"), " applies to zoo models; the shapes of ", field_ref("model_file"),
                               " ", s.model_file, " are fixed by the file");
    LoadedModel out;
    if (has_extension(s.model_file, ".json")) {
        if (s.seq != 0)
            roofplan::detail::fail(field_ref("seq"), " applies to zoo models and dynamic ONNX dimensions; the shapes of ",
                                   s.model_file, " are fixed by the file");
        if (s.strict || !s.inputs.empty())
            roofplan::detail::fail(field_ref("strict"), " and ", field_ref("input"), " apply to ONNX files, not to ",
                                   s.model_file);
        out.model = load_model_json(s.model_file);
        out.source = "json";
    } else if (has_extension(s.model_file, ".onnx")) {
        load_onnx(s, out);
        check_model_size(out.model, s.model_file);
    } else {
        roofplan::detail::fail(field_ref("model_file"), " ", s.model_file,
                               ": unknown file type; accepted: .onnx (ONNX) or .json (roofplan-model/1)");
    }
    out.id = std::string(out.model.id());
    // Reported as an image size for a square C×H×W input, else as the sequence length (the first axis).
    const Shape in = out.model.input_shape();
    const bool image = s.seq == 0 && in.rank() == 3 && in[1] == in[2];
    out.uses_seq = !image;
    out.size = s.seq != 0 ? s.seq : (image ? in[1] : in[0]);
    return out;
}

}  // namespace detail

/// The model `s` names (exactly one of a zoo id and a file), built for its sequence length or image size.
inline LoadedModel load_model(const ModelSource& s) {
    if (s.model.empty() && s.model_file.empty())
        roofplan::detail::fail("give a model: ", field_ref("model"), " ID (see `roofplan models`) or ",
                               field_ref("model_file"), " net.onnx|net.json");
    if (!s.model.empty() && !s.model_file.empty())
        roofplan::detail::fail("give ", field_ref("model"), " or ", field_ref("model_file"), ", not both");
    if (!s.model_file.empty()) return detail::load_file(s);
    if (s.strict || !s.inputs.empty())
        roofplan::detail::fail(field_ref("strict"), " and ", field_ref("input"), " apply to ONNX files (",
                               field_ref("model_file"), "), not to zoo models");
    const auto& entry = models::find_model(s.model);
    LoadedModel out;
    out.model = entry.build({.seq = s.seq, .image_size = s.image_size});
    out.id = std::string(entry.id);
    out.uses_seq = entry.uses_seq();
    out.source = "zoo";
    const std::int64_t given = entry.uses_seq() ? s.seq : s.image_size;
    out.size = given ? given : entry.default_size;
    return out;
}

}  // namespace roofplan::io
