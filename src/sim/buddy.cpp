#include "sim/buddy.h"

namespace kvb::sim {

void BuddyAllocator::init(int64_t capacity_slots) {
    capacity_ = capacity_slots;
    free_slots_ = capacity_slots;
    free_.assign(kMaxOrder + 1, {});
    int64_t offset = 0;
    for (int k = kMaxOrder; k >= 0; --k) {
        const int64_t size = int64_t{1} << k;
        if (capacity_slots & size) {
            free_[static_cast<size_t>(k)].insert(offset);
            offset += size;
        }
    }
}

int BuddyAllocator::order_for(int64_t slots) {
    int k = 0;
    while (k < kMaxOrder && (int64_t{1} << k) < slots) ++k;
    return k;
}

int64_t BuddyAllocator::alloc(int order) {
    int k = order;
    while (k <= kMaxOrder && free_[static_cast<size_t>(k)].empty()) ++k;
    if (k > kMaxOrder) return -1;
    auto& from = free_[static_cast<size_t>(k)];
    const int64_t offset = *from.begin();
    from.erase(from.begin());
    // Split down, keeping the low half and freeing the high buddies.
    while (k > order) {
        --k;
        free_[static_cast<size_t>(k)].insert(offset + (int64_t{1} << k));
    }
    free_slots_ -= int64_t{1} << order;
    return offset;
}

void BuddyAllocator::free(int64_t offset, int order) {
    free_slots_ += int64_t{1} << order;
    int k = order;
    while (k < kMaxOrder) {
        const int64_t buddy = offset ^ (int64_t{1} << k);
        auto& level = free_[static_cast<size_t>(k)];
        auto it = level.find(buddy);
        // A buddy outside the arena is never in a free list, so chunks of the
        // decomposition never merge past their own size.
        if (it == level.end()) break;
        level.erase(it);
        offset = offset < buddy ? offset : buddy;
        ++k;
    }
    free_[static_cast<size_t>(k)].insert(offset);
}

void BuddyAllocator::free_range(int64_t begin, int64_t end) {
    // Largest aligned power-of-two pieces, each freed (and merged) on its own.
    while (begin < end) {
        int k = 0;
        while (k < kMaxOrder && begin % (int64_t{2} << k) == 0 && begin + (int64_t{2} << k) <= end) ++k;
        free(begin, k);
        begin += int64_t{1} << k;
    }
}

int64_t BuddyAllocator::alloc_exact(int64_t slots) {
    const int k = order_for(slots);
    const int64_t off = alloc(k);
    if (off < 0) return -1;
    free_range(off + slots, off + (int64_t{1} << k));
    return off;
}

void BuddyAllocator::free_exact(int64_t offset, int64_t slots) {
    free_range(offset, offset + slots);
}

int64_t BuddyAllocator::free_below(int order) const {
    int64_t s = 0;
    for (int k = 0; k < order && k <= kMaxOrder; ++k)
        s += static_cast<int64_t>(free_[static_cast<size_t>(k)].size()) << k;
    return s;
}

int64_t BuddyAllocator::fit_count_empty(int order) const {
    int64_t n = 0;
    for (int k = order; k <= kMaxOrder; ++k)
        if (capacity_ & (int64_t{1} << k)) n += int64_t{1} << (k - order);
    return n;
}

std::string BuddyAllocator::check() const {
    int64_t total = 0;
    for (int k = 0; k <= kMaxOrder; ++k)
        for (int64_t off : free_[static_cast<size_t>(k)]) {
            if (off % (int64_t{1} << k) != 0) return "free block not aligned to its size";
            if (off + (int64_t{1} << k) > capacity_) return "free block past the end of the arena";
            total += int64_t{1} << k;
        }
    if (total != free_slots_) return "free slot count out of step";
    return "";
}

}  // namespace kvb::sim
