// Units: MAC and FLOP are distinct, 1 MAC = 2 FLOP, rates and times carry their dimensions.
#include <roofplan/units.hpp>

#include <doctest/doctest.h>

#include <type_traits>

using namespace roofplan::units;

static_assert(!std::is_same_v<mac_count, flop_count>, "MAC and FLOP must be distinct types");
static_assert(!std::is_convertible_v<mac_count, flop_count>, "MAC -> FLOP must be explicit");
static_assert(!std::is_convertible_v<flop_count, byte_count>, "FLOP and bytes are different dimensions");
static_assert(to_flops(macs(21)).value() == 42, "1 MAC = 2 FLOP");

TEST_CASE("explicit MAC to FLOP conversion doubles the count") {
    CHECK(to_flops(macs(7)) == flops(14));
    // Boost's explicit conversion uses the same factor.
    const flop_amount via_boost(bu::quantity<mac_unit, double>::from_value(3.0));
    CHECK(via_boost.value() == doctest::Approx(6.0));
}

TEST_CASE("time = work / rate, energy = power x time") {
    const seconds t = to_double(flops(2'000'000'000'000)) / tflops_per_second(1.0);
    CHECK(t.value() == doctest::Approx(2.0));
    const joules e = in_watts(300.0) * in_seconds(2.0);
    CHECK(e.value() == doctest::Approx(600.0));
    const seconds copy = to_double(bytes(900'000'000)) / gigabytes_per_second(900.0);
    CHECK(copy.value() == doctest::Approx(1e-3));
}

TEST_CASE("arithmetic intensity is FLOP per byte") {
    CHECK(intensity(flops(100), bytes(25)).value() == doctest::Approx(4.0));
    CHECK(intensity(flops(100), bytes(0)).value() == 0.0);
}
