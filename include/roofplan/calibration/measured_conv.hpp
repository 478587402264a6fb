// roofplan/calibration/measured_conv.hpp — convolutions measured one shape at a time, as the profile carries them.
//
// One factor per math class cannot time cuDNN's convolutions: its choice of algorithm changes with the shape, the
// pass and the layout (an FP32 3×3 convolution on NCHW tensors runs Winograd or FFT at some batches and an
// implicit GEMM at others; validation/ops/conv_bench.py on an H200 measured NCHW FP32 forwards at 0.41× the NHWC
// time summed over the zoo's shapes, and TF32 at 1.75×).  So a profile may carry, per convolution geometry,
// layout, math class and pass, the time measured at a few batches (validation/ops/conv_bench.py, fitted by
// `roofplan calibrate`), stored as an efficiency against the pass's roofline on the GPU that measured it:
//     efficiency = max(2·MACs / peak, bytes / bandwidth) / measured seconds
// (the peak of the pass's math class, the datasheet bandwidth).  A prediction on any GPU divides that GPU's own
// roofline time by it — a fraction of its own peaks, as every other efficiency.  Between measured batches the
// efficiency is linear in the batch; outside them it keeps the nearest batch's.  Convolutions not in the table
// keep the math class's factor (`EfficiencyProfile::conv_factor`).
//
// The table is a view: the built-in tables are static, and the tables that calibration or a profile file make at
// run time are kept for the life of the process (`keep`), so a profile stays plain data that copies in O(1).
#pragma once

#include <roofplan/detail/checked.hpp>
#include <roofplan/device/device.hpp>
#include <roofplan/layers/detail_conv.hpp>
#include <roofplan/work.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <deque>
#include <initializer_list>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

namespace roofplan {

/// The tensors' memory layout, which selects cuDNN's kernels.
enum class ConvLayout : std::uint8_t { nchw, nhwc };
template <>
struct EnumNames<ConvLayout> {
    static constexpr std::string_view field = "layout";
    static constexpr std::array<std::string_view, 2> names{"nchw", "nhwc"};
};

namespace detail {
/// FNV-1a (64-bit) over `values`, each as 8 little-endian bytes; never 0 (0 marks a kernel without a measured shape).
/// scripts/gen_measured_tables.py computes the same keys for the generated tables.
constexpr std::uint64_t shape_key(std::initializer_list<std::int64_t> values) {
    std::uint64_t h = 14695981039346656037ull;
    for (std::int64_t v : values)
        for (int byte = 0; byte < 8; ++byte) {
            h ^= (static_cast<std::uint64_t>(v) >> (8 * byte)) & 0xffu;
            h *= 1099511628211ull;
        }
    return h == 0 ? 1 : h;
}
}  // namespace detail

/// A convolution's geometry and layout (the batch excluded), and a 64-bit key of it (FNV-1a over the fields).
struct ConvGeometry {
    std::int64_t in_channels = 0, out_channels = 0, in_h = 0, in_w = 0, kernel_h = 0, kernel_w = 0, stride_h = 0,
                 stride_w = 0, pad_h = 0, pad_w = 0, dilation_h = 0, dilation_w = 0, groups = 0;
    ConvLayout layout = ConvLayout::nchw;
    constexpr bool operator==(const ConvGeometry&) const = default;

    static constexpr ConvGeometry of(const layers::Conv2DConfig& c, ConvLayout layout) {
        return {c.in_channels, c.out_channels, c.in_height, c.in_width, c.kernel.h, c.kernel.w, c.stride.h,
                c.stride.w, c.padding.h, c.padding.w, c.dilation.h, c.dilation.w, c.groups, layout};
    }
    /// The Conv2D configuration of the geometry (no bias: the measured passes leave it out).
    [[nodiscard]] constexpr layers::Conv2DConfig config() const {
        layers::Conv2DConfig c;
        c.in_channels = in_channels, c.out_channels = out_channels, c.in_height = in_h, c.in_width = in_w;
        c.kernel = {kernel_h, kernel_w}, c.stride = {stride_h, stride_w}, c.padding = {pad_h, pad_w};
        c.dilation = {dilation_h, dilation_w}, c.groups = groups, c.bias = false;
        return c;
    }
    /// Never 0 (0 marks a kernel without a measured shape).
    [[nodiscard]] constexpr std::uint64_t key() const {
        return detail::shape_key({in_channels, out_channels, in_h, in_w, kernel_h, kernel_w, stride_h, stride_w, pad_h,
                                  pad_w, dilation_h, dilation_w, groups, static_cast<std::int64_t>(layout)});
    }
};

/// One convolution pass measured at one batch, as an efficiency against its roofline (see the top of the file).
struct MeasuredConv {
    ConvGeometry geometry;
    std::uint64_t key = 0;  ///< geometry.key()
    MathClass math = MathClass::fp32;
    Pass pass = Pass::forward;
    /// The pass's layout conversions (TF32 on NCHW tensors: cuDNN converts to NHWC and back), whose efficiency is
    /// against their bytes at the datasheet bandwidth, rather than the pass's own kernels.
    bool conversions = false;
    double batch = 0;
    double efficiency = 0;
    /// Kernels the pass launches per call, its TF32 conversions excepted (they have entries of their own): cuDNN's
    /// FFT and Winograd algorithms run several, a filter gradient zeroes a workspace (0: not measured, one).
    double kernels = 0;

