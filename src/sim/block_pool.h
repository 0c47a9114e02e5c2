// The paged KV pool in the manner of vLLM v1's BlockPool: all blocks exist from
// the start, block 0 is the reserved null block, free blocks wait in one queue
// ordered for eviction (LRU at the front), blocks are reference-counted, and with
// prefix caching a full block is findable by the hash chain of its content until
// it is evicted. No allocation after init: every structure is sized to the pool.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace kvb::sim {

class BlockPool {
public:
    static constexpr int32_t kNone = -1;

    // num_blocks includes the null block (>= 2). The prefix-caching hash arrays are
    // made on the first set_hash(): untouched memory costs nothing to a run without it.
    // fifo: blocks leave the free queue only from its front (no prefix caching, so no
    // cache hit takes a free block from the middle): the queue is then kept as a ring
    // of block ids, and taking or returning a block touches its own record and the
    // ring's ends, not the records of its queue neighbours (on a pool of 28K blocks
    // those were two cache misses per block). Same order, same blocks either way; an
    // incref() of a free block turns the ring back into the linked queue.
    void init(int32_t num_blocks, bool fifo = false);

    int32_t num_blocks() const { return num_blocks_; }
    int32_t num_free() const { return num_free_; }                // in the free queue, cached or not
    int32_t num_cached_free() const { return num_cached_free_; }  // free but still findable by hash
    int32_t num_used() const { return num_blocks_ - 1 - num_free_; }
    int64_t used_filled() const { return used_filled_; }  // token slots written in used blocks

    // Takes the block at the front of the free queue (evicting its cached hash).
    // kNone when the queue is empty.
    // Inline, with decref and push_back: the simulator takes and returns every block
    // of every request through them (1.7 million on the Azure trace). The linked
    // queue's path (prefix caching) is out of line: with both paths in it, alloc()
    // had grown past what GCC inlines and was called, ring or not.
    int32_t alloc() {
        if (!fifo_) return alloc_listed();
        if (num_free_ == 0) return kNone;
        const int32_t b = ring_[head_++ & ring_mask_];
        Block& k = blk_[static_cast<size_t>(b)];
        k.in_queue = 0;
        --num_free_;
        if (hashed_) forget_hash(b);  // the simulator hashes only with prefix caching, never fifo
        k.fill = 0;
        k.ref = 1;
        return b;
    }
    // A cache hit on a free block takes it out of the queue.
    void incref(int32_t b);
    // The last reference returns the block to the back of the queue (its hash, if
    // cached, stays findable until the block is allocated again).
    void decref(int32_t b) {
        Block& k = blk_[static_cast<size_t>(b)];
        if (--k.ref == 0) {
            used_filled_ -= k.fill;
            push_back(b);
        }
    }
    void add_fill(int32_t b, int32_t tokens) {
        blk_[static_cast<size_t>(b)].fill += tokens;
        used_filled_ += tokens;
    }
    void set_fill(int32_t b, int32_t tokens) {
        used_filled_ += tokens - blk_[static_cast<size_t>(b)].fill;
        blk_[static_cast<size_t>(b)].fill = tokens;
    }
    int32_t ref(int32_t b) const { return blk_[static_cast<size_t>(b)].ref; }
    int32_t fill(int32_t b) const { return blk_[static_cast<size_t>(b)].fill; }

    // Prefix caching. A full block gets the hash of its content chained to its
    // parent's; it becomes findable unless another block already holds that hash.
    void set_hash(int32_t b, uint64_t h);
    uint64_t hash(int32_t b) const { return hashed_ ? hash_[static_cast<size_t>(b)] : 0; }
    bool cached(int32_t b) const { return blk_[static_cast<size_t>(b)].cached != 0; }
    int32_t lookup(uint64_t h) const;

    // Free-queue order, front (evicted first) to back; for tests and the block map.
    std::vector<int32_t> free_queue() const;
    // Empty when consistent, else what is wrong. O(num_blocks).
    std::string check() const;

private:
    void unlink(int32_t b) {
        Block& k = blk_[static_cast<size_t>(b)];
        blk_[static_cast<size_t>(k.prev)].next = k.next;
        blk_[static_cast<size_t>(k.next)].prev = k.prev;
        k.in_queue = 0;
        --num_free_;
        if (k.cached) --num_cached_free_;
    }
    void push_back(int32_t b) {
        Block& k = blk_[static_cast<size_t>(b)];
        if (fifo_) {
            ring_[tail_++ & ring_mask_] = b;
            k.in_queue = 1;
            ++num_free_;
            if (k.cached) ++num_cached_free_;
            return;
        }
        const int32_t s = num_blocks_;
        Block& sentinel = blk_[static_cast<size_t>(s)];
        const int32_t last = sentinel.prev;
        k.prev = last;
        k.next = s;
        blk_[static_cast<size_t>(last)].next = b;
        sentinel.prev = b;
        k.in_queue = 1;
        ++num_free_;
        if (k.cached) ++num_cached_free_;
    }
    int32_t alloc_listed();       // alloc() from the linked queue
    void forget_hash(int32_t b);  // taken again: no hash, and not findable if it was cached
    void uncache(int32_t b);      // allocated again: its hash is no longer findable
    void ring_to_list();          // fifo no more: the ring's order as the linked queue
    void map_insert(uint64_t h, int32_t b);
    void map_erase(uint64_t h);
    size_t map_slot(uint64_t h) const;

    int32_t num_blocks_ = 0;
    int32_t num_free_ = 0;
    int32_t num_cached_free_ = 0;
    int64_t used_filled_ = 0;
    // One record per block, so taking or returning a block touches one cache line
    // (and its queue neighbours'), not six arrays.
    struct Block {
        int32_t ref = 0, fill = 0;
        int32_t prev = 0, next = 0;  // intrusive free queue; index num_blocks_ is the sentinel
        uint8_t cached = 0, in_queue = 0;
    };
    std::vector<Block> blk_;
    // fifo: the free queue, ring_[head_ .. tail_) (indices masked), instead of prev/next.
    bool fifo_ = false;
    std::vector<int32_t> ring_;
    uint32_t head_ = 0, tail_ = 0, ring_mask_ = 0;
    std::vector<uint64_t> hash_;  // apart: only prefix caching reads it
    bool hashed_ = false;         // set_hash was called: hash_ holds something
    // Open-addressing hash -> block (key 0 = empty slot; real hashes are never 0).
    std::vector<uint64_t> map_keys_;
    std::vector<int32_t> map_vals_;
    size_t map_mask_ = 0;
};

}  // namespace kvb::sim
