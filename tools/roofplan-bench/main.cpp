// tools/roofplan-bench/main.cpp — roofplan-bench, THE measurement runner: runs named suites and writes one JSON
// report with provenance and one record per case, in the schemas the CUDA kernels write (so `roofplan calibrate`
// and `roofplan validate` read a suite through the same code path as a single program's report).
//
//   roofplan-bench host -o host.json                     # Eigen GEMM + STREAM on the CPU (no GPU needed)
//   roofplan-bench gpu-gemm gpu-bandwidth -o h200.json   # runs the built CUDA kernels and merges their reports
//   roofplan-bench nccl --gpus 4 -o nccl.json
//
// Suites: host (= host-gemm + host-stream + host-decode: JPEG decode per core, Python + Pillow), gpu-gemm, gpu-bandwidth, gpu-dp4a, nccl, conv, gpu (= gpu-gemm +
// gpu-bandwidth + gpu-dp4a).  Progress goes to stderr only on a terminal, never with --quiet or -o -.
#include "host_suite.hpp"

#include <roofplan/detail/checked.hpp>
#include <roofplan/detail/suggest.hpp>
#include <roofplan/version.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#ifndef ROOFPLAN_SOURCE_DIR
#define ROOFPLAN_SOURCE_DIR ""
#endif
#ifndef ROOFPLAN_KERNELS_DIR
#define ROOFPLAN_KERNELS_DIR ""
#endif
#ifndef ROOFPLAN_CONFIGURE_GIT_SHA
#define ROOFPLAN_CONFIGURE_GIT_SHA ""
#endif
#ifndef ROOFPLAN_DECODE_PYTHON
#define ROOFPLAN_DECODE_PYTHON "python3"
#endif

namespace fs = std::filesystem;
using roofplan::bench::json;

