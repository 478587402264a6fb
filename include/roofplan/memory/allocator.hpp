// roofplan/memory/allocator.hpp — PyTorch's CUDA caching allocator as a model: how a request becomes a block and
// blocks become cudaMalloc'd segments, so that `reserved` is predicted as well as `allocated`.
//
// The rules, from c10/cuda/CUDACachingAllocator.cpp (PyTorch 2.x with its default configuration: no
// PYTORCH_CUDA_ALLOC_CONF, so expandable_segments off, max_split_size unlimited, roundup_power2_divisions off,
// no garbage-collection threshold):
//   * round_size: a request is rounded up to a multiple of 512 bytes (kMinBlockSize), and is at least 512;
//   * get_pool: rounded requests of at most 1 MiB (kSmallSize) are served by the small pool, others by the large;
//   * get_allocation_size: a new segment (one cudaMalloc) is 2 MiB (kSmallBuffer) for the small pool, 20 MiB
//     (kLargeBuffer) for requests under 10 MiB (kMinLargeAlloc), else the request rounded up to 2 MiB
//     (kRoundLarge);
//   * get_free_block: best fit — the smallest cached free block of the pool that holds the request (blocks are
//     ordered by size, then address);
//   * should_split / alloc_found_block: the found block is split when what remains is at least 512 bytes (small
//     pool) or more than 1 MiB (large pool); the request takes the low part.  Otherwise the request gets the whole
//     block, and `memory_allocated` counts the whole block;
//   * free_block / try_merge_blocks: a freed block merges with the free neighbours of its segment;
//   * alloc_block failing (over the device's memory): release_cached_blocks frees every cached segment that is
//     entirely free and the cudaMalloc is tried once more; a second failure is the out-of-memory error;
//   * emptyCache (torch.cuda.empty_cache, and cuDNN's algorithm search, aten/src/ATen/native/cudnn/Conv_v7.cpp
//     findAlgorithms) frees every cached segment that is entirely free.
// `allocated` is the sum of the blocks handed out (torch.cuda.memory_allocated), `reserved` the sum of the
// segments (torch.cuda.memory_reserved).
//
// What is approximate: one stream (a training step's tensors all live on the default stream); the addresses of
// segments are unknown, so ties between equal free blocks go to the older segment; the oversize-block rules of
// max_split_size and the garbage collector are not modelled (both off by default).
#pragma once

#include <roofplan/detail/checked.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace roofplan::memory {

/// The allocator's constants (c10/cuda/CUDACachingAllocator.cpp).
inline constexpr std::int64_t min_block_bytes = 512;                ///< kMinBlockSize
inline constexpr std::int64_t small_request_bytes = 1 << 20;        ///< kSmallSize: largest small request
inline constexpr std::int64_t small_segment_bytes = 2 << 20;        ///< kSmallBuffer
inline constexpr std::int64_t large_buffer_bytes = 20 << 20;        ///< kLargeBuffer, for 1-10 MiB requests
inline constexpr std::int64_t min_large_alloc_bytes = 10 << 20;     ///< kMinLargeAlloc
inline constexpr std::int64_t large_round_bytes = 2 << 20;          ///< kRoundLarge

/// round_size: the block a request of `bytes` takes (a multiple of 512, at least 512).
constexpr std::int64_t round_size(std::int64_t bytes) {
    if (bytes < 0) detail::fail("a tensor of ", bytes, " bytes; sizes must be >= 0");
    if (bytes < min_block_bytes) return min_block_bytes;
    return detail::mul(min_block_bytes, (bytes - 1) / min_block_bytes + 1, "allocation size");
}
/// get_pool: whether a rounded request is served by the small pool.
constexpr bool small_pool(std::int64_t rounded) { return rounded <= small_request_bytes; }
/// get_allocation_size: the segment cudaMalloc'd when no cached block holds a rounded request.
constexpr std::int64_t segment_size(std::int64_t rounded) {
    if (small_pool(rounded)) return small_segment_bytes;
    if (rounded < min_large_alloc_bytes) return large_buffer_bytes;
    return detail::mul(large_round_bytes, (rounded - 1) / large_round_bytes + 1, "segment size");
}
/// should_split: whether a free block of `block` bytes found for a rounded request is split.
constexpr bool splits(std::int64_t block, std::int64_t rounded) {
    const std::int64_t remaining = block - rounded;
    return small_pool(rounded) ? remaining >= min_block_bytes : remaining > small_request_bytes;
}

