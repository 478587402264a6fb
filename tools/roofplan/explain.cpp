// tools/roofplan/explain.cpp — `roofplan explain`: one layer's arithmetic step by step (the steps: explain_cmd.hpp),
// printed as text or JSON.
#include "commands.hpp"
#include "explain_cmd.hpp"

#include <iostream>
#include <variant>

namespace roofplan::cli {
namespace {

struct ExplainOptions {
    DeviceOptions devices;
    std::string layer;       ///< a layer spec
    std::string model;       ///< or a zoo model ...
    std::string layer_name;  ///< ... and one of its layers
    std::int64_t seq = 0;
    std::int64_t image_size = 0;
    std::int64_t batch = 1;
    std::string precision = "fp32";
    std::string device;
    std::string pass = "forward";
    std::string profile;
    bool json = false;
};

void add_explain_options(CLI::App* app, ExplainOptions& o) {
    add_device_options(app, o.devices);
    app->add_option("--layer,-l", o.layer,
                    "Layer spec, e.g. \"conv2d cin=64 cout=64 k=3 s=1 p=1 h=56 w=56\"; kinds: " + io::layer_spec_kinds() +
                        " (a wrong key lists the accepted ones)");
    app->add_option("--model,-m", o.model, "Zoo model whose layer to explain (with --layer-name)");
    app->add_option("--layer-name,-n", o.layer_name, "Layer of --model, e.g. layer1.0.conv2 (see `roofplan inspect`)");
    app->add_option("--seq,-s", o.seq, "Sequence length (with --model)")->check(integer_in(1, OptionLimits::max_seq));
    app->add_option("--image-size", o.image_size, "Square input resolution (with --model)")
        ->check(integer_in(1, OptionLimits::max_image_size));
    app->add_option("--batch,-b", o.batch, "Batch size B (default 1)")->check(positive_count());
    app->add_option("--precision,-p", o.precision, "fp32, tf32, amp-fp16, amp-bf16 or int8 (element width, math unit)")
        ->check(one_of<Precision>());
    app->add_option("--device,-d", o.device, "Device for the roofline verdict (see `roofplan devices`)");
    app->add_option("--pass", o.pass, "forward (default), backward (data + weight gradients) or all");
    app->add_option("--profile", o.profile, "Calibrated efficiency profile for the engine's estimate");
    app->add_flag("--json", o.json, "Print JSON: every step's formula, numbers and value (there is no --csv: the "
                                    "explanation is a derivation, not a table)");
}

std::string render_explanation(const Explanation& e) {
    std::string out = "explain: " + e.title + "\n" + "batch " + std::to_string(e.batch) + ", " + e.precision + ", " +
                      explain_detail::pass_label(e.pass) + "\n";
    std::string section;
    for (const layers::DerivationStep& s : e.steps) {
        if (s.section != section) {
            section = s.section;
            out += "\n" + section + "\n";
        }
        std::string line = "  " + s.symbol;
        const std::size_t width = display_width(s.symbol);  // "Γ" and "QKᵀ" align like ASCII
        line += std::string(width < 16 ? 16 - width : 1, ' ') +
                (std::holds_alternative<std::string>(s.value) ? "  " : "= ");
        if (!s.formula.empty()) line += s.formula + " = ";
        if (!s.substituted.empty()) line += s.substituted + " = ";
        line += explain_detail::value_text(s);
        if (!s.unit.empty()) line += " " + s.unit;
        if (!s.note.empty()) line += "   (" + s.note + ")";
        out += line + "\n";
    }
    if (!e.verdict_lines.empty()) {
        out += "\nroofline verdict\n";
        for (const std::string& l : e.verdict_lines) out += "  " + l + "\n";
    } else {
        out += "\n(give --device D for the roofline verdict)\n";
    }
    return out;
}

nlohmann::json explanation_json(const Explanation& e) {
    nlohmann::json steps = nlohmann::json::array();
    for (const layers::DerivationStep& s : e.steps) {
        const nlohmann::json value = std::visit([](const auto& v) { return nlohmann::json(v); }, s.value);
        steps.push_back({{"section", s.section}, {"id", s.id}, {"symbol", s.symbol}, {"formula", s.formula},
                         {"substituted", s.substituted}, {"value", value}, {"unit", s.unit}, {"note", s.note}});
    }
    return {{"layer", e.title}, {"kind", e.kind},  {"batch", e.batch},  {"precision", e.precision},
            {"pass", e.pass},   {"steps", steps}, {"verdict", e.verdict}};
}

/// What the layer keeps for its backward in an eager PyTorch training step (memory/memory.hpp), as steps.
void add_saved_tensors(Explanation& e, const Model& m, std::size_t node, std::int64_t batch, Precision precision,
                       const Device* device) {
    memory::MemoryRequest r;
    r.batch = batch;
    r.precision = precision;
    r.runtime = Runtime::eager;
    const memory::DeviceMemory on = memory::DeviceMemory::of(device ? *device : find_device("h100-sxm"));
    const std::vector<memory::SavedTensorInfo> saved = memory::MemoryModel(m).saved_tensors(r, on, node);
    const std::string section = "saved for backward (eager PyTorch training, " + std::string(to_string(precision)) + ")";
    std::int64_t total = 0;
    for (std::size_t i = 0; i < saved.size(); ++i) {
        const memory::SavedTensorInfo& s = saved[i];
        std::string what = s.value == memory::no_node ? "its own tensor: a cast copy, statistics, a mask or indices"
                           : s.value == 0         ? "the batch"
                           : s.value == node + 1  ? "its output"
                                                  : "the output of " + std::string(m.nodes()[s.value - 1].name.view());
        if (s.shared > 0) what += "; also kept by " + std::to_string(s.shared) + " other layer" + (s.shared > 1 ? "s" : "");
        e.steps.push_back({section, "saved_" + std::to_string(i), "S" + std::to_string(i + 1), "", "", s.bytes, "",
                           "B", what + ", " + grouped(s.bytes_per_sample) + " B per sample"});
        if (s.shared == 0) total += s.bytes;
    }
    if (saved.empty())
        e.steps.push_back({section, "saved_none", "S", "", "", std::string("nothing"), "", "", "no backward input"});
    else
        e.steps.push_back({section, "saved_own", "ΣS", "", "", total, "", "B",
                           "the tensors no other layer keeps: what this layer alone adds to the peak"});
}

int run_explain(const ExplainOptions& o) {
    const Precision precision = parse_precision(o.precision);
    require_batch(o.batch);
    const DeviceCatalog catalog = o.devices.catalog();
    const Device* device = o.device.empty() ? nullptr : &catalog.find(o.device);
    std::optional<EfficiencyProfile> profile;
    if (!o.profile.empty()) {
        if (device == nullptr) fail("--profile needs --device");
        profile = io::load_profile(o.profile, *device);
    }
    Explanation e;
    if (!o.layer.empty()) {
        if (!o.model.empty() || !o.layer_name.empty())
            fail("give --layer SPEC or --model M --layer-name NAME, not both");
        e = explain_layer(io::parse_layer_spec(o.layer), o.layer, o.batch, precision, o.pass, true, 1, device,
                          profile ? &*profile : nullptr);
    } else {
        if (o.model.empty() || o.layer_name.empty())
            fail("give --layer \"conv2d cin=64 cout=64 k=3 s=1 p=1 h=56 w=56\" or --model M "
                                   "--layer-name NAME (names: `roofplan inspect --model M`)");
        const auto& entry = models::find_model(o.model);
        const Model m = entry.build({.seq = o.seq, .image_size = o.image_size});
        const Node* node = nullptr;
        std::vector<std::string> names;
        for (const Node& candidate : m.nodes()) {
            if (candidate.name.view() == o.layer_name) node = &candidate;
            names.emplace_back(candidate.name.view());
        }
        if (node == nullptr) {
            const std::string hint = did_you_mean(o.layer_name, names, 3, ", ");
            fail("model '", entry.id, "' has no layer '", o.layer_name, "'", hint.empty() ? "" : "; " + hint,
                 "; list them with `roofplan inspect --model ", entry.id, "`");
        }
        e = explain_layer(node->layer, std::string(entry.id) + " " + o.layer_name + " (" + std::string(type_label(node->layer)) + ")",
                          o.batch, precision, o.pass, node->needs_input_gradient, node->repeat, device,
                          profile ? &*profile : nullptr);
        if (precision != Precision::int8)
            add_saved_tensors(e, m, static_cast<std::size_t>(node - m.nodes().data()), o.batch, precision, device);
    }
    if (o.json) std::cout << explanation_json(e).dump(2) << '\n';
    else std::cout << render_explanation(e);
    return 0;
}

}  // namespace

const Command explain_command = command<ExplainOptions>(
    "explain", "Teach one layer's arithmetic step by step: shapes, params, MACs, FLOPs, bytes, intensity, Γ, verdict",
    add_explain_options, run_explain);

}  // namespace roofplan::cli