    /// The table's order: by shape, math class, pass, kernels before conversions, then batch.
    [[nodiscard]] constexpr auto order() const { return std::tuple(key, math, pass, conversions, batch); }
    [[nodiscard]] constexpr double coordinate() const { return batch; }
};

/// The datasheet roofs of the GPU that measured a table: its efficiencies are fractions of that GPU's roofline, and
/// a prediction on another GPU moves each measured pass by what bound it there (engine/roofline.hpp, `measured`).
/// All zero: the predicted GPU's own.
struct MeasuredOn {
    PeakRates peak{};
    double bandwidth_gb_s = 0;
    [[nodiscard]] static constexpr MeasuredOn of(const Device& d) { return {d.peak, d.bandwidth_gb_s}; }
};

/// What a measured table says of a pass at a point: its efficiency (0: not in the table) and its kernels per call.
struct MeasuredPoint {
    double efficiency = 0;
    double kernels = 0;
};

namespace detail {
/// A measured table's groups (the entries of one shape, math class, pass and part) in table order: a search over
/// these 16-byte records, which stay in the first-level cache, finds a group's entries without touching the table
/// (a ResNet-50 step looks up some 250 passes).  A group's entries are [begin, the next group's begin); a sentinel
/// (key 0, begin = the table's size) ends the list.
struct MeasuredGroup {
    std::uint64_t key = 0;
    std::uint32_t tag = 0;    ///< math class, pass and part (`group_tag`), ordered as the table orders them
    std::uint32_t begin = 0;  ///< the group's first entry
};
/// An entry's coordinate, efficiency and kernels per call, in table order: what a lookup reads of a group,
/// 24 bytes instead of the entry's 160.
struct MeasuredSample {
    double coordinate = 0, efficiency = 0, kernels = 0;
};
/// A table's groups and samples, and a hash of the groups: `slots` (a power of two, at least twice the groups) holds
/// 1 + a group's index at the slot of its key and tag or after it (linear probing), 0 where empty.  Empty: the
/// table itself is searched.
struct MeasuredIndex {
    std::span<const MeasuredGroup> groups{};
    std::span<const MeasuredSample> samples{};
    std::span<const std::uint32_t> slots{};
};
/// The hash slots for `groups` groups (the sentinel included).
constexpr std::size_t slot_count(std::size_t groups) { return std::bit_ceil(std::max<std::size_t>(2, 2 * groups)); }
constexpr std::size_t slot_of(std::uint64_t key, std::uint32_t tag, std::size_t slots) {
    const std::uint64_t h = (key ^ (static_cast<std::uint64_t>(tag) << 40)) * 0x9E3779B97F4A7C15ull;
    return static_cast<std::size_t>(h >> (64 - std::countr_zero(slots)));
}
template <class Groups, class Out>
constexpr void fill_slots(const Groups& groups, Out& out) {
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = 0;
    for (std::size_t g = 0; g + 1 < groups.size(); ++g) {
        std::size_t at = slot_of(groups[g].key, groups[g].tag, out.size());
        while (out[at] != 0) at = (at + 1) & (out.size() - 1);
        out[at] = static_cast<std::uint32_t>(g + 1);
    }
}
constexpr std::uint32_t group_tag(MathClass math, Pass pass, bool conversions) {
    return static_cast<std::uint32_t>(math) << 16 | static_cast<std::uint32_t>(pass) << 8 | (conversions ? 1u : 0u);
}
template <class Entry>
constexpr bool same_group(const Entry& a, const Entry& b) {
    return a.key == b.key && a.math == b.math && a.pass == b.pass && a.conversions == b.conversions;
}
/// The groups of a table sorted by `order()`, the sentinel included.
template <class Entry>
constexpr std::size_t group_count(std::span<const Entry> entries) {
    std::size_t n = 1;
    for (std::size_t i = 0; i < entries.size(); ++i) n += i == 0 || !same_group(entries[i - 1], entries[i]) ? 1 : 0;
    return n;
}
template <class Entry, class Out>
constexpr void fill_groups(std::span<const Entry> entries, Out& out) {
    std::size_t g = 0;
    for (std::size_t i = 0; i < entries.size(); ++i)
        if (i == 0 || !same_group(entries[i - 1], entries[i]))
            out[g++] = {entries[i].key, group_tag(entries[i].math, entries[i].pass, entries[i].conversions),
                        static_cast<std::uint32_t>(i)};
    out[g] = {0, 0, static_cast<std::uint32_t>(entries.size())};
}
template <class Entry, class Out>
constexpr void fill_samples(std::span<const Entry> entries, Out& out) {
    for (std::size_t i = 0; i < entries.size(); ++i)
        out[i] = {entries[i].coordinate(), entries[i].efficiency, entries[i].kernels};
}
/// The groups and samples of a built-in (constexpr) table, computed by the compiler:
/// `groups_of<group_count(t)>(t)`, `samples_of<t.size()>(t)`.
template <std::size_t N, class Entry>
consteval std::array<MeasuredGroup, N> groups_of(std::span<const Entry> entries) {
    std::array<MeasuredGroup, N> out{};
    fill_groups(entries, out);
    return out;
}
template <std::size_t N, class Entry>
consteval std::array<MeasuredSample, N> samples_of(std::span<const Entry> entries) {
    std::array<MeasuredSample, N> out{};
    fill_samples(entries, out);
    return out;
}
template <std::size_t N, std::size_t G>
consteval std::array<std::uint32_t, N> slots_of(const std::array<MeasuredGroup, G>& groups) {
    std::array<std::uint32_t, N> out{};
    fill_slots(groups, out);
    return out;
}

constexpr double coordinate_of(const MeasuredSample& s) { return s.coordinate; }
template <class Entry>
constexpr double coordinate_of(const Entry& e) { return e.coordinate(); }
/// The point at `x` of one group's entries or samples [first, last), in coordinate order: the first at or after x
/// and the one before it bracket x.
template <class Row>
constexpr MeasuredPoint bracket(const Row* first, const Row* last, double x) {
    const Row* hi = first;
    while (hi != last && coordinate_of(*hi) < x) ++hi;
    if (hi == first) return {hi->efficiency, hi->kernels};  // at or below the first measured point
    const Row& lo = *(hi - 1);
    if (hi == last) return {lo.efficiency, lo.kernels};      // above the last one
    const double a = coordinate_of(lo), b = coordinate_of(*hi);
    return {lo.efficiency + (hi->efficiency - lo.efficiency) * (x - a) / (b - a), x - a <= b - x ? lo.kernels : hi->kernels};
}

/// The point of a table sorted by `order()` (key, math class, pass, part, coordinate) for one shape, math class,
/// pass and part at `x`: the efficiency linear in the coordinate between measured points, the nearest point's
/// outside them, and the kernels per call of the nearest point; {} when the table has no such entry.  With the
/// table's index the group is found by its hash, else by a search over the table itself.
template <class Entry>
constexpr MeasuredPoint measured_point(std::span<const Entry> entries, const MeasuredIndex& index,
                                       std::uint64_t key, MathClass math, Pass pass, bool conversions, double x) {
    if (!index.slots.empty()) {
        const std::uint32_t tag = group_tag(math, pass, conversions);
        const std::size_t mask = index.slots.size() - 1;
        for (std::size_t at = slot_of(key, tag, index.slots.size());; at = (at + 1) & mask) {
            const std::uint32_t slot = index.slots[at];
            if (slot == 0) return {};
            const MeasuredGroup& g = index.groups[slot - 1];
            if (g.key == key && g.tag == tag)
                return bracket(index.samples.data() + g.begin, index.samples.data() + index.groups[slot].begin, x);
        }
    }
    const Entry* first = nullptr;  // the group's entries
    const Entry* last = nullptr;
    {
        const auto in_group = [&](const Entry& e) {
            return e.key == key && e.math == math && e.pass == pass && e.conversions == conversions;
        };
        const auto target = std::tuple(key, math, pass, conversions, x);
        const auto at = std::lower_bound(entries.begin(), entries.end(), target,
                                         [](const Entry& e, const auto& t) { return e.order() < t; });
        const bool at_in = at != entries.end() && in_group(*at);
        const bool before_in = at != entries.begin() && in_group(*(at - 1));
        if (!at_in && !before_in) return {};
        first = before_in ? &*(at - 1) : &*at;
        last = at_in ? &*at + 1 : &*at;
    }
    return bracket(first, last, x);
}

/// A table kept for the life of the process, with its groups.
template <class Entry>
struct KeptTable {
    std::vector<Entry> entries;
    std::vector<MeasuredGroup> groups;
    std::vector<MeasuredSample> samples;
    std::vector<std::uint32_t> slots;
};
template <class Entry>
struct KeptView {
    std::span<const Entry> entries;
    MeasuredIndex index;
};

/// Sorts and checks a measured table and keeps it, with its groups, for the life of the process (one store per
/// entry type); an equal table already kept is returned instead.  `noun` names an entry in errors ("measured
/// convolution"), `coordinate` its coordinate ("batch").
template <class Entry>
KeptView<Entry> keep_measured(std::vector<Entry> entries, std::string_view where, std::string_view noun,
                                     std::string_view coordinate, std::size_t cap) {
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) { return a.order() < b.order(); });
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        if (!(e.efficiency > 0 && e.efficiency <= 8))
            fail(where, ": a ", noun, "'s efficiency must be in (0, 8], got ", std::to_string(e.efficiency));
        if (!(e.coordinate() >= 1 && e.coordinate() < 1e9)) fail(where, ": a ", noun, "'s ", coordinate, " must be in [1, 1e9)");
        if (!(e.kernels >= 0 && e.kernels <= 1e4)) fail(where, ": a ", noun, "'s kernels per call must be in [0, 1e4]");
        if (e.key != e.geometry.key()) fail(where, ": a ", noun, "'s key does not match its geometry");
        if (i > 0 && entries[i - 1].order() == e.order())
            fail(where, ": two ", noun, "s of one shape, math class, pass, part and ", coordinate, " (",
                 std::to_string(e.coordinate()), ")");
    }
    static std::mutex mutex;
    static std::deque<KeptTable<Entry>> kept;
    static std::size_t total = 0;
    const std::lock_guard<std::mutex> lock(mutex);
    const auto same = [](const Entry& a, const Entry& b) {
        return a.order() == b.order() && a.geometry == b.geometry && a.efficiency == b.efficiency && a.kernels == b.kernels;
    };
    for (const KeptTable<Entry>& k : kept)
        if (std::equal(k.entries.begin(), k.entries.end(), entries.begin(), entries.end(), same))
            return {k.entries, {k.groups, k.samples, k.slots}};
    if (entries.size() > cap - total)
        fail(where, ": ", static_cast<std::int64_t>(entries.size()), " ", noun, "s would exceed the ",
             static_cast<std::int64_t>(cap), " a process keeps");
    total += entries.size();
    KeptTable<Entry> table{std::move(entries), {}, {}, {}};
    const std::span<const Entry> view(table.entries);
    table.groups.resize(group_count(view));
    fill_groups(view, table.groups);
    table.samples.resize(view.size());
    fill_samples(view, table.samples);
    table.slots.resize(slot_count(table.groups.size()));
    fill_slots(table.groups, table.slots);
    kept.push_back(std::move(table));
    const KeptTable<Entry>& k = kept.back();
    return {k.entries, {k.groups, k.samples, k.slots}};
}
}  // namespace detail