/// The caching allocator's bookkeeping, replayed over a sequence of requests and frees.  `limit` is the memory
/// the allocator may reserve (the device's memory less the CUDA context); a request that cannot be met even
/// after freeing the cached segments returns `out_of_memory`.  Reusable: `reset` keeps the storage.
///
///     CachingAllocator a;
///     const auto x = a.allocate(3 << 20);   // a 20 MiB segment, a 3 MiB block
///     a.free(x);                            // reserved stays 20 MiB: the segment is cached
class CachingAllocator {
public:
    using Handle = std::uint32_t;
    static constexpr Handle out_of_memory = std::numeric_limits<Handle>::max();

    explicit CachingAllocator(std::int64_t limit = std::numeric_limits<std::int64_t>::max()) { reset(limit); }

    /// Forgets every block and segment; the next requests start from an empty device.
    void reset(std::int64_t limit = std::numeric_limits<std::int64_t>::max()) {
        limit_ = limit;
        blocks_.clear();
        free_slots_.clear();
        for (std::vector<Key>& c : cached_) c.clear();
        segments_.clear();
        allocated_ = reserved_ = peak_allocated_ = peak_reserved_ = 0;
    }

    /// A block for a request of `bytes` (a handle, or `out_of_memory`).
    Handle allocate(std::int64_t bytes) {
        const std::int64_t size = round_size(bytes);
        const bool small = small_pool(size);
        Handle found = best_fit(small, size);
        if (found == out_of_memory) {
            found = new_segment(small, size);
            if (found == out_of_memory) return out_of_memory;
        }
        Block& b = blocks_[found];
        if (splits(b.size, size)) {
            const Handle rest = make_block(b.segment, b.offset + size, b.size - size, small);
            Block& head = blocks_[found];  // make_block may have moved the storage
            blocks_[rest].prev = found;
            blocks_[rest].next = head.next;
            if (head.next != none) blocks_[head.next].prev = rest;
            head.next = rest;
            head.size = size;
            cache(rest);
        }
        Block& taken = blocks_[found];
        taken.allocated = true;
        allocated_ += taken.size;
        peak_allocated_ = std::max(peak_allocated_, allocated_);
        return found;
    }

    /// Returns a block to the cache, merged with its free neighbours.
    void free(Handle h) {
        Block& b = blocks_[h];
        if (!b.allocated) detail::fail("internal error: a block freed twice");
        b.allocated = false;
        allocated_ -= b.size;
        Handle merged = h;
        const Handle next = blocks_[merged].next;
        if (next != none && !blocks_[next].allocated) merge_into(merged, next);
        const Handle prev = blocks_[merged].prev;
        if (prev != none && !blocks_[prev].allocated) {
            merge_into(prev, merged);
            merged = prev;
        }
        cache(merged);
    }

    /// emptyCache: frees (cudaFree) every segment that is one free block.
    void empty_cache() {
        for (Segment& s : segments_) {
            if (!s.live) continue;
            const Block& b = blocks_[s.first];
            if (b.allocated || b.next != none) continue;
            uncache(s.first);
            release(s.first);
            reserved_ -= s.size;
            s.live = false;
        }
    }

