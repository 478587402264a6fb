// roofplan-memory-validation: the memory model (memory/) against the recorded end-to-end runs' peaks, case by case.
//
//   roofplan-memory-validation --device h200 [--max-median F] [--max-error F] [--max-allocated-median F]
//                              [--max-allocated-error F] [--max-batch BENCH.json]... [--max-batch-error F]
//                              [--doc FILE --section NAME [--write]] REPORT.json...
//
// Prints, for every case of the reports (validation/e2e/e2e_suite.py, tool roofplan-e2e-suite): the measured
// torch.cuda peaks (max_memory_allocated, max_memory_reserved over steady steps), the predicted ones, their errors,
// and where the predicted peak is; then the median and largest |error| of reserved and of allocated.  With
// --max-batch (validation/memory/memory_bench.py reports), the largest batch that trained on the device beside
// MemoryModel::max_batch.  With bounds, exits 1 when a figure exceeds its bound (CTest holds the achieved figures
// as regression bounds).  With --doc, the tables are Markdown and must equal the section between
// `<!-- memory-validation:NAME -->` and `<!-- /memory-validation:NAME -->` of FILE (exit 1 otherwise; --write
// replaces the section instead): CI recomputes docs/validation.md's memory tables.
#include <roofplan/device/catalog.hpp>
#include <roofplan/io/memory_report.hpp>
#include <roofplan/validation/memory.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

using namespace roofplan;

namespace {

double mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

struct Options {
    std::string device = "h200";
    std::vector<std::string> reports, max_batch_reports;
    double max_median = -1, max_error = -1, max_allocated_median = -1, max_allocated_error = -1, max_batch_error = -1;
    std::string doc, section;
    std::optional<Runtime> runtime;  ///< only the cases of this runtime (eager, compiled)
    bool write = false;
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        const auto value = [&]() -> std::string {
            if (i + 1 >= argc) roofplan::detail::fail(a, " needs a value");
            return argv[++i];
        };
        if (a == "--device") o.device = value();
        else if (a == "--max-median") o.max_median = std::stod(value());
        else if (a == "--max-error") o.max_error = std::stod(value());
        else if (a == "--max-allocated-median") o.max_allocated_median = std::stod(value());
        else if (a == "--max-allocated-error") o.max_allocated_error = std::stod(value());
        else if (a == "--max-batch") o.max_batch_reports.push_back(value());
        else if (a == "--max-batch-error") o.max_batch_error = std::stod(value());
        else if (a == "--doc") o.doc = value();
        else if (a == "--section") o.section = value();
        else if (a == "--write") o.write = true;
        else if (a == "--runtime") o.runtime = parse_runtime(value());
        else if (!a.empty() && a[0] == '-') roofplan::detail::fail("unknown option '", a, "'");
        else o.reports.push_back(a);
    }
    if (o.reports.empty()) roofplan::detail::fail("no report given (validation/results/*/e2e_*.json)");
    if (o.doc.empty() != o.section.empty()) roofplan::detail::fail("--doc and --section go together");
    if (o.write && o.doc.empty()) roofplan::detail::fail("--write needs --doc FILE --section NAME");
    return o;
}

std::string format(const char* pattern, auto... args) {
    char buf[512];
    std::snprintf(buf, sizeof buf, pattern, args...);
    return buf;
}

std::string table(const std::vector<validation::MemoryComparison>& rows, bool markdown) {
    std::string out = markdown ? "| case | runtime | allocated MiB | predicted | error | reserved MiB | predicted | error | "
                                 "predicted peak at |\n|---|---|---|---|---|---|---|---|---|\n"
                               : format("%-46s %-8s | %10s %10s %7s | %10s %10s %7s | %8s %7s | %s\n", "case", "runtime",
                                        "alloc MiB", "predicted", "error", "resv MiB", "predicted", "error", "start",
                                        "error", "predicted peak at");
    for (const validation::MemoryComparison& c : rows) {
        const validation::MemorySample& s = c.sample;
        const std::string runtime(to_string(s.runtime));
        const std::string phase(memory::to_string(c.predicted.peak_phase));
        if (markdown)
            out += format("| %s | %s | %.1f | %.1f | %+.1f%% | %.1f | %.1f | %+.1f%% | %s %s |\n", s.id.c_str(),
                          runtime.c_str(), mib(s.max_allocated), mib(c.predicted.allocated_peak.value()),
                          100 * c.allocated_error(), mib(s.max_reserved), mib(c.predicted.reserved_peak.value()),
                          100 * c.reserved_error(), phase.c_str(), c.peak_layer.c_str());
        else
            out += format("%-46s %-8s | %10.1f %10.1f %+6.1f%% | %10.1f %10.1f %+6.1f%% | %8.1f %+6.1f%% | %s %s\n",
                          s.id.c_str(), runtime.c_str(), mib(s.max_allocated), mib(c.predicted.allocated_peak.value()),
                          100 * c.allocated_error(), mib(s.max_reserved), mib(c.predicted.reserved_peak.value()),
                          100 * c.reserved_error(), mib(s.allocated_at_start), 100 * c.start_error(), phase.c_str(),
                          c.peak_layer.c_str());
    }
    return out;
}