/// A sorted table of measured convolutions (a view; see `keep`).
struct MeasuredConvs {
    std::span<const MeasuredConv> entries;
    MeasuredOn on{};  ///< the GPU that measured them
    detail::MeasuredIndex index{};  ///< the entries' groups and samples (empty: the table is searched)

    [[nodiscard]] constexpr bool empty() const { return entries.empty(); }
    using Point = MeasuredPoint;
    /// The efficiency of pass `pass` of the convolution `key` in `math` at `batch` (of its layout conversions when
    /// `conversions`): linear between the measured batches, the nearest measured one's outside them; 0 when the
    /// table has no such convolution.
    [[nodiscard]] constexpr double efficiency(std::uint64_t key, MathClass math, Pass pass, double batch,
                                              bool conversions = false) const {
        return at(key, math, pass, batch, conversions).efficiency;
    }
    /// The efficiency as `efficiency` gives it, and the kernels per call of the nearest measured batch.
    [[nodiscard]] constexpr Point at(std::uint64_t key, MathClass math, Pass pass, double batch,
                                     bool conversions = false) const {
        return detail::measured_point(entries, index, key, math, pass, conversions, batch);
    }
};

/// The most entries a process keeps of each kind of measured table (about 80 bytes each): a process that reads
/// profiles without end (a server, a fuzzer) gets an error instead of growing.
inline constexpr std::size_t max_kept_measured_entries = std::size_t{1} << 22;
inline constexpr std::size_t max_kept_measured_convs = max_kept_measured_entries;

/// Sorts `entries`, checks them, and keeps them for the life of the process (the profiles that view them are
/// plain data); a table equal to one already kept is not kept twice.  Errors: an efficiency outside (0, 8], a
/// batch below 1, kernels per call outside [0, 1e4], a key that does not match its geometry, two entries for one
/// shape, class, pass, part and batch, or more than `max_kept_measured_convs` entries kept in all; `where` names
/// the origin.
inline MeasuredConvs keep(std::vector<MeasuredConv> entries, std::string_view where) {
    const auto kept = detail::keep_measured(std::move(entries), where, "measured convolution", "batch", max_kept_measured_convs);
    return {kept.entries, {}, kept.index};
}

}  // namespace roofplan
