// tools/roofplan/model_source.hpp — where a command's model comes from: the zoo (--model ID) or a file
// (--model-file net.onnx | net.json), exactly one of them.
#pragma once

#include <roofplan/io/model_json.hpp>
#include <roofplan/models/zoo.hpp>
#if defined(ROOFPLAN_HAS_ONNX)
#include <roofplan/io/onnx.hpp>
#endif

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <iostream>
#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace roofplan::cli {

/// The model options every model-aware command shares.
struct ModelSource {
    std::string model;       ///< zoo id
    std::string model_file;  ///< .onnx or .json (roofplan-model/1)
    bool strict = false;     ///< ONNX: unsupported operators are an error
    std::vector<std::string> inputs;  ///< ONNX: names of the graph inputs that carry data
};

/// Adds --model/-m (required unless --model-file), --model-file, --strict and --input to `app`, bound to the
/// given fields (commands keep them in their own option structs).
inline void add_model_source(CLI::App* app, std::string& model, std::string& model_file, bool& strict,
                             std::vector<std::string>& inputs) {
    auto* zoo = app->add_option("--model,-m", model, "Model id (see `roofplan models`)");
    auto* file = app->add_option("--model-file", model_file,
                                 "Model file instead of --model: .onnx (ONNX graph) or .json (roofplan-model/1, "
                                 "see docs/model-files.md)");
    zoo->excludes(file);
    file->excludes(zoo);
    app->add_flag("--strict", strict, "ONNX: fail on operators roofplan cannot count instead of reporting them");
    app->add_option("--input", inputs, "ONNX: a graph input that carries data (repeatable; default: detected)");
}
inline void add_model_source(CLI::App* app, ModelSource& s) {
    add_model_source(app, s.model, s.model_file, s.strict, s.inputs);
}

/// A model ready for a command: the model, its id for reports and its size (sequence length or image size).
struct LoadedModel {
    Model model;
    std::string id;
    std::int64_t size = 0;
    bool uses_seq = false;
    std::string source;                     ///< "zoo", "onnx" or "json"
    nlohmann::json import = nullptr;        ///< ONNX: what the importer did (unsupported operators, notes)
};

namespace detail {
inline bool ends_with(const std::string& s, std::string_view tail) {
    return s.size() >= tail.size() && std::equal(tail.rbegin(), tail.rend(), s.rbegin(),
                                                 [](char a, char b) { return roofplan::detail::lower(a) == roofplan::detail::lower(b); });
}

inline LoadedModel load_file(const ModelSource& s, std::int64_t seq, std::int64_t image_size) {
    if (image_size != 0)
        roofplan::detail::fail("--image-size applies to zoo models; the shapes of --model-file ", s.model_file,
                               " are fixed by the file");
    LoadedModel out;
    if (ends_with(s.model_file, ".json")) {
        if (seq != 0)
            roofplan::detail::fail("--seq applies to zoo models and dynamic ONNX dimensions; the shapes of ",
                                   s.model_file, " are fixed by the file");
        if (s.strict || !s.inputs.empty())
            roofplan::detail::fail("--strict and --input apply to ONNX files, not to ", s.model_file);
        out.model = io::load_model_json(s.model_file);
        out.source = "json";
    } else if (ends_with(s.model_file, ".onnx")) {
#if defined(ROOFPLAN_HAS_ONNX)
        io::OnnxOptions options;
        options.seq = seq;
        options.strict = s.strict;
        options.data_inputs = s.inputs;
        io::OnnxImport imported = io::import_onnx(s.model_file, options);
        if (seq != 0 && !imported.seq_used)
            roofplan::detail::fail("--seq ", seq, " given, but ", s.model_file,
                                   " has no dynamic sequence dimension (its shapes are fixed)");
        out.model = std::move(imported.model);
        out.source = "onnx";
        nlohmann::json unsupported = nlohmann::json::array();
        for (const io::UnsupportedOp& u : imported.unsupported) {
            unsupported.push_back({{"op_type", u.op_type}, {"count", u.count}, {"first_node", u.first_node},
                                   {"reason", u.reason}});
            std::cerr << "roofplan: warning: " << s.model_file << ": " << u.count << "x " << u.op_type
                      << " not counted (" << u.reason << "; first: '" << u.first_node << "'); --strict makes this an error\n";
        }
        out.import = {{"unsupported", std::move(unsupported)}, {"views_skipped", imported.views},
                      {"constant_nodes_skipped", imported.constant_nodes}, {"nodes_fused", imported.fused},
                      {"notes", imported.notes}};
#else
        roofplan::detail::fail("this roofplan was built without ONNX support (install Debian libonnx-dev and "
                               "rebuild); ", s.model_file, " cannot be read");
#endif
    } else {
        roofplan::detail::fail("--model-file ", s.model_file,
                               ": unknown file type; accepted: .onnx (ONNX) or .json (roofplan-model/1)");
    }
    out.id = std::string(out.model.id());
    // Reported as an image size for a square C×H×W input, else as the sequence length (the first axis).
    const Shape in = out.model.input_shape();
    const bool image = seq == 0 && in.rank() == 3 && in[1] == in[2];
    out.uses_seq = !image;
    out.size = seq != 0 ? seq : (image ? in[1] : in[0]);
    return out;
}
}  // namespace detail

/// The model `s` names (exactly one of --model / --model-file), built for `seq` / `image_size`.
/// A file is read once per process (compare and scaling resolve the model for every system).
inline LoadedModel load_model(const ModelSource& s, std::int64_t seq, std::int64_t image_size) {
    if (s.model.empty() && s.model_file.empty())
        roofplan::detail::fail("give a model: --model ID (see `roofplan models`) or --model-file net.onnx|net.json");
    if (!s.model.empty() && !s.model_file.empty())
        roofplan::detail::fail("give --model or --model-file, not both");
    if (!s.model_file.empty()) {
        static std::map<std::tuple<std::string, std::int64_t, bool, std::vector<std::string>>, LoadedModel> cache;
        const auto key = std::make_tuple(s.model_file, seq, s.strict, s.inputs);
        if (const auto it = cache.find(key); it != cache.end()) return it->second;
        return cache.emplace(key, detail::load_file(s, seq, image_size)).first->second;
    }
    if (s.strict || !s.inputs.empty())
        roofplan::detail::fail("--strict and --input apply to ONNX files (--model-file), not to zoo models");
    const auto& entry = models::find_model(s.model);
    LoadedModel out{entry.build({.seq = seq, .image_size = image_size}), std::string(entry.id), 0, entry.uses_seq(),
                    "zoo", nullptr};
    out.size = entry.uses_seq() ? (seq ? seq : entry.default_size) : (image_size ? image_size : entry.default_size);
    return out;
}

}  // namespace roofplan::cli