std::string max_batch_table(const std::vector<validation::MaxBatchComparison>& rows, bool markdown) {
    std::string out = markdown ? "| case | largest batch that trained | smallest that ran out | max_batch | error |\n"
                                 "|---|---|---|---|---|\n"
                               : format("%-46s %10s %10s %10s %7s\n", "case", "trained", "OOM at", "max_batch", "error");
    for (const validation::MaxBatchComparison& c : rows)
        out += format(markdown ? "| %s | %lld | %lld | %lld | %+.1f%% |\n" : "%-46s %10lld %10lld %10lld %+6.1f%%\n",
                      c.sample.id.c_str(), static_cast<long long>(c.sample.largest_ok),
                      static_cast<long long>(c.sample.smallest_failed), static_cast<long long>(c.predicted),
                      100 * c.error());
    return out;
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) roofplan::detail::fail("cannot read ", path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

/// Checks (or, with `write`, replaces) the generated section NAME of a Markdown file.  True when it is current.
bool sync_section(const std::string& path, const std::string& name, const std::string& body, bool write) {
    const std::string begin = "<!-- memory-validation:" + name + " -->\n", end = "<!-- /memory-validation:" + name + " -->";
    std::string doc = read_file(path);
    const std::size_t a = doc.find(begin), b = doc.find(end);
    if (a == std::string::npos || b == std::string::npos || b < a)
        roofplan::detail::fail(path, ": no section between '", begin.substr(0, begin.size() - 1), "' and '", end, "'");
    const std::size_t from = a + begin.size();
    if (doc.compare(from, b - from, body) == 0) return true;
    if (!write) {
        std::printf("FAIL: %s section %s is not the current output; regenerate with --write\n", path.c_str(),
                    name.c_str());
        return false;
    }
    doc.replace(from, b - from, body);
    std::ofstream(path, std::ios::binary) << doc;
    std::printf("wrote section %s of %s\n", name.c_str(), path.c_str());
    return true;
}

bool check(const char* what, double value, double bound) {
    if (bound < 0 || value <= bound + 1e-12) return true;
    std::printf("FAIL: %s %.2f%% exceeds its bound %.2f%%\n", what, 100 * value, 100 * bound);
    return false;
}

}  // namespace

int main(int argc, char** argv) try {
    const Options o = parse(argc, argv);
    const memory::DeviceMemory device = memory::DeviceMemory::of(find_device(o.device));
    std::vector<validation::MemorySample> samples;
    for (const std::string& file : o.reports)
        for (const validation::MemorySample& s : io::read_memory_samples(file))
            if (!o.runtime || *o.runtime == s.runtime) samples.push_back(s);
    const std::vector<validation::MemoryComparison> rows = validation::compare_memory(samples, device);
    const bool markdown = !o.doc.empty();
    const validation::ErrorSummary reserved = validation::summarize(validation::memory_cases(rows, true));
    const validation::ErrorSummary allocated = validation::summarize(validation::memory_cases(rows, false));
    std::string out = table(rows, markdown);
    out += format("%s%d cases on %s: reserved |error| median %.1f%%, max %.1f%%; allocated |error| median %.1f%%, "
                  "max %.1f%%\n",
                  markdown ? "\n" : "", reserved.samples, o.device.c_str(), 100 * reserved.median,
                  100 * reserved.worst, 100 * allocated.median, 100 * allocated.worst);
    bool ok = check("reserved median |error|", reserved.median, o.max_median);
    ok = check("reserved max |error|", reserved.worst, o.max_error) && ok;
    ok = check("allocated median |error|", allocated.median, o.max_allocated_median) && ok;
    ok = check("allocated max |error|", allocated.worst, o.max_allocated_error) && ok;
    if (!o.max_batch_reports.empty()) {
        std::vector<validation::MaxBatchSample> cases;
        for (const std::string& file : o.max_batch_reports)
            for (const validation::MaxBatchSample& s : io::read_max_batch_samples(file)) cases.push_back(s);
        const std::vector<validation::MaxBatchComparison> most = validation::compare_max_batch(cases, device);
        const validation::ErrorSummary summary = validation::summarize(validation::max_batch_cases(most));
        int bracketed = 0;
        for (const validation::MaxBatchComparison& c : most) bracketed += c.in_bracket() ? 1 : 0;
        out += "\n" + max_batch_table(most, markdown);
        out += format("%s%d cases on %s: max_batch |error| median %.1f%%, max %.1f%%; %d within the search's bracket\n",
                      markdown ? "\n" : "", summary.samples, o.device.c_str(), 100 * summary.median,
                      100 * summary.worst, bracketed);
        ok = check("max_batch max |error|", summary.worst, o.max_batch_error) && ok;
    }
    std::fputs(out.c_str(), stdout);
    if (markdown) ok = sync_section(o.doc, o.section, out, o.write) && ok;
    return ok ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
}