namespace {

struct Options {
    std::vector<std::string> suites;
    std::string output;
    std::string device_out;
    bool quick = false;
    bool quiet = false;
    int repeats = 0;
    double warmup_ms = -1;
    std::uint64_t seed = 20261121;
    double peak_bandwidth = 0;
    std::string shapes_file;
    std::vector<std::string> kernels_dirs;
    int gpus = 0;
    std::string sizes;
    std::vector<std::string> passthrough;
};

const std::vector<std::string>& suite_names() {
    static const std::vector<std::string> names = {"host", "host-gemm", "host-stream", "host-decode", "gpu-gemm",
                                                   "gpu-bandwidth", "gpu-dp4a", "nccl", "conv", "gpu"};
    return names;
}

std::vector<std::string> expand_suites(const std::vector<std::string>& wanted) {
    std::vector<std::string> out;
    const auto add = [&](const std::string& s) {
        if (std::find(out.begin(), out.end(), s) == out.end()) out.push_back(s);
    };
    for (const std::string& s : wanted) {
        const auto& names = suite_names();
        if (std::find(names.begin(), names.end(), s) == names.end()) {
            std::string list;
            for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
            const auto close = roofplan::detail::close_matches(s, names);
            roofplan::detail::fail("unknown suite '", s, "'", close.empty() ? "" : "; did you mean " + close.front() + "?",
                                   " (accepted: ", list, ")");
        }
        if (s == "host") add("host-gemm"), add("host-stream"), add("host-decode");
        else if (s == "gpu") add("gpu-gemm"), add("gpu-bandwidth"), add("gpu-dp4a");
        else add(s);
    }
    return out;
}

/// "\r[ 3/17] label" on stderr, only when enabled; finish() ends the line.
class Progress {
public:
    explicit Progress(bool enabled) : enabled_(enabled) {}
    void total(int n) { total_ = n; }
    void step(const std::string& what) {
        ++done_;
        if (!enabled_) return;
        std::string line = "[" + std::to_string(done_) + "/" + std::to_string(total_) + "] " + what;
        if (line.size() < width_) line += std::string(width_ - line.size(), ' ');
        width_ = std::max(width_, line.size());
        std::fprintf(stderr, "\r%s", line.c_str());
        std::fflush(stderr);
    }
    void note(const std::string& text) {  // a full line (a child program's output follows)
        if (enabled_) std::fprintf(stderr, "\r%s\n", text.c_str());
    }
    void finish() {
        if (enabled_ && done_ > 0) std::fprintf(stderr, "\n");
    }

private:
    bool enabled_;
    int total_ = 0, done_ = 0;
    std::size_t width_ = 0;
};

std::string run_capture(const std::string& command) {
    std::string out;
    if (FILE* p = ::popen((command + " 2>/dev/null").c_str(), "r")) {
        std::array<char, 4096> buf{};
        while (std::size_t got = std::fread(buf.data(), 1, buf.size(), p)) out.append(buf.data(), got);
        ::pclose(p);
    }
    return roofplan::bench::trim(out);
}

std::string shell_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

struct GitSha {
    std::string sha = "unknown", source = "none";
    bool dirty = false;
};

GitSha git_sha() {
    GitSha g;
#ifdef ROOFPLAN_GIT_SHA
    g.sha = ROOFPLAN_GIT_SHA;
    g.source = "compile definition ROOFPLAN_GIT_SHA";
    return g;
#else
    const std::string src = ROOFPLAN_SOURCE_DIR;
    if (!src.empty() && fs::exists(fs::path(src) / ".git")) {
        const std::string sha = run_capture("git -C " + shell_quote(src) + " rev-parse HEAD");
        if (sha.size() == 40) {
            g.sha = sha;
            g.source = "git rev-parse HEAD in the source tree at run time";
            g.dirty = !run_capture("git -C " + shell_quote(src) + " status --porcelain --untracked-files=no").empty();
            return g;
        }
    }
    if (std::string(ROOFPLAN_CONFIGURE_GIT_SHA).size() == 40) {
        g.sha = ROOFPLAN_CONFIGURE_GIT_SHA;
        g.source = "git rev-parse HEAD at configure time";
    }
    return g;
#endif
}

/// A kernel program: --kernels-dir, next to this runner, its ../kernels, the build's kernels dir, then PATH.
fs::path find_program(const std::string& name, const Options& o) {
    std::vector<fs::path> dirs;
    for (const std::string& d : o.kernels_dirs) dirs.emplace_back(d);
    std::error_code ec;
    const fs::path self = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        dirs.push_back(self.parent_path());
        dirs.push_back(self.parent_path().parent_path() / "kernels");
    }
    if (!std::string(ROOFPLAN_KERNELS_DIR).empty()) dirs.emplace_back(ROOFPLAN_KERNELS_DIR);
    std::string looked;
    for (const fs::path& d : dirs) {
        const fs::path p = d / name;
        if (fs::exists(p) && ::access(p.c_str(), X_OK) == 0) return p;
        looked += (looked.empty() ? "" : ", ") + d.string();
    }
    if (const char* path = std::getenv("PATH")) {
        std::string all = path;
        for (std::size_t start = 0; start <= all.size();) {
            const std::size_t end = std::min(all.find(':', start), all.size());
            const fs::path p = fs::path(all.substr(start, end - start)) / name;
            if (end > start && fs::exists(p) && ::access(p.c_str(), X_OK) == 0) return p;
            start = end + 1;
        }
        looked += ", PATH";
    }
    roofplan::detail::fail(name, " not found (looked in ", looked, "); build the CUDA kernels "
                           "(cmake --build <build-dir> --target roofplan_kernels, needs nvcc) or pass --kernels-dir DIR");
}

/// Runs `command` (which writes its JSON report to `tmp`), then reads and removes the report.  Errors name `what`,
/// the exit status, the command and `hint`.
json run_to_json(const std::string& what, std::string command, const fs::path& tmp, const Options& o, Progress& progress,
                 const std::string& hint) {
    progress.note("$ " + command);
    const std::string shown = command;
    if (o.quiet) command += " 2>/dev/null";
    command += " 1>&2";  // keep stdout for the report (-o -)
    const int status = std::system(command.c_str());
    if (status != 0 || !fs::exists(tmp)) {
        fs::remove(tmp);
        roofplan::detail::fail(what, " failed (exit status ", WIFEXITED(status) ? WEXITSTATUS(status) : -1, "): ", shown,
                               hint);
    }
    std::ifstream in(tmp);
    json report;
    try {
        report = json::parse(in);
    } catch (const json::exception& e) {
        fs::remove(tmp);
        roofplan::detail::fail(what, " wrote invalid JSON: ", e.what());
    }
    fs::remove(tmp);
    return report;
}

