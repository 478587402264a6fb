// roofplan/units.hpp — dimensioned quantities for workload arithmetic (Boost.Units).
//
// Operations get a base dimension of their own; bytes use Boost's information dimension; time, power and
// energy are SI.  Two units of operations exist and they are distinct types:
//   * flop — one floating-point (or integer) arithmetic operation;
//   * mac  — one multiply-accumulate, worth exactly 2 flop.
// Adding a mac count to a flop count, or a flop count to a byte count, does not compile; convert
// explicitly with `to_flops(m)` (or `roofplan::flops(m)`, Boost's explicit conversion).
//
// Counts are exact 64-bit integers (`mac_count`, `flop_count`, `byte_count`); rates, times and energies
// are doubles.  Example:
//
//   using namespace roofplan::units;
//   constexpr mac_count m = macs(3);
//   constexpr flop_count f = to_flops(m);             // 6 flop
//   flops_per_second peak = tflops_per_second(19.5);
//   seconds t = to_double(f) / peak;                    // a quantity of time
#pragma once

#include <roofplan/detail/checked.hpp>

#include <boost/units/base_dimension.hpp>
#include <boost/units/base_unit.hpp>
#include <boost/units/base_units/information/byte.hpp>
#include <boost/units/base_units/si/kilogram.hpp>
#include <boost/units/base_units/si/meter.hpp>
#include <boost/units/base_units/si/second.hpp>
#include <boost/units/conversion.hpp>
#include <boost/units/derived_dimension.hpp>
#include <boost/units/make_system.hpp>
#include <boost/units/physical_dimensions/energy.hpp>
#include <boost/units/physical_dimensions/information.hpp>
#include <boost/units/physical_dimensions/power.hpp>
#include <boost/units/physical_dimensions/time.hpp>
#include <boost/units/quantity.hpp>
#include <boost/units/unit.hpp>

#include <cstdint>

namespace roofplan::units {

namespace bu = boost::units;

/// The dimension of arithmetic work.  Ordinal 7001 is private to roofplan.
struct operation_base_dimension : bu::base_dimension<operation_base_dimension, 7001> {};
using operation_dimension = operation_base_dimension::dimension_type;

/// One arithmetic operation (a FLOP; integer operations such as INT8 multiply-adds are counted the same way).
struct flop_base_unit : bu::base_unit<flop_base_unit, operation_dimension, 7002> {
    static constexpr const char* name() { return "flop"; }
    static constexpr const char* symbol() { return "FLOP"; }
};
/// One multiply-accumulate (two operations).  A base unit of its own so that MAC and FLOP are distinct types.
struct mac_base_unit : bu::base_unit<mac_base_unit, operation_dimension, 7003> {
    static constexpr const char* name() { return "multiply-accumulate"; }
    static constexpr const char* symbol() { return "MAC"; }
};

/// roofplan's unit system: metre, kilogram, second (for power and energy), byte and flop.
using system = bu::make_system<bu::si::meter_base_unit, bu::si::kilogram_base_unit, bu::si::second_base_unit,
                               bu::information::byte_base_unit, flop_base_unit>::type;
using mac_system = bu::make_system<mac_base_unit>::type;

using flop_unit = bu::unit<operation_dimension, system>;
using mac_unit = bu::unit<operation_dimension, mac_system>;
using byte_unit = bu::unit<bu::information_dimension, system>;
using second_unit = bu::unit<bu::time_dimension, system>;
using watt_unit = bu::unit<bu::power_dimension, system>;
using joule_unit = bu::unit<bu::energy_dimension, system>;
using flop_per_second_unit = bu::divide_typeof_helper<flop_unit, second_unit>::type;
using byte_per_second_unit = bu::divide_typeof_helper<byte_unit, second_unit>::type;
using flop_per_byte_unit = bu::divide_typeof_helper<flop_unit, byte_unit>::type;

// Exact counts.
using flop_count = bu::quantity<flop_unit, std::int64_t>;
using mac_count = bu::quantity<mac_unit, std::int64_t>;
using byte_count = bu::quantity<byte_unit, std::int64_t>;

// Real-valued quantities.
using flop_amount = bu::quantity<flop_unit, double>;
using byte_amount = bu::quantity<byte_unit, double>;
using seconds = bu::quantity<second_unit, double>;
using watts = bu::quantity<watt_unit, double>;
using joules = bu::quantity<joule_unit, double>;
using flops_per_second = bu::quantity<flop_per_second_unit, double>;
using bytes_per_second = bu::quantity<byte_per_second_unit, double>;
using flops_per_byte = bu::quantity<flop_per_byte_unit, double>;

// Constructors from raw numbers (the only places where a bare number becomes a quantity).
constexpr flop_count flops(std::int64_t n) { return flop_count::from_value(n); }
constexpr mac_count macs(std::int64_t n) { return mac_count::from_value(n); }
constexpr byte_count bytes(std::int64_t n) { return byte_count::from_value(n); }
constexpr seconds in_seconds(double s) { return seconds::from_value(s); }
constexpr watts in_watts(double w) { return watts::from_value(w); }
constexpr joules in_joules(double j) { return joules::from_value(j); }
constexpr flops_per_second tflops_per_second(double t) { return flops_per_second::from_value(t * 1e12); }
constexpr bytes_per_second gigabytes_per_second(double g) { return bytes_per_second::from_value(g * 1e9); }

/// The one sanctioned MAC → FLOP conversion: 1 MAC = 2 FLOP, exact; an error when the FLOPs do not fit 64 bits.
constexpr flop_count to_flops(mac_count m) { return flops(detail::mul(2, m.value(), "FLOPs (2 per MAC)")); }

/// Exact count → real quantity (for rates and times).
constexpr flop_amount to_double(flop_count f) { return flop_amount::from_value(static_cast<double>(f.value())); }
constexpr byte_amount to_double(byte_count b) { return byte_amount::from_value(static_cast<double>(b.value())); }

/// Arithmetic intensity in FLOP per byte (0 when no byte moves: such work has no memory roof).
constexpr flops_per_byte intensity(flop_count f, byte_count b) {
    return flops_per_byte::from_value(b.value() > 0 ? static_cast<double>(f.value()) / static_cast<double>(b.value())
                                                    : 0.0);
}

}  // namespace roofplan::units

// 1 MAC = 2 FLOP, for Boost's explicit conversion `flop_count(m)` / `quantity<flop_unit,double>(m)`.
BOOST_UNITS_DEFINE_CONVERSION_FACTOR(roofplan::units::mac_base_unit, roofplan::units::flop_base_unit, double, 2.0);

namespace roofplan {
using units::byte_count;
using units::flop_count;
using units::mac_count;
}  // namespace roofplan
