// The two allocators on their own: the paged block pool (vLLM v1 BlockPool
// semantics) and the buddy allocator behind the contiguous baselines.
#include <doctest/doctest.h>

#include "sim/block_pool.h"
#include "sim/buddy.h"
#include "sim/rng.h"

using namespace kvb::sim;

TEST_CASE("block pool: null block, FIFO allocation, freed blocks go to the back") {
    BlockPool p;
    p.init(5);
    CHECK(p.free_queue() == std::vector<int32_t>{1, 2, 3, 4});
    CHECK(p.num_free() == 4);
    const int32_t a = p.alloc(), b = p.alloc(), c = p.alloc();
    CHECK(a == 1);
    CHECK(b == 2);
    CHECK(c == 3);
    CHECK(p.num_used() == 3);
    p.add_fill(a, 4);
    p.add_fill(b, 2);
    CHECK(p.used_filled() == 6);
    p.incref(a);  // shared
    p.decref(a);
    CHECK(p.ref(a) == 1);
    p.decref(b);
    p.decref(a);
    CHECK(p.free_queue() == std::vector<int32_t>{4, 2, 1});
    CHECK(p.used_filled() == 0);
    CHECK(p.alloc() == 4);
    CHECK(p.alloc() == 2);
    CHECK(p.alloc() == 1);
    CHECK(p.alloc() == BlockPool::kNone);
    CHECK(p.check() == "");
}

TEST_CASE("block pool: the ring kept without prefix caching hands out the same blocks as the linked queue") {
    BlockPool list, ring;
    list.init(40);
    ring.init(40, true);
    Rng r(5);
    std::vector<int32_t> held;
    for (int i = 0; i < 2000; ++i) {
        if (!held.empty() && (r.chance(0.45) || list.num_free() == 0)) {
            const size_t k = static_cast<size_t>(r.uniform_int(0, static_cast<int64_t>(held.size()) - 1));
            list.decref(held[k]);
            ring.decref(held[k]);
            held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
        } else {
            const int32_t b = list.alloc();
            REQUIRE(ring.alloc() == b);
            list.add_fill(b, 3);
            ring.add_fill(b, 3);
            held.push_back(b);
        }
        REQUIRE(ring.free_queue() == list.free_queue());
    }
    CHECK(ring.used_filled() == list.used_filled());
    CHECK(ring.check() == "");
    // A free block taken from the middle (a cache hit) turns the ring into the linked queue.
    const std::vector<int32_t> q = ring.free_queue();
    REQUIRE(q.size() >= 3);
    ring.incref(q[1]);
    list.incref(q[1]);
    CHECK(ring.free_queue() == list.free_queue());
    CHECK(ring.alloc() == q[0]);
    CHECK(ring.alloc() == q[2]);
    CHECK(ring.check() == "");
}

TEST_CASE("block pool: cached blocks stay findable until evicted in LRU order") {
    BlockPool p;
    p.init(4);
    const int32_t a = p.alloc(), b = p.alloc();
    p.add_fill(a, 4);
    p.add_fill(b, 4);
    p.set_hash(a, 111);
    p.set_hash(b, 222);
    // A second block with the same content is not registered (the first one wins).
    const int32_t c = p.alloc();
    p.set_hash(c, 111);
    CHECK_FALSE(p.cached(c));
    CHECK(p.lookup(111) == a);
    p.decref(c);
    // Tail first, as a finished request frees: b before a.
    p.decref(b);
    p.decref(a);
    CHECK(p.num_cached_free() == 2);
    CHECK(p.lookup(222) == b);
    CHECK(p.free_queue() == std::vector<int32_t>{3, 2, 1});
    // A hit takes the block out of the free queue.
    p.incref(a);
    CHECK(p.num_free() == 2);
    CHECK(p.used_filled() == 4);
    // Allocation evicts from the front: the uncached block, then b (its hash disappears).
    CHECK(p.alloc() == 3);
    CHECK(p.alloc() == 2);
    CHECK(p.lookup(222) == BlockPool::kNone);
    CHECK(p.lookup(111) == a);
    CHECK(p.check() == "");
}

