// tools/roofplan/progress.hpp — a one-line progress display for long runs (plans, sweeps) on a terminal.
//
// It writes "\r[  37/120] label: item" to stderr, only when stderr is a terminal and the command does not print
// JSON, so pipes, files and --json output stay clean.  The line is erased when the run ends.
#pragma once

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <string_view>

namespace roofplan::cli {

class Progress {
public:
    /// `enabled` false: silent.  Use Progress::for_terminal(...) for the usual rule.
    Progress(std::string label, std::size_t total, bool enabled, std::FILE* out = stderr)
        : label_(std::move(label)), total_(total), enabled_(enabled && total > 0), out_(out) {}

    /// Shown only when stderr is a terminal and the output is not JSON (or CSV, or anything a program reads).
    static Progress for_terminal(std::string label, std::size_t total, bool machine_output) {
        return Progress(std::move(label), total, !machine_output && ::isatty(STDERR_FILENO) == 1);
    }

    Progress(const Progress&) = delete;
    Progress& operator=(const Progress&) = delete;
    Progress(Progress&& other) noexcept
        : label_(std::move(other.label_)), total_(other.total_), enabled_(other.enabled_), out_(other.out_),
          width_(other.width_), last_(other.last_) {
        other.enabled_ = false;
        other.width_ = 0;
    }
    Progress& operator=(Progress&&) = delete;
    ~Progress() { finish(); }

    [[nodiscard]] bool enabled() const { return enabled_; }

    /// Reports that item `done` (0-based) of the total is being worked on.  Redraws at most every 50 ms, and
    /// always for the first item.
    void step(std::size_t done, std::string_view item) {
        if (!enabled_) return;
        const auto now = std::chrono::steady_clock::now();
        if (width_ > 0 && now - last_ < std::chrono::milliseconds(50)) return;
        last_ = now;
        const int digits = static_cast<int>(std::to_string(total_).size());
        char counter[64];
        std::snprintf(counter, sizeof counter, "[%*zu/%zu] ", digits, done + 1, total_);
        std::string line = counter + label_;
        if (!item.empty()) line += ": " + std::string(item);
        if (line.size() > 78) line.resize(78);
        const std::size_t pad = width_ > line.size() ? width_ - line.size() : 0;
        std::fprintf(out_, "\r%s%s", line.c_str(), std::string(pad, ' ').c_str());
        std::fflush(out_);
        width_ = line.size();
    }

    /// Erases the line (called by the destructor too).
    void finish() {
        if (!enabled_ || width_ == 0) return;
        std::fprintf(out_, "\r%s\r", std::string(width_, ' ').c_str());
        std::fflush(out_);
        width_ = 0;
    }

private:
    std::string label_;
    std::size_t total_ = 0;
    bool enabled_ = false;
    std::FILE* out_ = stderr;
    std::size_t width_ = 0;  ///< characters on the line now (0: nothing drawn)
    std::chrono::steady_clock::time_point last_{};
};

}  // namespace roofplan::cli
