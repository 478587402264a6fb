// roofplan/io/memory_report.hpp — the memory figures of an end-to-end suite report (validation/e2e/e2e_suite.py,
// tool "roofplan-e2e-suite") as validation::MemorySample records.
//
// Each result carries its case (roofplan_model, task, batch, seq, precision, optimizer, runtime, compile_mode) and
// a `memory` object: max_allocated_bytes and max_reserved_bytes (the steady steps' peaks; the *_incl_warmup_bytes
// figures also hold cuDNN's benchmark searches) and allocated_at_step_start_bytes.  Results that failed or were
// skipped are left out.  The suite runs every case in one process, so the threads holding cuBLAS workspaces are
// the report's history: two from the first training case on (the autograd engine's thread has one too), else one.
// Errors name the file and the JSON path.
#pragma once

#include <roofplan/io/json.hpp>
#include <roofplan/io/reports.hpp>
#include <roofplan/validation/memory.hpp>

#include <string>
#include <vector>

namespace roofplan::io {

inline constexpr std::string_view e2e_suite_tool = "roofplan-e2e-suite";

/// The memory samples of a suite report (a parsed document; `file` names it in errors).
inline std::vector<validation::MemorySample> memory_samples(const json& report, const std::string& file) {
    using namespace detail;
    if (!report.is_object() || string_or(report, "tool", file, "") != e2e_suite_tool)
        roofplan::detail::fail(file, ": not a ", e2e_suite_tool, " report (validation/e2e/e2e_suite.py)");
    const json& results = field(report, "results", file);
    if (!results.is_array()) roofplan::detail::fail(file, ".results: expected an array");
    std::vector<validation::MemorySample> out;
    bool trained = false;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const json& r = results[i];
        const std::string where = file + ": .results[" + std::to_string(i) + "]";
        if (!r.is_object()) roofplan::detail::fail(where, ": expected an object");
        const bool training = string_field(r, "task", where) == "train";
        trained = trained || (training && !r.contains("skipped"));
        if (r.contains("error") || r.contains("skipped") || !r.contains("memory")) continue;
        validation::MemorySample s;
        s.where = where;
        s.id = string_field(r, "id", where);
        s.model = string_field(r, "roofplan_model", where);
        s.mode = training ? Mode::train : Mode::infer;
        s.precision = parse_precision(string_field(r, "precision", where));
        if (training) s.optimizer = parse_optimizer(string_field(r, "optimizer", where));
        s.runtime = parse_runtime(string_field(r, "runtime", where));
        s.batch = whole(r, "batch", where);
        if (r.contains("seq") && !r.at("seq").is_null()) s.seq = whole(r, "seq", where);
        s.cuda_graphs = r.contains("compile_mode") && r.at("compile_mode").is_string() &&
                        r.at("compile_mode").get<std::string>() == "reduce-overhead";
        s.blas_threads = trained ? 2 : 1;
        const json& m = field(r, "memory", where);
        const std::string at = where + ".memory";
        s.max_allocated = static_cast<std::int64_t>(positive(m, "max_allocated_bytes", at));
        s.max_reserved = static_cast<std::int64_t>(positive(m, "max_reserved_bytes", at));
        s.allocated_at_start = static_cast<std::int64_t>(positive(m, "allocated_at_step_start_bytes", at));
        out.push_back(s);
    }
    return out;
}
/// The memory samples of a suite report file.
inline std::vector<validation::MemorySample> read_memory_samples(const std::string& file) {
    return memory_samples(parse(read_text(file), file), file);
}

}  // namespace roofplan::io
