// roofplan/layers/detail_cost.hpp — shared cost helpers for layer descriptors (internal).
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/units.hpp>
#include <roofplan/work.hpp>

#include <cstdint>

namespace roofplan::layers::detail {

using roofplan::detail::i64;
using roofplan::detail::add;
using roofplan::detail::mul;

/// Cost of an elementwise pass over `elements` per instance: `flops_per_element` arithmetic, `inputs`
/// tensors of that size read and `outputs` written.
constexpr PassCost elementwise(i64 batch, i64 elements, i64 flops_per_element, i64 inputs, i64 outputs) {
    roofplan::detail::require_batch(batch);
    const i64 n = mul(batch, elements, "elements");
    PassCost c;
    c.vector_flops = units::flops(mul(n, flops_per_element, "flops"));
    c.activation_elements_read = mul(n, inputs, "elements");
    c.activation_elements_written = mul(n, outputs, "elements");
    return c;
}

/// A pass that does nothing (e.g. backward-weight of a layer without parameters).
constexpr PassCost nothing(i64 batch) {
    roofplan::detail::require_batch(batch);
    return {};
}

}  // namespace roofplan::layers::detail
