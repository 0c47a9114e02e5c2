// Invariants over 10,000 seeded random workloads and configurations, checked after
// every scheduler step: every block is free, cached or owned and never two at once;
// reference counts equal the block tables that hold the block (so never negative);
// token states never exceed allocated slots; buddy books balance; time never goes
// back; the memory split always sums to the capacity; after the last request
// nothing is owned and every request finished or was refused.
#include <doctest/doctest.h>

#include <cmath>

#include "sim/rng.h"
#include "sim/simulator.h"

using namespace kvb::sim;

namespace {

int BuddyAllocator_order(int64_t n) {
    int k = 0;
    while ((int64_t{1} << k) < n) ++k;
    return k;
}

double split_sum(const MemorySplit& m) {
    return m.token_states + m.reserved + m.internal_fragmentation + m.external_fragmentation + m.cached + m.free +
           m.null_block;
}

}  // namespace

TEST_CASE("invariants hold on 10,000 random workloads") {
    Rng r(20231016);
    int64_t total_steps = 0, preemptions = 0, swaps = 0, cow = 0, hits = 0, refused = 0;
    for (int trial = 0; trial < 10000; ++trial) {
        CAPTURE(trial);
        SimConfig c;
        const int pk = static_cast<int>(r.uniform_int(0, 5));
        c.policy = pk <= 2 ? Policy::Paged : pk == 3 ? Policy::Max : pk == 4 ? Policy::Pow2 : Policy::Oracle;
        c.block_size = static_cast<int32_t>(r.uniform_int(1, 8));
        c.kv_bytes_per_token = r.uniform_int(1, 3);
        c.max_model_len = static_cast<int32_t>(r.uniform_int(4, 40));
        const int64_t min_slots =
            c.policy == Policy::Paged
                ? (c.max_model_len + c.block_size - 1) / c.block_size * c.block_size + 2 * c.block_size
                : int64_t{1} << BuddyAllocator_order(c.max_model_len);
        c.kv_capacity_bytes = r.uniform_int(min_slots, min_slots * 4) * c.kv_bytes_per_token;
        c.max_num_seqs = static_cast<int32_t>(r.uniform_int(1, 12));
        c.max_num_batched_tokens = static_cast<int32_t>(r.uniform_int(1, 64));
        const int sharing = static_cast<int>(r.uniform_int(0, 3));
        if (sharing == 1) c.n = static_cast<int32_t>(r.uniform_int(2, std::min<int64_t>(4, c.max_num_seqs)));
        if (sharing == 2) {
            c.beam_width = static_cast<int32_t>(r.uniform_int(2, std::min<int64_t>(4, c.max_num_seqs)));
            c.beam_switches = r.uniform() * 30;
        }
        if (c.n > c.max_num_seqs || c.beam_width > c.max_num_seqs) c.n = c.beam_width = 1;
        c.prefix_caching = c.policy == Policy::Paged && r.chance(0.5);
        c.preemption = r.chance(0.3) ? Preemption::Swap : r.chance(0.5) ? Preemption::V0 : Preemption::Recompute;
        c.independent_sample_lengths = r.chance(0.5);
        c.swap_space_bytes = r.uniform_int(0, 40) * c.kv_bytes_per_token * c.block_size;
        c.overlong = r.chance(0.5) ? Overlong::Truncate : Overlong::Refuse;
        c.seed = r.next();
        c.latency.step_overhead_s = 0.001 * static_cast<double>(r.uniform_int(1, 5));
        c.latency.bandwidth_bytes_per_s = r.chance(0.5) ? 1e6 : 0;
        c.latency.weights_bytes = 1000;
        c.series_points = static_cast<int32_t>(r.uniform_int(1, 8));

        std::vector<Request> reqs;
        const int64_t nreq = r.uniform_int(1, 14);
        double t = 0;
        const int32_t prefix = static_cast<int32_t>(r.uniform_int(0, 10));
        for (int64_t i = 0; i < nreq; ++i) {
            if (r.chance(0.6)) t += r.uniform() * 0.05;
            Request q;
            q.arrival_s = t;
            q.prompt_tokens = static_cast<int32_t>(r.uniform_int(1, c.max_model_len + 4));
            q.output_tokens = static_cast<int32_t>(r.uniform_int(1, c.max_model_len));
            if (prefix > 0 && r.chance(0.5)) {
                q.prefix_tokens = prefix;
                q.prompt_tokens += prefix;
            }
            reqs.push_back(q);
        }

        Simulator sim(c, reqs);
        REQUIRE_MESSAGE(sim.ok(), sim.error_message());
        double last = 0;
        int64_t guard = 0;
        while (!sim.done()) {
            sim.run(1);
            REQUIRE_MESSAGE(sim.ok(), sim.error_message());
            REQUIRE(sim.now_s() >= last);
            last = sim.now_s();
            const std::string e = sim.check_invariants();
            REQUIRE_MESSAGE(e.empty(), e);
            REQUIRE(++guard < 200000);  // progress: no livelock
        }
        const std::string e = sim.check_invariants();
        REQUIRE_MESSAGE(e.empty(), e);
        const Summary s = sim.summary();
        REQUIRE(s.finished + s.refused == s.requests);
        if (s.steps > 0) REQUIRE(std::fabs(split_sum(s.memory) - 1.0) < 1e-9);
        if (measured(s.memory.free)) {
            REQUIRE(std::fabs(split_sum(s.memory) - 1.0) < 1e-9);
            REQUIRE(s.memory.token_states >= 0);
            REQUIRE(s.memory.internal_fragmentation >= -1e-12);
            REQUIRE(s.memory.reserved >= 0);
        } else {  // no time passed: every request refused as it arrived at t = 0
            REQUIRE(s.finished == 0);
            REQUIRE_FALSE(measured(s.mean_running));
        }
        // A latency or a throughput is a measurement exactly when a request finished.
        REQUIRE(measured(s.e2e_p50_s) == (s.finished > 0));
        REQUIRE(measured(s.throughput_tokens_per_s) == (s.finished > 0));
        for (const TimePoint& p : sim.series()) {
            REQUIRE(std::fabs(split_sum(p.memory) - 1.0) < 1e-9);
        }
        total_steps += s.steps;
        preemptions += s.preemptions;
        swaps += s.swapped_out;
        cow += s.cow_copies;
        hits += s.prefix_hit_tokens;
        refused += s.refused;
    }
    // The random space must actually exercise the interesting paths.
    CHECK(total_steps > 100000);
    CHECK(preemptions > 1000);
    CHECK(swaps > 100);
    CHECK(cow > 1000);
    CHECK(hits > 1000);
    CHECK(refused > 100);
}