    /// The block a handle holds (the rounded request, or the whole unsplit block).
    [[nodiscard]] std::int64_t block_bytes(Handle h) const { return blocks_[h].size; }
    [[nodiscard]] std::int64_t allocated() const { return allocated_; }
    [[nodiscard]] std::int64_t reserved() const { return reserved_; }
    [[nodiscard]] std::int64_t peak_allocated() const { return peak_allocated_; }
    [[nodiscard]] std::int64_t peak_reserved() const { return peak_reserved_; }
    /// torch.cuda.reset_peak_memory_stats: the peaks restart from the current figures.
    void reset_peaks() {
        peak_allocated_ = allocated_;
        peak_reserved_ = reserved_;
    }

private:
    static constexpr Handle none = out_of_memory;
    struct Block {
        std::uint32_t segment = 0;
        std::int64_t offset = 0, size = 0;
        Handle prev = none, next = none;
        bool small = false, allocated = false;
    };
    struct Segment {
        std::int64_t size = 0;
        Handle first = none;
        bool live = false;
    };
    /// A free block in best-fit order within its pool: size, then "address" (segment, offset).
    struct Key {
        std::int64_t size = 0;
        std::uint32_t segment = 0;
        std::int64_t offset = 0;
        Handle block = none;
        [[nodiscard]] bool operator<(const Key& o) const {
            if (size != o.size) return size < o.size;
            return segment != o.segment ? segment < o.segment : offset < o.offset;
        }
        [[nodiscard]] bool operator==(const Key& o) const {
            return size == o.size && segment == o.segment && offset == o.offset;
        }
    };
    [[nodiscard]] Key key(Handle h) const {
        const Block& b = blocks_[h];
        return {b.size, b.segment, b.offset, h};
    }
    /// The cached blocks, one sorted vector per pool: a replay holds tens to hundreds of them, where a contiguous
    /// insert costs less than a tree node's allocation (std::set took 4/5 of an eager memory estimate).
    [[nodiscard]] std::vector<Key>& pool(Handle h) { return cached_[blocks_[h].small ? 1 : 0]; }
    void cache(Handle h) {
        std::vector<Key>& c = pool(h);
        const Key k = key(h);
        c.insert(std::lower_bound(c.begin(), c.end(), k), k);
    }
    /// Removes a block from the cache if it is there (a block just freed, merged into its neighbour, is not yet).
    void uncache(Handle h) {
        std::vector<Key>& c = pool(h);
        const Key k = key(h);
        const auto it = std::lower_bound(c.begin(), c.end(), k);
        if (it != c.end() && *it == k) c.erase(it);
    }

    Handle best_fit(bool small, std::int64_t size) {
        std::vector<Key>& c = cached_[small ? 1 : 0];
        const auto it = std::lower_bound(c.begin(), c.end(), Key{size, 0, 0, none});
        if (it == c.end()) return none;
        const Handle h = it->block;
        c.erase(it);
        return h;
    }
    /// A new segment for a request (alloc_block), retried once after freeing the cached segments.
    Handle new_segment(bool small, std::int64_t size) {
        const std::int64_t bytes = segment_size(size);
        if (bytes > limit_ - reserved_) {
            empty_cache();
            if (bytes > limit_ - reserved_) return none;
        }
        reserved_ += bytes;
        peak_reserved_ = std::max(peak_reserved_, reserved_);
        const auto segment = static_cast<std::uint32_t>(segments_.size());
        const Handle h = make_block(segment, 0, bytes, small);
        segments_.push_back({bytes, h, true});
        return h;
    }
    Handle make_block(std::uint32_t segment, std::int64_t offset, std::int64_t size, bool small) {
        Block b;
        b.segment = segment;
        b.offset = offset;
        b.size = size;
        b.small = small;
        if (!free_slots_.empty()) {
            const Handle h = free_slots_.back();
            free_slots_.pop_back();
            blocks_[h] = b;
            return h;
        }
        blocks_.push_back(b);
        return static_cast<Handle>(blocks_.size() - 1);
    }
    /// Merges the free block `src` (cached, after `dst`) into `dst`.
    void merge_into(Handle dst, Handle src) {
        if (!blocks_[dst].allocated) uncache(dst);
        uncache(src);
        Block& d = blocks_[dst];
        const Block& s = blocks_[src];
        d.size += s.size;
        d.next = s.next;
        if (s.next != none) blocks_[s.next].prev = dst;
        release(src);
    }
    void release(Handle h) { free_slots_.push_back(h); }

    std::int64_t limit_ = 0;
    std::vector<Block> blocks_;
    std::vector<Handle> free_slots_;
    std::vector<Key> cached_[2];  ///< the large pool's, the small pool's
    std::vector<Segment> segments_;
    std::int64_t allocated_ = 0, reserved_ = 0, peak_allocated_ = 0, peak_reserved_ = 0;
};

}  // namespace roofplan::memory
