#include "sim/block_pool.h"

namespace kvb::sim {

void BlockPool::init(int32_t num_blocks, bool fifo) {
    num_blocks_ = num_blocks;
    fifo_ = fifo;
    uint32_t cap = 1;
    while (fifo && cap < static_cast<uint32_t>(num_blocks)) cap <<= 1;
    ring_.assign(fifo ? cap : 0, 0);
    ring_mask_ = cap - 1;
    head_ = tail_ = 0;
    const size_t n = static_cast<size_t>(num_blocks) + 1;
    blk_.assign(n, Block{});
    hash_.clear();
    const int32_t s = num_blocks_;
    blk_[static_cast<size_t>(s)].prev = blk_[static_cast<size_t>(s)].next = s;
    num_free_ = 0;
    num_cached_free_ = 0;
    hashed_ = false;
    used_filled_ = 0;
    // Block 0 is the null block: never free, never handed out (vLLM pops it first).
    blk_[0].ref = 1;
    for (int32_t b = 1; b < num_blocks; ++b) push_back(b);
    map_keys_.assign(1, 0);  // lookup() finds nothing until set_hash() makes the map
    map_vals_.assign(1, kNone);
    map_mask_ = 0;
}

int32_t BlockPool::alloc_listed() {
    const int32_t b = blk_[static_cast<size_t>(num_blocks_)].next;
    if (b == num_blocks_) return kNone;
    unlink(b);
    Block& k = blk_[static_cast<size_t>(b)];
    if (hashed_) forget_hash(b);
    k.fill = 0;
    k.ref = 1;
    return b;
}

void BlockPool::forget_hash(int32_t b) {
    if (blk_[static_cast<size_t>(b)].cached) uncache(b);
    hash_[static_cast<size_t>(b)] = 0;
}

void BlockPool::uncache(int32_t b) {
    const size_t i = static_cast<size_t>(b);
    map_erase(hash_[i]);
    blk_[i].cached = 0;
}

void BlockPool::ring_to_list() {
    const int32_t s = num_blocks_;
    int32_t last = s;
    for (uint32_t j = head_; j != tail_; ++j) {
        const int32_t b = ring_[j & ring_mask_];
        blk_[static_cast<size_t>(last)].next = b;
        blk_[static_cast<size_t>(b)].prev = last;
        last = b;
    }
    blk_[static_cast<size_t>(last)].next = s;
    blk_[static_cast<size_t>(s)].prev = last;
    fifo_ = false;
    std::vector<int32_t>().swap(ring_);
}

void BlockPool::incref(int32_t b) {
    const size_t i = static_cast<size_t>(b);
    if (blk_[i].ref == 0) {
        if (fifo_) ring_to_list();
        unlink(b);
        used_filled_ += blk_[i].fill;
    }
    ++blk_[i].ref;
}

void BlockPool::set_hash(int32_t b, uint64_t h) {
    const size_t i = static_cast<size_t>(b);
    if (h == 0) h = 1;
    if (!hashed_) {
        hashed_ = true;
        hash_.assign(blk_.size(), 0);
        size_t cap = 16;
        while (cap < 2 * blk_.size()) cap <<= 1;
        map_keys_.assign(cap, 0);
        map_vals_.assign(cap, kNone);
        map_mask_ = cap - 1;
    }
    hash_[i] = h;
    if (!blk_[i].cached && lookup(h) == kNone) {
        map_insert(h, b);
        blk_[i].cached = 1;
    }
}

size_t BlockPool::map_slot(uint64_t h) const {
    // The hashes are already well mixed; fold the high bits in anyway.
    return static_cast<size_t>((h ^ (h >> 29)) & map_mask_);
}

int32_t BlockPool::lookup(uint64_t h) const {
    if (h == 0) h = 1;
    for (size_t s = map_slot(h);; s = (s + 1) & map_mask_) {
        if (map_keys_[s] == 0) return kNone;
        if (map_keys_[s] == h) return map_vals_[s];
    }
}

void BlockPool::map_insert(uint64_t h, int32_t b) {
    size_t s = map_slot(h);
    while (map_keys_[s] != 0) s = (s + 1) & map_mask_;
    map_keys_[s] = h;
    map_vals_[s] = b;
}

void BlockPool::map_erase(uint64_t h) {
    size_t s = map_slot(h);
    while (map_keys_[s] != h) {
        if (map_keys_[s] == 0) return;
        s = (s + 1) & map_mask_;
    }
    // Backward-shift deletion keeps every probe chain unbroken without tombstones.
    size_t hole = s;
    for (size_t j = (hole + 1) & map_mask_; map_keys_[j] != 0; j = (j + 1) & map_mask_) {
        const size_t home = map_slot(map_keys_[j]);
        // Move j into the hole unless its home lies cyclically in (hole, j].
        const bool home_in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!home_in_range) {
            map_keys_[hole] = map_keys_[j];
            map_vals_[hole] = map_vals_[j];
            hole = j;
        }
    }
    map_keys_[hole] = 0;
    map_vals_[hole] = kNone;
}