TEST_CASE("block pool: hash map survives many inserts and evictions") {
    BlockPool p;
    p.init(64);
    Rng r(5);
    std::vector<int32_t> held;
    for (int i = 0; i < 20000; ++i) {
        if (held.size() < 40 && r.chance(0.6)) {
            const int32_t b = p.alloc();
            if (b == BlockPool::kNone) continue;
            p.add_fill(b, 16);
            p.set_hash(b, r.next() % 97 + 1);  // many collisions of content on purpose
            held.push_back(b);
        } else if (!held.empty()) {
            const size_t k = static_cast<size_t>(r.uniform_int(0, static_cast<int64_t>(held.size()) - 1));
            p.decref(held[k]);
            held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
        }
        if (i % 97 == 0) REQUIRE(p.check() == "");
    }
    CHECK(p.check() == "");
}

TEST_CASE("buddy: odd capacity is split into aligned power-of-two chunks") {
    BuddyAllocator b;
    b.init(24);  // 16@0 + 8@16
    CHECK(b.fit_count_empty(4) == 1);
    CHECK(b.fit_count_empty(3) == 3);
    CHECK(b.alloc(4) == 0);
    CHECK(b.alloc(4) == -1);
    CHECK(b.alloc(2) == 16);
    CHECK(b.free_slots() == 4);
    CHECK(b.free_below(3) == 4);
    b.free(0, 4);
    b.free(16, 2);
    CHECK(b.free_slots() == 24);
    CHECK(b.alloc(4) == 0);  // merged back
    CHECK(b.check() == "");
}

TEST_CASE("buddy: splitting keeps the low half, freeing merges buddies") {
    BuddyAllocator b;
    b.init(16);
    CHECK(b.alloc(0) == 0);
    CHECK(b.alloc(0) == 1);
    CHECK(b.alloc(1) == 2);
    CHECK(b.alloc(2) == 4);
    CHECK(b.alloc(3) == 8);
    CHECK(b.free_slots() == 0);
    b.free(1, 0);
    b.free(0, 0);
    CHECK(b.free_below(1) == 0);  // 0 and 1 merged into one order-1 block
    CHECK(b.free_below(2) == 2);
    b.free(2, 1);
    b.free(4, 2);
    b.free(8, 3);
    CHECK(b.alloc(4) == 0);
    CHECK(b.check() == "");
}

TEST_CASE("buddy: exact allocation returns the tail, as alloc_pages_exact") {
    BuddyAllocator b;
    b.init(16);
    CHECK(b.alloc_exact(9) == 0);  // from the 16 block; 9..15 handed back as 9, 10-11, 12-15
    CHECK(b.free_slots() == 7);
    CHECK(b.alloc_exact(4) == 12);
    CHECK(b.alloc_exact(2) == 10);
    CHECK(b.alloc_exact(1) == 9);
    CHECK(b.free_slots() == 0);
    b.free_exact(0, 9);
    b.free_exact(9, 1);
    b.free_exact(10, 2);
    b.free_exact(12, 4);
    CHECK(b.free_slots() == 16);
    CHECK(b.alloc(4) == 0);
    CHECK(b.check() == "");
    CHECK(BuddyAllocator::order_for(1) == 0);
    CHECK(BuddyAllocator::order_for(9) == 4);
    CHECK(BuddyAllocator::order_for(2048) == 11);
}

TEST_CASE("buddy: random exact allocations keep the books and always merge back") {
    Rng r(11);
    for (int round = 0; round < 200; ++round) {
        BuddyAllocator b;
        const int64_t cap = r.uniform_int(1, 5000);
        b.init(cap);
        std::vector<std::pair<int64_t, int64_t>> held;
        for (int i = 0; i < 200; ++i) {
            if (r.chance(0.55)) {
                const int64_t n = r.uniform_int(1, 300);
                const int64_t off = b.alloc_exact(n);
                if (off >= 0) {
                    for (auto& h : held) REQUIRE((off + n <= h.first || h.first + h.second <= off));
                    held.emplace_back(off, n);
                }
            } else if (!held.empty()) {
                const size_t k = static_cast<size_t>(r.uniform_int(0, static_cast<int64_t>(held.size()) - 1));
                b.free_exact(held[k].first, held[k].second);
                held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
            }
        }
        REQUIRE(b.check() == "");
        for (auto& h : held) b.free_exact(h.first, h.second);
        REQUIRE(b.free_slots() == cap);
        // Fully merged: the largest chunk of the decomposition is allocatable again.
        int top = 0;
        while ((int64_t{2} << top) <= cap) ++top;
        REQUIRE(b.alloc(top) == 0);
    }
}
