// examples/common/check.hpp — property checks for the benchmark-report examples: each example asserts a few facts
// that follow from independent arithmetic (datasheet figures, the definition of a figure, orderings that physics
// imposes) besides printing its tables; a failure is printed and makes the program exit non-zero.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace roofplan_examples {

class Checks {
public:
    void expect(bool ok, const std::string& what) {
        if (ok) {
            ++passed_;
        } else {
            ++failed_;
            std::printf("CHECK FAILED: %s\n", what.c_str());
        }
    }
    /// Prints the tally; the exit status for main.
    [[nodiscard]] int finish() const {
        std::printf("checks: %d passed, %d failed\n", passed_, failed_);
        return failed_ == 0 ? 0 : 1;
    }

private:
    int passed_ = 0;
    int failed_ = 0;
};

/// Relative closeness for figures computed two ways.
inline bool close(double a, double b, double rel = 1e-9) {
    return std::fabs(a - b) <= rel * std::max(std::fabs(a), std::fabs(b));
}

}  // namespace roofplan_examples
