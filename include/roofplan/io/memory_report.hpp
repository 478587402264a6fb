// roofplan/io/memory_report.hpp — the memory figures of an end-to-end suite report (validation/e2e/e2e_suite.py,
// tool "roofplan-e2e-suite") as validation::MemorySample records.
//
// Each result carries its case (roofplan_model, task, batch, seq, precision, optimizer, runtime, compile_mode) and
// a `memory` object: max_allocated_bytes and max_reserved_bytes (the steady steps' peaks; the *_incl_warmup_bytes
// figures also hold cuDNN's benchmark searches) and allocated_at_step_start_bytes.  Results that failed or were
// skipped are left out.  The suite runs every case in one process, so the threads holding cuBLAS workspaces are
// the report's history: two from the first training case on (the autograd engine's thread has one too), else one.
// A memory_bench.py report of `peaks` (validation/memory/memory_bench.py --peaks) has the same fields per case,
// each case measured in a fresh process: two threads in training, one in inference.
// Errors name the file and the JSON path.
#pragma once

#include <roofplan/io/json.hpp>
#include <roofplan/io/reports.hpp>
#include <roofplan/validation/memory.hpp>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>

namespace roofplan::io {

inline constexpr std::string_view e2e_suite_tool = "roofplan-e2e-suite";
inline constexpr std::string_view memory_bench_tool = "memory_bench.py";

/// The memory samples of a suite report, or of a memory_bench.py report of peaks (a parsed document; `file`
/// names it in errors).
inline std::vector<validation::MemorySample> memory_samples(const json& report, const std::string& file) {
    using namespace detail;
    const std::string tool = report.is_object() ? string_or(report, "tool", file, "") : "";
    const bool per_process = tool == memory_bench_tool && report.contains("peaks");
    if (tool != e2e_suite_tool && !per_process)
        roofplan::detail::fail(file, ": not a ", e2e_suite_tool, " report (validation/e2e/e2e_suite.py) nor a ",
                               memory_bench_tool, " report with peaks (validation/memory/memory_bench.py --peaks)");
    const std::string list = per_process ? "peaks" : "results";
    const json& results = field(report, list, file);
    if (!results.is_array()) roofplan::detail::fail(file, ".", list, ": expected an array");
    std::vector<validation::MemorySample> out;
    bool trained = false;
    for (std::size_t i = 0; i < results.size(); ++i) {
        const json& r = results[i];
        const std::string where = file + ": ." + list + "[" + std::to_string(i) + "]";
        if (!r.is_object()) roofplan::detail::fail(where, ": expected an object");
        const bool training = string_field(r, "task", where) == "train";
        trained = !per_process && (trained || (training && !r.contains("skipped")));
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
        s.blas_threads = trained || training ? 2 : 1;
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

/// The largest-batch cases of a memory benchmark report (validation/memory/memory_bench.py, tool "memory_bench.py"):
/// each case's `largest_ok` and `smallest_failed`, and its settings read from the `roofplan_command` it records
/// (`roofplan predict -m M -b B -p P --mode train [-s S] --optimizer O --runtime R`; the device is the caller's:
/// the report was measured on one GPU).  Unresolved searches are errors.
inline std::vector<validation::MaxBatchSample> max_batch_samples(const json& report, const std::string& file) {
    using namespace detail;
    if (!report.is_object() || string_or(report, "tool", file, "") != memory_bench_tool)
        roofplan::detail::fail(file, ": not a ", memory_bench_tool, " report (validation/memory/memory_bench.py)");
    const json& cases = field(report, "max_batch", file);
    if (!cases.is_array()) roofplan::detail::fail(file, ".max_batch: expected an array");
    std::vector<validation::MaxBatchSample> out;
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const json& c = cases[i];
        const std::string where = file + ": .max_batch[" + std::to_string(i) + "]";
        if (!c.is_object()) roofplan::detail::fail(where, ": expected an object");
        validation::MaxBatchSample s;
        s.where = where;
        s.id = string_field(c, "id", where);
        if (!c.contains("resolved") || !c.at("resolved").is_boolean() || !c.at("resolved").get<bool>())
            roofplan::detail::fail(where, ": the search did not resolve (`resolved` is not true)");
        s.largest_ok = whole(c, "largest_ok", where);
        s.smallest_failed = whole(c, "smallest_failed", where);
        if (s.largest_ok < 1 || s.smallest_failed <= s.largest_ok)
            roofplan::detail::fail(where, ": expected 1 <= largest_ok < smallest_failed, got ", s.largest_ok, " and ",
                                   s.smallest_failed);
        std::vector<std::string> words;
        {
            const std::string command = string_field(c, "roofplan_command", where);
            std::size_t at = 0;
            while (at < command.size()) {
                const std::size_t end = std::min(command.find(' ', at), command.size());
                if (end > at) words.push_back(command.substr(at, end - at));
                at = end + 1;
            }
        }
        const auto option = [&](std::string_view a, std::string_view b) -> const std::string* {
            for (std::size_t k = 0; k + 1 < words.size(); ++k)
                if (words[k] == a || words[k] == b) return &words[k + 1];
            return nullptr;
        };
        const auto required = [&](std::string_view a, std::string_view b) -> const std::string& {
            const std::string* v = option(a, b);
            if (!v) roofplan::detail::fail(where, ".roofplan_command: no ", a, " option");
            return *v;
        };
        s.model = required("--model", "-m");
        s.precision = parse_precision(required("--precision", "-p"));
        if (const std::string* mode = option("--mode", "--mode")) s.mode = parse_mode(*mode);
        if (const std::string* opt = option("--optimizer", "--optimizer")) s.optimizer = parse_optimizer(*opt);
        if (const std::string* runtime = option("--runtime", "--runtime")) s.runtime = parse_runtime(*runtime);
        if (const std::string* seq = option("--seq", "-s")) {
            try {
                s.seq = std::stoll(*seq);
            } catch (const std::exception&) {
                roofplan::detail::fail(where, ".roofplan_command: the sequence length '", *seq, "' is not a number");
            }
        }
        out.push_back(s);
    }
    return out;
}
/// The largest-batch cases of a memory benchmark report file.
inline std::vector<validation::MaxBatchSample> read_max_batch_samples(const std::string& file) {
    return max_batch_samples(parse(read_text(file), file), file);
}

}  // namespace roofplan::io
