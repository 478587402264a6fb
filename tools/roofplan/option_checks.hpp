// tools/roofplan/option_checks.hpp — the CLI's one layer of option checks: every value a command takes is checked
// when the command line is parsed (CLI11 validators), so a zero, a negative, a non-finite or an out-of-range value
// is an error naming the option and what it accepts — never a silent default or clamp — and an option that does not
// apply to the mode chosen is an error too (`only_with`).  All of them exit with status 2 (docs/cli.md).
#pragma once

#include <roofplan/enum_names.hpp>
#include <roofplan/error.hpp>
#include <roofplan/precision.hpp>

#include <CLI/CLI.hpp>

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace roofplan::cli {

/// Concatenates message parts by appending (GCC 12's -Wrestrict misfires on `"text" + std::string&&` at -O3).
template <class... Parts>
std::string joined(const Parts&... parts) {
    std::string out;
    ((out += parts), ...);
    return out;
}

/// The ranges of the CLI's counts (far above any real use; below the sizes whose products overflow).
struct OptionLimits {
    static constexpr std::int64_t max_batch = 2'147'483'647;  // (an int)
    static constexpr std::int64_t max_global_batch = std::int64_t{1} << 40;
    static constexpr std::int64_t max_seq = std::int64_t{1} << 24;
    static constexpr std::int64_t max_image_size = 65'536;
    static constexpr std::int64_t max_gpus = 1'000'000;
    static constexpr std::int64_t max_nodes = 100'000;
};

/// An integer option in [low, high]: "--seq: must be an integer in [1, 16777216], got '0'".
inline CLI::Validator integer_in(std::int64_t low, std::int64_t high) {
    return CLI::Validator(
        [low, high](std::string& text) -> std::string {
            std::int64_t v = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc{} || ptr != text.data() + text.size() || v < low || v > high)
                return joined("must be an integer in [", std::to_string(low), ", ", std::to_string(high), "], got '",
                              text, "'");
            return {};
        },
        joined("[", std::to_string(low), ", ", std::to_string(high), "]"));
}

/// A count that must be >= 1 (a batch): "--batch: must be an integer >= 1, got '0'" (and at most `high`).
inline CLI::Validator positive_count(std::int64_t high = OptionLimits::max_batch) {
    return CLI::Validator(
        [high](std::string& text) -> std::string {
            std::int64_t v = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc{} || ptr != text.data() + text.size() || v < 1)
                return joined("must be an integer >= 1, got '", text, "'");
            if (v > high) return joined("must be an integer <= ", std::to_string(high), ", got '", text, "'");
            return {};
        },
        "INT>=1");
}

/// A finite number in (low, high] (`low_open`) or [low, high]: "--dataset: must be a number in (0, 1e+15], got 'inf'".
inline CLI::Validator number_in(double low, double high, bool low_open) {
    const auto range = [=] {
        char buffer[64];
        std::snprintf(buffer, sizeof buffer, "%s%g, %g]", low_open ? "(" : "[", low, high);
        return std::string(buffer);
    }();
    return CLI::Validator(
        [=](std::string& text) -> std::string {
            double v = 0;
            const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            const bool above_low = low_open ? v > low : v >= low;
            if (ec != std::errc{} || ptr != text.data() + text.size() || !std::isfinite(v) || !above_low || v > high)
                return joined("must be a number in ", range, ", got '", text, "'");
            return {};
        },
        range);
}

/// An enum option: the value must name one of E's values ("--data-parallel: unknown data-parallel mode 'fsdp';
/// accepted: ddp, dp").
template <NamedEnum E>
CLI::Validator one_of() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            try {
                (void)parse_enum<E>(text);
            } catch (const roofplan::Error& e) {
                return e.what();
            }
            return {};
        },
        std::string(enum_names_text<E>()));
}

/// A precision for training (compare, scaling): one of Precision's names except int8, which is inference only.
inline CLI::Validator training_precision() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
            try {
                if (parse_enum<Precision>(text) == Precision::int8)
                    return "int8 is for inference only; this command predicts training: accepted fp32, tf32, "
                           "amp-fp16, amp-bf16";
            } catch (const roofplan::Error& e) {
                return e.what();
            }
            return {};
        },
        "fp32, tf32, amp-fp16, amp-bf16");
}

/// An option that applies only with `needed` (--gpus only with --system): an error otherwise, at parse time.
inline CLI::Option* only_with(CLI::Option* option, CLI::Option* needed) { return option->needs(needed); }

}  // namespace roofplan::cli
