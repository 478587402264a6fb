// Compile-fail cases: each ROOFPLAN_CASE_* must NOT compile; with no case defined the file must compile (the
// control, proving that a failure comes from the case and not from a broken include).
#include <roofplan/roofplan.hpp>

int main() {
    using namespace roofplan::units;
    [[maybe_unused]] const flop_count f = flops(1);
    [[maybe_unused]] const mac_count m = macs(1);
    [[maybe_unused]] const byte_count b = bytes(1);
#if defined(ROOFPLAN_CASE_FLOP_PLUS_BYTE)
    auto x = f + b;  // FLOPs and bytes are different dimensions
#elif defined(ROOFPLAN_CASE_MAC_PLUS_FLOP)
    auto x = f + m;  // MACs must be converted explicitly (to_flops)
#elif defined(ROOFPLAN_CASE_IMPLICIT_MAC_TO_FLOP)
    flop_count x = m;  // no implicit conversion
#elif defined(ROOFPLAN_CASE_BARE_NUMBER)
    flop_count x = 5;  // a bare number is not a quantity
#elif defined(ROOFPLAN_CASE_INVALID_CONSTEXPR_LAYER)
    // A kernel larger than the padded input is a compile error in constant evaluation.
    constexpr roofplan::Conv2D x{{.in_channels = 3, .out_channels = 8, .in_height = 5, .in_width = 5, .kernel = 11}};
#else
    int x = 0;
#endif
    (void)x;
    return 0;
}
