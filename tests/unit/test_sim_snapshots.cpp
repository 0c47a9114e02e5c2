// Block-map snapshots across thinning: the page's scrubber reads every kept
// snapshot, so each one must be a whole block map (thinning once moved the first
// snapshot onto itself and emptied it).
#include <doctest/doctest.h>

#include "sim/simulator.h"

using namespace kvb::sim;

TEST_CASE("every snapshot kept after thinning is a whole block map") {
    SimConfig c;
    c.kv_bytes_per_token = 1000;
    c.kv_capacity_bytes = 2'000'000;  // 125 blocks of 16
    c.max_model_len = 400;
    c.snapshot_every_steps = 2;
    c.max_snapshots = 6;  // far fewer than the run's steps: thinned several times
    std::vector<Request> reqs;
    for (int i = 0; i < 60; ++i) reqs.push_back({0.01 * i, 40 + i, 80 + (i % 7) * 10, 0});
    for (Policy p : {Policy::Paged, Policy::Max}) {
        c.policy = p;
        Simulator sim(c, reqs);
        REQUIRE(sim.ok());
        sim.run(1'000'000);
        REQUIRE(sim.done());
        REQUIRE(sim.steps() > 4 * 2 * 6);
        const auto snaps = sim.snapshots();
        CHECK(snaps.size() >= 3);
        CHECK(snaps.size() <= 6);
        for (size_t i = 0; i < snaps.size(); ++i) {
            CAPTURE(i);
            CHECK(snaps[i].step > 0);
            if (i) CHECK(snaps[i].step > snaps[i - 1].step);
            if (p == Policy::Paged) {
                CHECK(snaps[i].owner.size() == static_cast<size_t>(sim.summary().num_blocks));
                CHECK(snaps[i].refcount.size() == snaps[i].owner.size());
                CHECK(snaps[i].fill.size() == snaps[i].owner.size());
                CHECK(snaps[i].owner[0] == -3);
            } else {
                CHECK(snaps[i].capacity_tokens == sim.summary().capacity_tokens);
            }
        }
    }
}
