// roofplan-memory-validation: the memory model (memory/) against the recorded end-to-end runs' peaks, case by case.
//
//   roofplan-memory-validation --device h200 [--max-median F] [--max-error F] [--max-allocated-median F]
//                              [--max-allocated-error F] REPORT.json...
//
// Prints, for every case of the reports (validation/e2e/e2e_suite.py, tool roofplan-e2e-suite): the measured
// torch.cuda peaks (max_memory_allocated, max_memory_reserved over steady steps), the predicted ones, their errors,
// and where the predicted peak is; then the median and largest |error| of reserved and of allocated.  With bounds,
// exits 1 when a figure exceeds its bound (CTest holds the achieved figures as regression bounds).
#include <roofplan/device/catalog.hpp>
#include <roofplan/io/memory_report.hpp>
#include <roofplan/validation/memory.hpp>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

using namespace roofplan;

namespace {

double mib(std::int64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

struct Options {
    std::string device = "h200";
    std::vector<std::string> reports;
    double max_median = -1, max_error = -1, max_allocated_median = -1, max_allocated_error = -1;
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
        else if (!a.empty() && a[0] == '-') roofplan::detail::fail("unknown option '", a, "'");
        else o.reports.push_back(a);
    }
    if (o.reports.empty()) roofplan::detail::fail("no report given (validation/results/*/e2e_*.json)");
    return o;
}

void print_table(const std::vector<validation::MemoryComparison>& rows) {
    std::printf("%-46s %-8s | %10s %10s %7s | %10s %10s %7s | %8s %7s | %s\n", "case", "runtime", "alloc MiB",
                "predicted", "error", "resv MiB", "predicted", "error", "start", "error", "predicted peak at");
    for (const validation::MemoryComparison& c : rows) {
        const validation::MemorySample& s = c.sample;
        std::printf("%-46s %-8s | %10.1f %10.1f %+6.1f%% | %10.1f %10.1f %+6.1f%% | %8.1f %+6.1f%% | %s %s\n",
                    s.id.c_str(), std::string(to_string(s.runtime)).c_str(), mib(s.max_allocated),
                    mib(c.predicted.allocated_peak.value()), 100 * c.allocated_error(), mib(s.max_reserved),
                    mib(c.predicted.reserved_peak.value()), 100 * c.reserved_error(), mib(s.allocated_at_start),
                    100 * c.start_error(), std::string(memory::to_string(c.predicted.peak_phase)).c_str(),
                    c.peak_layer.c_str());
    }
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
        for (const validation::MemorySample& s : io::read_memory_samples(file)) samples.push_back(s);
    const std::vector<validation::MemoryComparison> rows = validation::compare_memory(samples, device);
    print_table(rows);
    const validation::ErrorSummary reserved = validation::summarize(validation::memory_cases(rows, true));
    const validation::ErrorSummary allocated = validation::summarize(validation::memory_cases(rows, false));
    std::printf("%d cases on %s: reserved |error| median %.1f%%, max %.1f%%; allocated |error| median %.1f%%, "
                "max %.1f%%\n",
                reserved.samples, o.device.c_str(), 100 * reserved.median, 100 * reserved.worst,
                100 * allocated.median, 100 * allocated.worst);
    bool ok = check("reserved median |error|", reserved.median, o.max_median);
    ok = check("reserved max |error|", reserved.worst, o.max_error) && ok;
    ok = check("allocated median |error|", allocated.median, o.max_allocated_median) && ok;
    ok = check("allocated max |error|", allocated.worst, o.max_allocated_error) && ok;
    return ok ? 0 : 1;
} catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
}