std::vector<int32_t> BlockPool::free_queue() const {
    std::vector<int32_t> q;
    if (fifo_) {
        for (uint32_t j = head_; j != tail_; ++j) q.push_back(ring_[j & ring_mask_]);
        return q;
    }
    for (int32_t b = blk_[static_cast<size_t>(num_blocks_)].next; b != num_blocks_;
         b = blk_[static_cast<size_t>(b)].next)
        q.push_back(b);
    return q;
}

std::string BlockPool::check() const {
    if (blk_[0].ref != 1 || blk_[0].in_queue) return "the null block was handed out or freed";
    int32_t queued = 0, cached_free = 0, cached_total = 0;
    int64_t filled = 0;
    for (int32_t b = 1; b < num_blocks_; ++b) {
        const size_t i = static_cast<size_t>(b);
        if (blk_[i].ref < 0) return "block " + std::to_string(b) + " has a negative reference count";
        if (blk_[i].ref > 0 && blk_[i].in_queue) return "block " + std::to_string(b) + " is both owned and free";
        if (blk_[i].ref == 0 && !blk_[i].in_queue) return "block " + std::to_string(b) + " is neither owned nor free";
        if (blk_[i].fill < 0) return "block " + std::to_string(b) + " has a negative fill";
        if (blk_[i].in_queue) ++queued;
        if (blk_[i].cached) {
            ++cached_total;
            if (blk_[i].in_queue) ++cached_free;
            if (lookup(hash_[i]) != b) return "cached block " + std::to_string(b) + " is not findable by its hash";
        }
        if (blk_[i].ref > 0) filled += blk_[i].fill;
    }
    if (queued != num_free_) return "free count out of step with the free queue";
    if (cached_free != num_cached_free_) return "cached-free count out of step";
    if (filled != used_filled_) return "filled-slot count out of step";
    int32_t walked = 0;
    if (fifo_) {
        for (int32_t b : free_queue())
            if (!blk_[static_cast<size_t>(b)].in_queue || ++walked > num_free_) return "free queue is corrupt";
    } else {
        for (int32_t b = blk_[static_cast<size_t>(num_blocks_)].next; b != num_blocks_;
             b = blk_[static_cast<size_t>(b)].next) {
            if (!blk_[static_cast<size_t>(b)].in_queue || ++walked > num_free_) return "free queue is corrupt";
        }
    }
    if (walked != num_free_) return "free queue length out of step";
    size_t entries = 0;
    for (size_t s = 0; s < map_keys_.size(); ++s)
        if (map_keys_[s] != 0) {
            ++entries;
            const int32_t b = map_vals_[s];
            if (b <= 0 || b >= num_blocks_ || !blk_[static_cast<size_t>(b)].cached ||
                hash_[static_cast<size_t>(b)] != map_keys_[s])
                return "hash map entry points at a block that does not hold that hash";
        }
    if (entries != static_cast<size_t>(cached_total)) return "hash map size out of step";
    return "";
}

}  // namespace kvb::sim