/// Runs a kernel program with --json into a temporary file and returns its report.
json run_kernel(const std::string& suite, const std::string& program, std::vector<std::string> args, const Options& o,
                const GitSha& sha, Progress& progress) {
    const fs::path exe = find_program(program, o);
    const fs::path tmp = fs::temp_directory_path() / (program + "-" + std::to_string(::getpid()) + ".json");
    std::vector<std::string> argv = {exe.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    if (sha.sha != "unknown") argv.insert(argv.end(), {"--git-sha", sha.sha});
    argv.insert(argv.end(), {"--seed", std::to_string(o.seed), "--json", tmp.string()});
    argv.insert(argv.end(), o.passthrough.begin(), o.passthrough.end());
    std::string command;
    for (const std::string& a : argv) command += (command.empty() ? "" : " ") + shell_quote(a);
    progress.step(suite + ": " + program);
    json report = run_to_json(suite + ": " + program, command, tmp, o, progress, "");
    report["suite"] = suite;
    return report;
}

/// Runs the input-pipeline micro-benchmark (validation/host/decode_bench.py, Pillow and NumPy) with the Python that
/// configure checked (or $ROOFPLAN_PYTHON): one
/// worker, the ImageNet training and validation transforms; the two reports become the suite's records.
json run_decode(const std::string& script, const Options& o, const GitSha& sha, Progress& progress) {
    json results = json::array();
    for (const char* transform : {"train", "val"}) {
        const fs::path tmp = fs::temp_directory_path() /
                             ("roofplan-decode-" + std::string(transform) + "-" + std::to_string(::getpid()) + ".json");
        const char* python = std::getenv("ROOFPLAN_PYTHON");  // else the interpreter configure checked
        std::string command = shell_quote(python != nullptr && *python != 0 ? python : ROOFPLAN_DECODE_PYTHON) + " " +
                              shell_quote(script) + " --transform " + transform + " --workers 1 --images " +
                              (o.quick ? "32 --rounds 3" : "96 --rounds 5") + " --seed " + std::to_string(o.seed % 100000) +
                              " --git-sha " + shell_quote(sha.sha) + " --json " + shell_quote(tmp.string());
        progress.step(std::string("host-decode: ") + transform);
        results.push_back(run_to_json("host-decode: decode_bench.py", command, tmp, o, progress,
                                      " (it needs Python with Pillow and NumPy: apt-get install python3-pil python3-numpy)"));
    }
    return {{"tool", "roofplan-host-decode"}, {"schema_version", 1}, {"suite", "host-decode"},
            {"config", {{"script", "validation/host/decode_bench.py"}, {"workers", 1},
                        {"images", "500x375 JPEG, quality 90, made from the seed"}}},
            {"results", results}};
}

std::string source_path(const std::string& relative) {
    const std::string src = ROOFPLAN_SOURCE_DIR;
    if (!src.empty() && fs::exists(fs::path(src) / relative)) return (fs::path(src) / relative).string();
    if (fs::exists(relative)) return relative;
    roofplan::detail::fail("cannot find '", relative, "' (run from the repository root or pass --shapes-file)");
}

/// The report's provenance: this program, the command line, the source's git sha, the compiler and the host; with a
/// GPU suite, a snapshot of the GPUs' clocks and settings (the kernels' own reports hold their properties).
json provenance_json(const std::vector<std::string>& suites, const GitSha& sha, const roofplan::bench::CpuInfo& cpu,
                     const roofplan::bench::SimdInUse& simd, int argc, char** argv) {
    json command_line = json::array();
    for (int i = 0; i < argc; ++i) command_line.push_back(argv[i]);
    json provenance = {
        {"program", "roofplan-bench"},
        {"version", std::string(roofplan::version)},
        {"date_utc", [] {
             const std::time_t now = std::time(nullptr);
             std::tm tm{};
             gmtime_r(&now, &tm);
             char buf[32];
             std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
             return std::string(buf);
         }()},
        {"command_line", command_line},
        {"git_sha", sha.sha},
        {"git_sha_source", sha.source},
        {"git_tree_dirty", sha.dirty},
        {"compiler", roofplan::bench::compiler_text()},
        {"eigen_version", roofplan::bench::eigen_version()},
        {"eigen_threads", Eigen::nbThreads()},
        {"simd_in_use", simd.eigen_sets},
        {"hostname", roofplan::bench::hostname()},
        {"os", roofplan::bench::os_text()},
        {"host",
         {{"cpu_model", cpu.model},
          {"logical_cpus", cpu.logical_cpus},
          {"physical_cores", cpu.physical_cores},
          {"cpu_mhz_current", cpu.current_mhz},
          {"cpu_mhz_base", cpu.base_mhz > 0 ? json(cpu.base_mhz) : json(nullptr)},
          {"cpu_mhz_max", cpu.max_mhz > 0 ? json(cpu.max_mhz) : json(nullptr)},
          {"simd_flags", cpu.simd_flags},
          {"llc_bytes", cpu.llc_bytes},
          {"llc_source", cpu.llc_source},
          {"memory_bytes", cpu.memory_bytes}}},
        {"suites", suites}};

    const bool gpu = std::any_of(suites.begin(), suites.end(), [](const std::string& s) { return s.rfind("host", 0) != 0; });
    if (gpu) {
        const std::string smi = run_capture(
            "nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.sm,clocks.max.sm,clocks.mem,"
            "power.limit,temperature.gpu,ecc.mode.current,persistence_mode --format=csv");
        provenance["nvidia_smi"] = smi.empty() ? json(nullptr) : json(smi);
    }
    return provenance;
}

/// The GEMM shapes file: --shapes-file, else the zoo's.
std::string gemm_shapes_file(const Options& o) {
    return o.shapes_file.empty() ? source_path("validation/shapes/zoo_gemm.txt") : o.shapes_file;
}

/// The host suites' repeats and warm-up: the defaults, --quick's, then what the command line gives.
roofplan::bench::HostOptions host_options(const Options& o) {
    roofplan::bench::HostOptions host;
    if (o.quick) host.repeats = 5, host.warmup_ms = 20;
    if (o.repeats > 0) host.repeats = o.repeats;
    if (o.warmup_ms >= 0) host.warmup_ms = o.warmup_ms;
    host.seed = o.seed;
    return host;
}

/// host-gemm's shapes: squares, then the zoo's GEMM shapes (--quick: those of at most 2 GFLOP, so CI stays under a
/// minute).
std::vector<roofplan::bench::GemmShape> host_gemm_shapes(const Options& o) {
    std::vector<roofplan::bench::GemmShape> shapes;
    const std::vector<std::int64_t> squares = o.quick ? std::vector<std::int64_t>{128, 256, 512, 1024}
                                                      : std::vector<std::int64_t>{256, 512, 1024, 2048};
    for (std::int64_t s : squares) shapes.push_back({s, s, s, ""});
    for (const auto& g : roofplan::bench::read_shapes_file(gemm_shapes_file(o)))
        if (!o.quick || 2.0 * static_cast<double>(g.m) * static_cast<double>(g.n) * static_cast<double>(g.k) <= 2.1e9)
            shapes.push_back(g);
    return shapes;
}

json host_gemm_report(const std::vector<roofplan::bench::GemmShape>& shapes, const roofplan::bench::HostOptions& host,
                      std::mt19937_64& rng, const Options& o, Progress& progress) {
    json results = json::array();
    for (const auto& g : shapes) {
        progress.step("host gemm fp32 " + std::to_string(g.m) + "x" + std::to_string(g.n) + "x" + std::to_string(g.k) +
                      (g.label.empty() ? "" : " (" + g.label + ")"));
        results.push_back(roofplan::bench::host_gemm_case(g, host, rng));
    }
    return {{"tool", "roofplan-gemm"}, {"schema_version", 1}, {"suite", "host-gemm"},
            {"config", {{"precisions", "fp32"}, {"backend", "Eigen " + roofplan::bench::eigen_version()},
                        {"repeats", host.repeats}, {"warmup_ms", host.warmup_ms}, {"seed", o.seed},
                        {"samples", host.samples},
                        {"layout", "column-major MatrixXf, C = A * B (noalias)"},
                        {"timing", "std::chrono::steady_clock per run, median of repeats after warm-up"},
                        {"error_measure", "max_rel_error = max |c - ref| / sum_k |a_k b_k| over sampled "
                                          "elements (double reference); bound gamma_k = k u / (1 - k u)"}}},
            {"results", results}};
}

json host_stream_report(const json& results, const roofplan::bench::HostOptions& host) {
    return {{"tool", "roofplan-bandwidth"}, {"schema_version", 1}, {"suite", "host-stream"},
            {"config", {{"dtype", "fp64"}, {"repeats", host.repeats}, {"warmup_ms", host.warmup_ms},
                        {"bytes", "STREAM convention: copy/scale 2 arrays, triad 3; write-allocate not counted"},
                        {"arrays_vs_llc", "each array >= 4 x LLC"}}},
            {"results", results}};
}

/// A GPU suite: the report of its kernel program.
json kernel_suite(const std::string& suite, const Options& o, const GitSha& sha, Progress& progress) {
    if (suite == "gpu-gemm") {
        const std::vector<std::string> args = {"--precision", "all", "--sizes", o.sizes.empty() ? "1024,2048,4096,8192" : o.sizes,
                                               "--shapes-file", gemm_shapes_file(o)};
        return run_kernel(suite, "roofplan-gemm", args, o, sha, progress);
    }
    if (suite == "gpu-bandwidth") return run_kernel(suite, "roofplan-bandwidth", {}, o, sha, progress);
    if (suite == "gpu-dp4a") return run_kernel(suite, "roofplan-dp4a", {}, o, sha, progress);
    if (suite == "nccl") {
        std::vector<std::string> args = {"--op", "all", "--sweep", "1MB:1GB"};
        if (o.gpus > 0) args.insert(args.end(), {"--gpus", std::to_string(o.gpus)});
        return run_kernel(suite, "roofplan-nccl", args, o, sha, progress);
    }
    return run_kernel(suite, "roofplan-conv", {"--shapes-file", source_path("validation/shapes/zoo_conv.txt")}, o, sha,
                      progress);
}

/// Runs the suites in order and returns their reports; `best_stream`: the fastest STREAM kernel's GB/s (0 without
/// host-stream).
json run_suites(const std::vector<std::string>& suites, const Options& o, const GitSha& sha,
                const roofplan::bench::CpuInfo& cpu, Progress& progress, double& best_stream) {
    const roofplan::bench::HostOptions host = host_options(o);
    std::mt19937_64 rng(o.seed);
    std::vector<roofplan::bench::GemmShape> gemm_shapes;
    if (std::find(suites.begin(), suites.end(), "host-gemm") != suites.end()) gemm_shapes = host_gemm_shapes(o);
    int steps = static_cast<int>(gemm_shapes.size());
    for (const std::string& s : suites) steps += s == "host-stream" ? 3 : s == "host-gemm" ? 0 : s == "host-decode" ? 2 : 1;
    progress.total(steps);

    json reports = json::array();
    for (const std::string& suite : suites) {
        if (suite == "host-gemm") {
            reports.push_back(host_gemm_report(gemm_shapes, host, rng, o, progress));
        } else if (suite == "host-stream") {
            json results = roofplan::bench::host_stream_cases(host, cpu.llc_bytes, rng,
                                                              [&](const std::string& what) { progress.step(what); });
            for (const json& r : results) best_stream = std::max(best_stream, r.at("gb_per_s").get<double>());
            reports.push_back(host_stream_report(results, host));
        } else if (suite == "host-decode") {
            reports.push_back(run_decode(source_path("validation/host/decode_bench.py"), o, sha, progress));
        } else {
            reports.push_back(kernel_suite(suite, o, sha, progress));
        }
    }
    progress.finish();
    return reports;
}

/// The host as a device into the report, and into --device-out's file when given; its bandwidth: --peak-bandwidth,
/// else this run's best STREAM kernel, else a placeholder that says so.
void add_host_device(json& report, const Options& o, const roofplan::bench::CpuInfo& cpu,
                     const roofplan::bench::SimdInUse& simd, double best_stream) {
    double bandwidth = o.peak_bandwidth;
    std::string source = "--peak-bandwidth (given by the user)";
    if (!(bandwidth > 0) && best_stream > 0) {
        bandwidth = best_stream;
        source = "ASSUMED: the best STREAM kernel of this run (no datasheet figure given; pass --peak-bandwidth). "
                 "Memory efficiency fitted against it is relative to the best kernel, not to the DRAM peak.";
    } else if (!(bandwidth > 0)) {
        bandwidth = 10;
        source = "PLACEHOLDER 10 GB/s: neither --peak-bandwidth nor a STREAM run; memory figures are meaningless";
    }
    const json host_device = roofplan::bench::host_device_json(cpu, simd, Eigen::nbThreads(), bandwidth, source);
    report["device"] = host_device.at("device");
    report["device_derivation"] = host_device.at("derivation");
    if (!o.device_out.empty()) {
        std::ofstream out(o.device_out);
        out << json{{"schema", "roofplan-devices/1"}, {"devices", json::array({host_device.at("device")})},
                    {"derivation", host_device.at("derivation")}}
                   .dump(2)
            << '\n';
        if (!out) roofplan::detail::fail("cannot write '", o.device_out, "'");
    }
}

/// Writes the report to -o (stdout for '-'), then says so on stderr unless --quiet.
void write_report(const json& report, const Options& o) {
    const std::string text = report.dump(2) + "\n";
    if (o.output == "-") {
        std::cout << text;
        return;
    }
    std::ofstream out(o.output);
    out << text;
    if (!out) roofplan::detail::fail("cannot write '", o.output, "'");
    if (o.quiet) return;
    const json& reports = report.at("reports");
    int cases = 0;
    for (const json& r : reports) cases += static_cast<int>(r.value("results", json::array()).size());
    std::cerr << "roofplan-bench: wrote " << o.output << " (" << reports.size() << " report(s), " << cases << " case(s))\n";
}

int run(const Options& o, int argc, char** argv) {
    const std::vector<std::string> suites = expand_suites(o.suites);
    const bool host_measured = std::find(suites.begin(), suites.end(), "host-gemm") != suites.end() ||
                               std::find(suites.begin(), suites.end(), "host-stream") != suites.end();
    if (!o.device_out.empty() && !host_measured)
        roofplan::detail::fail("--device-out describes the host: it needs the host, host-gemm or host-stream suite");
    Progress progress(!o.quiet && o.output != "-" && ::isatty(STDERR_FILENO) == 1);
    const GitSha sha = git_sha();
    const roofplan::bench::CpuInfo cpu = roofplan::bench::read_cpu_info();
    const roofplan::bench::SimdInUse simd = roofplan::bench::simd_in_use();
    const json provenance = provenance_json(suites, sha, cpu, simd, argc, argv);
    double best_stream = 0;
    const json reports = run_suites(suites, o, sha, cpu, progress, best_stream);
    json report = {{"tool", "roofplan-bench"}, {"schema_version", 1}, {"suite", o.suites}, {"provenance", provenance},
                   {"reports", reports}};
    if (host_measured) add_host_device(report, o, cpu, simd, best_stream);
    write_report(report, o);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"roofplan-bench: run measurement suites and write one JSON report with provenance\n"
                 "suites: host (Eigen GEMM + STREAM + JPEG decode on the CPU), host-gemm, host-stream, host-decode, "
                 "gpu-gemm, gpu-bandwidth, "
                 "gpu-dp4a, nccl, conv, gpu (= gpu-gemm + gpu-bandwidth + gpu-dp4a)"};
    Options o;
    app.add_option("suites", o.suites, "Suites to run")->required();
    app.add_option("-o,--output", o.output, "Report file ('-': stdout)")->required();
    app.add_option("--device-out", o.device_out, "Also write the host as a device file (for --device-file)");
    app.add_flag("--quick", o.quick, "Fewer shapes and repeats (CI): host squares to 1024, zoo shapes <= 2 GFLOP");
    app.add_flag("-q,--quiet", o.quiet, "No progress or messages on stderr");
    app.add_option("--repeats", o.repeats, "Timed runs per case (host; default 9, --quick 5)")->check(CLI::Range(1, 1000));
    app.add_option("--warmup-ms", o.warmup_ms, "Warm-up time per case (host; default 100 ms)")->check(CLI::Range(0.0, 60000.0));
    app.add_option("--seed", o.seed, "Seed of the random inputs (passed to the kernels too)");
    app.add_option("--peak-bandwidth", o.peak_bandwidth, "Host DRAM datasheet bandwidth in GB/s (else an assumption)")
        ->check(CLI::Range(0.001, 1e6));
    app.add_option("--shapes-file", o.shapes_file, "GEMM shapes (default validation/shapes/zoo_gemm.txt)");
    app.add_option("--kernels-dir", o.kernels_dirs, "Where the CUDA kernel programs are (repeatable)");
    app.add_option("--gpus", o.gpus, "nccl: use the first N GPUs")->check(CLI::Range(1, 1024));
    app.add_option("--sizes", o.sizes, "gpu-gemm: square sizes (default 1024,2048,4096,8192)");
    app.add_option("--kernel-args", o.passthrough, "Extra arguments for the kernel programs")->allow_extra_args();
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    try {
        return run(o, argc, argv);
    } catch (const roofplan::invalid_argument& e) {
        std::cerr << "roofplan-bench: error: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        std::cerr << "roofplan-bench: internal error: " << e.what() << '\n';
        return 3;
    }
}
