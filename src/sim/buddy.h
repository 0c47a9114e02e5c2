// A binary buddy allocator over token slots, as the contiguous (Orca-style)
// baselines use: every allocation is rounded up to a power of two and placed at
// an offset aligned to its size, and a freed block merges with its buddy when
// that is free too. A capacity that is not a power of two is covered by its
// binary decomposition (largest chunk first, so every chunk is aligned), which
// is what a real allocator over an odd-sized arena ends up with: memory in the
// small trailing chunks can never hold a large request.
#pragma once
#include <cstdint>
#include <set>
#include <string>
#include <vector>

namespace kvb::sim {

class BuddyAllocator {
public:
    static constexpr int kMaxOrder = 62;

    void init(int64_t capacity_slots);
    int64_t capacity() const { return capacity_; }
    int64_t free_slots() const { return free_slots_; }

    // Smallest order whose block holds `slots` (2^order >= slots).
    static int order_for(int64_t slots);
    // Offset of a block of 2^order slots at the lowest free address among the
    // smallest fitting free blocks; -1 when no free block is large enough.
    int64_t alloc(int order);
    void free(int64_t offset, int order);
    // Exact-size allocation as Linux's alloc_pages_exact does it: take the buddy
    // block of order_for(slots) and give the tail past `slots` straight back to the
    // free lists, so nothing is lost to rounding inside the allocation; what remains
    // is the external fragmentation of the holes between allocations.
    int64_t alloc_exact(int64_t slots);
    void free_exact(int64_t offset, int64_t slots);

    // Free slots in free blocks smaller than 2^order: the part of free memory a
    // request of that order cannot use (external fragmentation).
    int64_t free_below(int order) const;
    // How many blocks of 2^order fit into the empty arena (for refusing requests
    // that can never be placed).
    int64_t fit_count_empty(int order) const;

    std::string check() const;

private:
    void free_range(int64_t begin, int64_t end);
    int64_t capacity_ = 0;
    int64_t free_slots_ = 0;
    std::vector<std::set<int64_t>> free_;  // per order: offsets of free blocks
};

}  // namespace kvb::sim