TEST_CASE("same config and workload give bit-identical results") {
    SimConfig c;
    c.kv_bytes_per_token = 819200;
    c.kv_capacity_bytes = int64_t{2} << 30;
    c.beam_width = 3;
    c.prefix_caching = true;
    c.latency.bandwidth_bytes_per_s = 1.5e12;
    c.latency.weights_bytes = 26e9;
    std::vector<Request> reqs;
    Rng r(9);
    for (int i = 0; i < 300; ++i)
        reqs.push_back(
            {i * 0.1, static_cast<int32_t>(r.uniform_int(1, 500)), static_cast<int32_t>(r.uniform_int(1, 500)), 0});
    auto a = simulate(c, reqs);
    auto b = simulate(c, reqs);
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->summary.makespan_s == b->summary.makespan_s);
    CHECK(a->summary.memory.token_states == b->summary.memory.token_states);
    CHECK(a->summary.sharing_saved == b->summary.sharing_saved);
    CHECK(a->summary.preemptions == b->summary.preemptions);
    REQUIRE(a->series.size() == b->series.size());
    for (size_t i = 0; i < a->series.size(); ++i) CHECK(a->series[i].memory.free == b->series[i].memory.free);
}

TEST_CASE("the time series stays bounded and covers the run") {
    SimConfig c;
    c.kv_bytes_per_token = 1000;
    c.kv_capacity_bytes = 2'000'000;
    c.series_points = 50;
    c.max_model_len = 100;
    c.latency.step_overhead_s = 0.01;
    std::vector<Request> reqs;
    for (int i = 0; i < 2000; ++i) reqs.push_back({i * 0.5, 50, 20, 0});
    auto r = simulate(c, reqs);
    REQUIRE(r);
    CHECK(r->series.size() <= 100);
    CHECK(r->series.size() >= 50);
    const TimePoint& last = r->series.back();
    CHECK(last.time_s + last.duration_s >= r->summary.makespan_s);
    int64_t fin = 0;
    for (const TimePoint& p : r->series) fin += p.finished;
    CHECK(fin == 2000);
}

TEST_CASE("snapshots are kept every N steps and thinned beyond the limit") {
    SimConfig c;
    c.kv_bytes_per_token = 1000;
    c.kv_capacity_bytes = 2'000'000;
    c.latency.step_overhead_s = 0.01;
    c.snapshot_every_steps = 10;
    c.max_snapshots = 8;
    c.max_model_len = 100;
    std::vector<Request> reqs;
    for (int i = 0; i < 50; ++i) reqs.push_back({0, 30, 40, 0});
    Simulator sim(c, reqs);
    sim.run(1000000);
    REQUIRE(sim.done());
    const auto snaps = sim.snapshots();
    CHECK(snaps.size() <= 8);
    CHECK(snaps.size() >= 4);
    for (size_t i = 1; i < snaps.size(); ++i) CHECK(snaps[i].step > snaps[i - 1].step);
    CHECK(snaps[0].owner.size() == static_cast<size_t>(sim.summary().num_blocks));
}
