// Sequence groups (parallel samples, beams) under preemption, worked out by hand,
// and samples with their own output lengths. Steps cost exactly 1 s.
#include <doctest/doctest.h>

#include "sim/simulator.h"

using namespace kvb::sim;

namespace {

SimConfig tiny(int64_t capacity_bytes, Preemption p) {
    SimConfig c;
    c.policy = Policy::Paged;
    c.kv_bytes_per_token = 1;
    c.kv_capacity_bytes = capacity_bytes;
    c.block_size = 4;
    c.max_model_len = 16;
    c.max_num_seqs = 8;
    c.max_num_batched_tokens = 100;
    c.latency.step_overhead_s = 1.0;
    c.latency.seq_overhead_s = 0;
    c.latency.swap_bytes_per_s = 0;
    c.preemption = p;
    c.swap_space_bytes = 1000;  // 250 blocks of 4 bytes
    c.n = 2;
    c.independent_sample_lengths = false;
    return c;
}

// Two requests of n = 2 samples, prompt 4 (one block), 8 output tokens each, in 7
// usable blocks of 4. Step 1 prefills both and forks (prompt blocks 1, 2 shared by
// each pair); step 2 gives each of the 4 sequences its own block (6 used, 1 free);
// steps 3-5 fill them (8 tokens stored per sequence, 5 sampled). Step 6 needs a
// block per sequence: R0 needs 2, 1 is free, so the newest group, R1, is preempted.
const std::vector<Request> two_groups = {{0, 4, 8, 0}, {0, 4, 8, 0}};

}  // namespace

// vLLM v0: a group of two sequences is swapped out, never recomputed. R1's 3 unique
// blocks go to CPU memory; R0 finishes in step 8, R1's blocks come back in step 9
// (a step of its own: swap-ins are scheduled after the running requests) and it
// samples its remaining 3 tokens in steps 10-12.
TEST_CASE("v0 preemption swaps a group of samples out and back in, recomputing nothing") {
    auto r = simulate(tiny(32, Preemption::V0), two_groups);
    REQUIRE(r);
    const Summary& s = r->summary;
    CHECK(s.preemptions == 1);
    CHECK(s.swapped_out == 1);
    CHECK(s.swap_fallbacks == 0);
    CHECK(s.recomputed_tokens == 0);
    CHECK(s.finished == 2);
    CHECK(s.generated_tokens == 2 * 2 * 8);
    CHECK(s.makespan_s == 12.0);
}

// vLLM v1 (recompute only): R1's 8 stored tokens per sequence are dropped. The
// shared 4-token prompt is counted once: 4 + 2 x 4 = 12 tokens to recompute, not 16.
// R1 comes back only when ALL its sequences fit (1 shared + 2 x 2 own blocks = 5),
// i.e. after R0 finishes in step 8; admitting it on its prompt block alone in step 7
// would fork it into 4 blocks with 1 free and preempt it again (the thrash of
// issue 11). Step 9 prefills the prompt, step 10 recomputes 5 tokens per sample,
// steps 10-12 sample tokens 6-8.
TEST_CASE("recompute preemption of a group: shared prompt counted once, readmitted only when every sample fits") {
    auto r = simulate(tiny(32, Preemption::Recompute), two_groups);
    REQUIRE(r);
    const Summary& s = r->summary;
    CHECK(s.preemptions == 1);
    CHECK(s.swapped_out == 0);
    CHECK(s.recomputed_tokens == 12);
    CHECK(s.finished == 2);
    CHECK(s.makespan_s == 12.0);
}

// A single sequence is recomputed under v0 too (it is cheaper than a swap there).
TEST_CASE("v0 preemption recomputes single sequences") {
    SimConfig c = tiny(24, Preemption::V0);
    c.n = 1;
    auto r = simulate(c, {{0, 5, 4, 0}, {0, 3, 6, 0}, {0, 6, 3, 0}});
    REQUIRE(r);
    CHECK(r->summary.preemptions == 1);
    CHECK(r->summary.swapped_out == 0);
    CHECK(r->summary.recomputed_tokens == 7);
}

// A full swap space: the group is recomputed instead, and counted.
TEST_CASE("v0 preemption falls back to recompute when the swap space is full") {
    SimConfig c = tiny(32, Preemption::V0);
    c.swap_space_bytes = 8;  // 2 blocks < R1's 3
    auto r = simulate(c, two_groups);
    REQUIRE(r);
    CHECK(r->summary.swapped_out == 0);
    CHECK(r->summary.swap_fallbacks == 1);
    CHECK(r->summary.recomputed_tokens == 12);
}

// Samples draw their own output lengths from the workload's output lengths: one
// sample finishes early and frees its blocks while the others go on (every step's
// invariants hold), the generated total is the sum of the samples' lengths, and
// its mean stays that of the workload (n draws from the same distribution).
TEST_CASE("parallel samples have independent output lengths") {
    WorkloadSpec w;
    w.lengths = Lengths::Uniform;
    w.min_prompt = 2;
    w.max_prompt = 8;
    w.min_output = 1;
    w.max_output = 7;
    w.requests = 400;
    w.seed = 3;
    const auto reqs = make_workload(w).value();
    int64_t outputs = 0;
    for (const Request& q : reqs) outputs += q.output_tokens;
    SimConfig c = tiny(400, Preemption::V0);
    c.n = 3;
    c.independent_sample_lengths = true;
    Simulator sim(c, reqs);
    REQUIRE(sim.ok());
    while (!sim.done()) {
        sim.run(1);
        REQUIRE_MESSAGE(sim.ok(), sim.error_message());
        const std::string e = sim.check_invariants();
        REQUIRE_MESSAGE(e.empty(), e);
    }
    const Summary s = sim.summary();
    CHECK(s.finished == 400);
    CHECK(s.generated_tokens != 3 * outputs);
    // 800 extra draws of a uniform 1..7 (sd 2): their mean within 0.25 of 4 is ~3.5 sd.
    CHECK(static_cast<double>(s.generated_tokens - outputs) / 800 == doctest::Approx(4.0).epsilon(0.0625));
    c.independent_sample_lengths = false;
    auto same = simulate(c, reqs);
    REQUIRE(same);
    CHECK(same->summary.generated_tokens == 3 * outputs);
}

// vLLM v0 admits a request only if 1% of the blocks stay free after it (block
// manager watermark 0.01), v1 has no watermark. 200 blocks of 1 token (watermark 2,
// block 0 is the null block): R0's 150-token prompt leaves 49 free; R1's 48-token
// prompt fits v1 at once (first token after step 1), but in step 2 both grow by a
// block with 1 free and v1 preempts R1; v0 keeps it out (48 + 2 > 49) and admits it
// in step 3, after R0 has taken one more block and finished: no preemption.
TEST_CASE("v0 keeps a 1% watermark of free blocks at admission, v1 does not") {
    SimConfig c = tiny(200, Preemption::V0);
    c.block_size = 1;
    c.max_model_len = 190;
    c.max_num_batched_tokens = 1000;
    c.n = 1;
    const std::vector<Request> reqs = {{0, 150, 2, 0}, {0, 48, 2, 0}};
    auto v0 = simulate(c, reqs);
    c.preemption = Preemption::Recompute;
    auto v1 = simulate(c, reqs);
    REQUIRE(v0);
    REQUIRE(v1);
    CHECK(v1->summary.ttft_p99_s == 1.0);
    CHECK(v0->summary.ttft_p99_s == 3.0);
    CHECK(v0->summary.preemptions == 0);
    CHECK(v1->summary.preemptions == 1);
}
