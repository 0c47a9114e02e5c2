#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <tuple>

#include "base/split.h"
#include "base/units.h"
#include "sim/block_pool.h"
#include "sim/buddy.h"
#include "sim/quantiles.h"
#include "sim/rng.h"
#include "sim/series.h"

namespace kvb::sim {

const char* policy_name(Policy p) {
    switch (p) {
        case Policy::Paged: return "paged";
        case Policy::Max: return "max";
        case Policy::Pow2: return "pow2";
        case Policy::Oracle: return "oracle";
    }
    return "?";
}

bool parse_policy(const std::string& s, Policy* out) {
    static const Policy all[] = {Policy::Paged, Policy::Max, Policy::Pow2, Policy::Oracle};
    for (Policy p : all)
        if (s == policy_name(p)) {
            *out = p;
            return true;
        }
    return false;
}

const char* preemption_name(Preemption p) {
    switch (p) {
        case Preemption::V0: return "v0";
        case Preemption::Recompute: return "recompute";
        case Preemption::Swap: return "swap";
    }
    return "?";
}

bool parse_preemption(const std::string& s, Preemption* out) {
    for (Preemption p : {Preemption::V0, Preemption::Recompute, Preemption::Swap})
        if (s == preemption_name(p)) {
            *out = p;
            return true;
        }
    return false;
}

namespace {

constexpr int64_t kMaxBlocks = int64_t{1} << 22;  // per-block arrays stay under ~200 MB
constexpr int64_t kMaxContiguousSlots = int64_t{1} << 40;
constexpr int32_t kMaxSeqsPerRequest = 1024;
constexpr int64_t kOutputPool = int64_t{1} << 20;  // output lengths kept for independent samples

enum class GState : uint8_t { Pending, Waiting, Running, Swapped, Finished, Refused };

struct Seq {
    std::vector<int32_t> table;  // paged block table
    int32_t computed = 0;        // tokens whose K/V are stored
    int32_t out = 0;             // output tokens this sequence generates (samples differ)
    int order = 0;               // contiguous: buddy order of the region
    int64_t offset = -1;         // contiguous region
    int64_t reserve = 0;         // contiguous: slots the policy reserves for it
};

// A request: one prompt, then n samples or `beam` beams that share it. A sample
// that reaches its own output length finishes and frees its blocks (vLLM v0 frees a
// finished sequence at once); the request finishes with its last sample. The live
// sequences are always seqs[0 .. live-1].
struct Group {
    // What every step reads first, in the first cache line.
    std::vector<Seq> seqs;
    int32_t id = 0, prompt = 0, output = 0, prefix = 0, nseq = 1;
    int32_t live = 1;       // sequences not finished
    int32_t generated = 0;  // output tokens sampled so far (same for every live sequence)
    bool forked = false;    // the prompt has been shared out to all sequences
    bool lazy = false;      // a decoder whose progress is kept implicitly (Impl::join_decoders)
    GState state = GState::Pending;
    int64_t rank = 0;          // order of entry into the running list (admission, swap-in)
    int64_t d0 = 0;            // lazy: tokens computed = Impl::D + d0
    int64_t output_total = 0;  // output tokens of all samples
    double arrival = 0;
    double first_token = -1, finish = -1;
    std::vector<int32_t> sample_out;  // n > 1, own lengths: each sample's output length
    // Swapped out: block tables as indices into the group's own block list.
    std::vector<int32_t> swap_tables, swap_lens, swap_fill;
    int32_t active() const { return forked ? live : 1; }
    int32_t target() const { return forked ? prompt + generated : prompt; }
    // Runs more than one sequence (counted from admission on, before the fork too).
    bool multi() const { return live > 1; }
};

// The last token is never fed back, so a sequence stores prompt + output - 1.
inline int32_t final_stored(const Group& g, const Seq& q) {
    return g.prompt + q.out - 1;
}

uint64_t mix(uint64_t a, uint64_t b) {
    uint64_t x = a ^ (b + 0x9E3779B97F4A7C15ull + (a << 6) + (a >> 2));
    return splitmix64(x);
}

bool finite_nonneg(double x) {
    return std::isfinite(x) && x >= 0;
}

}  // namespace

struct Simulator::Impl {
    SimConfig cfg;
    Error err;
    bool failed = false;
    bool paged = true;
    int32_t bs = 16;
    int64_t capacity = 0;  // token slots
    int64_t num_blocks = 0;
    int64_t swap_cap_blocks = 0, swap_used = 0;
    // vLLM v0's block manager admits (and swaps in) only while 1% of the blocks stay
    // free after it (BlockSpaceManager watermark = 0.01), so that running sequences
    // can grow a little before anyone is preempted; v1 has no watermark.
    int64_t watermark_blocks = 0;
    BlockPool pool;
    BuddyAllocator buddy;
    Rng beam_rng;

    // The requests that have arrived and are not yet done, oldest first: groups[0]
    // is request `base`. Finished and refused requests leave from the front, so
    // memory follows the requests in flight, not the workload; the workload itself
    // is drawn one request at a time from `source`.
    std::deque<Group> groups;
    int32_t base = 0;
    int64_t max_held = 0;
    RequestStream source;
    Request upcoming;  // the next request to arrive, when have_upcoming
    bool have_upcoming = false;
    double last_arrival = 0;
    int32_t nseq_cfg = 1;
    bool own_lengths = false;
    Rng length_rng;
    std::vector<int32_t> all_outputs;  // own_lengths: the workload's output lengths (a sample past kOutputPool)
    Group& G(int32_t id) { return groups[static_cast<size_t>(id - base)]; }
    const Group& G(int32_t id) const { return groups[static_cast<size_t>(id - base)]; }
    std::deque<int32_t> waiting;
    // running: in order of entry (rank increasing), with the ranks alongside for
    // finding a request by binary search.
    std::vector<int32_t> running, swapped, scheduled;
    std::vector<int64_t> running_rank;
    int64_t next_rank = 0;

    // Lazy decoders (simple mode). Most steps of a busy run only add one token to
    // every running request; such a request is kept implicitly: it has computed
    // D + d0 tokens, where D counts the steps in which every lazy decoder decoded,
    // and is touched only when something happens to it: it needs a new block
    // (paged: every block_size steps, at a fixed phase of D), or it finishes (at a
    // D known when it joins). A step costs the requests that change state, not all
    // of them. Its stored `computed` (and the fill of its last block) is brought up
    // to date by sync(); the sums below account for the tokens not yet written.
    // Steps where anything else could happen (a preemption, a budget that does not
    // reach every decoder) make every decoder explicit and run the general path.
    int64_t D = 0;
    int64_t n_lazy = 0, lazy_sum_d0 = 0, lazy_sum_stored = 0;
    std::vector<std::vector<std::pair<int64_t, int32_t>>> alloc_phase;  // paged: (rank, id) by (-d0) mod bs
    struct FinishAt {
        int64_t d, rank;
        int32_t id;
        bool operator>(const FinishAt& o) const { return d != o.d ? d > o.d : rank > o.rank; }
    };
    std::vector<FinishAt> finish_heap;  // min-heap on (D of the finishing step, rank)
    std::vector<int32_t> pending;       // running and not lazy (prefilling), in rank order
    std::vector<int32_t> done_ids;      // scratch: requests finished this step
    const std::vector<int32_t> no_ids{};
    int64_t running_seqs = 0;
    double now = 0;
    int64_t step_no = 0;
    bool is_done = false;

    // One sequence per request and no prefix caching: no block is ever shared, so
    // the memory split is kept as running sums updated where a sequence changes
    // (sample() is O(1) instead of a pass over every running request each step),
    // and a decoding request takes the short path in step().
    bool simple = false;
    // Paged: slots of last blocks that will never hold a token (the request ends
    // inside its last block): changes only when a block is taken or returned, and
    // gives the reserved slots as used - token states - this (internal_of()).
    int64_t sum_internal = 0;
    // Contiguous: over running sequences, tokens stored, final lengths, reservations
    // and buddy blocks.
    int64_t sum_stored = 0, sum_length = 0, sum_reserve = 0, sum_alloc = 0;

    // scratch, sized once
    std::vector<int32_t> cnt, local_id, takes, hits;
    double step_swap_bytes = 0;
    // K/V copied on the GPU: copy-on-write of a shared partial block (paged), or a
    // contiguous beam taking over another beam's history (Orca). vLLM v0 runs the
    // copies a step asks for at the start of the next step, so beam switches made
    // after a step's outputs are charged to the next one.
    double step_copy_bytes = 0, next_copy_bytes = 0;

    // accounting
    SeriesAccumulator series;
    double w_total = 0, w_used = 0;
    StateSample totals;
    StateSample used_totals;  // time-weighted over steps with memory in use
    Summary s;
    int64_t pending_preempt = 0, pending_finish = 0;
    Quantiles ttft, tpot, e2e;  // bounded however many requests finish
    int64_t quarter = 1;        // requests in the first (and the last) quarter by arrival, at least 1
    double norm_latency_sum = 0;
    std::vector<BlockSnapshot> snaps;
    std::vector<BlockSnapshot> spare_snaps;  // dropped by thinning; their arrays are reused
    int64_t snap_every = 0;
    // Paged, simple, with snapshots: each block's owner (request id, -1 free, -3 the
    // null block) kept as blocks are taken and returned, so a snapshot copies it
    // instead of a pass over the pool and every running table: a run takes a few
    // hundred and keeps at most max_snapshots (250 taken, 60 kept on the Azure trace).
    // A snapshot taken so (BlockSnapshot::captured) holds its owners and the running
    // sequences' last blocks' fills; refcount and fill, which follow from those (no
    // block is shared: an owned block is held once and full but for a sequence's last
    // one), are filled in by expand() when the snapshots are read.
    bool track_owner = false;
    std::vector<int32_t> blk_owner;

    void fail(Error e) {
        if (!failed) err = std::move(e);
        failed = true;
        is_done = true;
    }

    // ------------------------------------------------------------ setup
    // A request's values, checked as it is drawn (every request passes here): the code
    // of what is wrong with it, or nullptr.
    static const char* check_request(const Request& q, double last) {
        if (!(std::isfinite(q.arrival_s) && q.arrival_s >= 0)) return "sim_request_arrival";
        if (q.arrival_s < last) return "sim_request_order";
        if (q.prompt_tokens < 1) return "sim_request_prompt";
        if (q.output_tokens < 1) return "sim_request_output";
        if (q.prefix_tokens < 0 || q.prefix_tokens > q.prompt_tokens) return "sim_request_prefix";
        return nullptr;
    }

    static Error refusal(const std::string& code, MessageParams params = {}) {
        return make_error("bad_value", note(code, std::move(params)));
    }

    // A bug, not a refusal: what went wrong stays in English, for a report.
    static Error inconsistency(const std::string& what) {
        return make_error("internal", note("sim_internal", {{"what", what}}));
    }

    // A setting outside the simulator's range, worded as the inputs' checks word it.
    static Error out_of_range(const char* field, const char* flag, int64_t min, int64_t max, int64_t value) {
        return refusal("input_out_of_range", {{"field", field},
                                              {"flag", flag},
                                              {"min", with_commas(min)},
                                              {"max", with_commas(max)},
                                              {"value", with_commas(value)}});
    }

    void setup(const SimConfig& c, RequestStream reqs, bool allocate = true) {
        cfg = c;
        auto bad = [&](const std::string& code, MessageParams params = {}) { fail(refusal(code, std::move(params))); };
        const auto range = [&](const char* field, const char* flag, int64_t min, int64_t max, int64_t value) {
            const bool in = value >= min && value <= max;
            if (!in) fail(out_of_range(field, flag, min, max, value));
            return in;
        };
        constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
        if (c.kv_bytes_per_token < 1) return bad("sim_kv_bytes_per_token");
        if (c.kv_capacity_bytes < 1) return bad("sim_kv_capacity");
        if (!range("block_size", "--block-size", 1, 4096, c.block_size) ||
            !range("max_model_len", "--max-model-len", 2, 10'000'000, c.max_model_len) ||
            !range("max_num_seqs", "--max-num-seqs", 1, kI32Max, c.max_num_seqs) ||
            !range("max_num_batched_tokens", "--max-num-batched-tokens", 1, kI32Max, c.max_num_batched_tokens) ||
            !range("n", "--n", 1, kMaxSeqsPerRequest, c.n) ||
            !range("beam", "--beam", 1, kMaxSeqsPerRequest, c.beam_width))
            return;
        if (c.n > 1 && c.beam_width > 1) return bad("sim_n_and_beam");
        const int32_t nseq = std::max(c.n, c.beam_width);
        if (nseq > c.max_num_seqs)
            return bad("sim_seqs_exceed", {{"seqs", with_commas(nseq)}, {"max_num_seqs", with_commas(c.max_num_seqs)}});
        if (!(c.beam_switches >= 0 && c.beam_switches <= 1e9)) return bad("sim_beam_switches");
        if (c.swap_space_bytes < 0) return bad("negative_swap_space");
        const LatencyModel& L = c.latency;
        if (!finite_nonneg(L.weights_bytes) || !finite_nonneg(L.active_params) ||
            !finite_nonneg(L.attn_flops_per_pair) || !finite_nonneg(L.bandwidth_bytes_per_s) ||
            !finite_nonneg(L.flops_per_s) || !finite_nonneg(L.step_overhead_s) || !finite_nonneg(L.swap_bytes_per_s) ||
            !(L.bandwidth_efficiency > 0 && L.bandwidth_efficiency <= 1) ||
            !(L.compute_efficiency > 0 && L.compute_efficiency <= 1) ||
            !(L.kv_bandwidth_efficiency > 0 && L.kv_bandwidth_efficiency <= 1) || !finite_nonneg(L.seq_overhead_s) ||
            !(L.seq_overhead_group_share >= 0 && L.seq_overhead_group_share <= 1))
            return bad("sim_latency_model");
        StepWork one;
        one.tokens = 1;
        if (!(step_seconds(L, one) > 0)) return bad("sim_zero_step");
        if (!range("series_points", "series_points", 1, 100000, c.series_points)) return;
        if (c.snapshot_every_steps < 0 || c.max_snapshots < 1) return bad("sim_snapshot_settings");

        paged = c.policy == Policy::Paged;
        bs = paged ? c.block_size : 1;
        simple = std::max(c.n, c.beam_width) == 1 && !c.prefix_caching;
        if (paged) {
            int64_t block_bytes = 0;
            if (mul_overflow(c.block_size, c.kv_bytes_per_token, &block_bytes)) return bad("sim_block_bytes_overflow");
            num_blocks = c.kv_capacity_bytes / block_bytes;
            if (num_blocks > kMaxBlocks)
                return bad("sim_too_many_blocks", {{"policy", policy_name(c.policy)},
                                                   {"blocks", with_commas(num_blocks)},
                                                   {"max", with_commas(kMaxBlocks)}});
            const int64_t need = (c.max_model_len + c.block_size - 1) / c.block_size;
            if (num_blocks - 1 < need)
                return bad("sim_pool_too_small", {{"policy", policy_name(c.policy)},
                                                  {"blocks", with_commas(std::max<int64_t>(num_blocks - 1, 0))},
                                                  {"block_size", with_commas(c.block_size)},
                                                  {"need", with_commas(need)},
                                                  {"max_model_len", with_commas(c.max_model_len)}});
            capacity = num_blocks * c.block_size;
            if (allocate) {
                pool.init(static_cast<int32_t>(num_blocks), !c.prefix_caching);
                track_owner = simple && c.snapshot_every_steps > 0;
                if (track_owner) {
                    blk_owner.assign(static_cast<size_t>(num_blocks), -1);
                    blk_owner[0] = -3;
                }
                if (simple)
                    alloc_phase.assign(static_cast<size_t>(bs), {});
                else
                    cnt.assign(static_cast<size_t>(num_blocks) + 1, 0);  // shared blocks only
            }
            swap_cap_blocks = c.swap_space_bytes / block_bytes;
            if (c.preemption == Preemption::V0) watermark_blocks = num_blocks / 100;
        } else {
            capacity = c.kv_capacity_bytes / c.kv_bytes_per_token;
            if (capacity > kMaxContiguousSlots)
                return bad("sim_capacity_too_large",
                           {{"policy", policy_name(c.policy)}, {"max", with_commas(kMaxContiguousSlots)}});
            buddy.init(capacity);
            const int64_t need = c.policy == Policy::Max ? c.max_model_len : 1;
            if (buddy.fit_count_empty(BuddyAllocator::order_for(need)) < 1)
                return bad(
                    "sim_buddy_too_small",
                    {{"policy", policy_name(c.policy)}, {"slots", with_commas(capacity)}, {"need", with_commas(need)}});
            if (c.prefix_caching) return bad("sim_prefix_caching_paged", {{"policy", policy_name(c.policy)}});
        }
        if (c.preemption == Preemption::Swap && !paged) {
            // Contiguous reservations never run out mid-request, so nothing is ever preempted.
        }
        takes.assign(static_cast<size_t>(nseq), 0);
        hits.reserve(static_cast<size_t>(c.max_model_len / bs + 2));
        beam_rng = Rng(c.seed, 7);
        series.init(c.series_points);
        snap_every = c.snapshot_every_steps;

        source = std::move(reqs);
        const int64_t count = source.size();
        if (count > kI32Max) return bad("sim_requests_too_many", {{"max", with_commas(kI32Max)}});
        nseq_cfg = nseq;
        // Parallel samples have their own lengths: sample 0 keeps the request's,
        // the others draw the output length of a uniformly chosen request of the
        // workload (independent draws from the workload's own output distribution,
        // so presets and traces alike). Beams end together: one length. That needs
        // the workload's output lengths: every one up to kOutputPool requests (4 MiB),
        // past that a uniform sample of kOutputPool of them (reservoir sampling), so
        // memory stays flat however long the trace; the draws are made as requests
        // arrive, in order.
        own_lengths = c.n > 1 && c.independent_sample_lengths && count > 0;
        if (own_lengths) {
            length_rng = Rng(c.seed, 11);
            Rng pool_rng(c.seed, 12);
            all_outputs.reserve(static_cast<size_t>(std::min<int64_t>(count, kOutputPool)));
            Request q;
            for (int64_t i = 0; i < count && source.next(&q); ++i) {
                if (i < kOutputPool) {
                    all_outputs.push_back(q.output_tokens);
                } else {
                    const int64_t j = pool_rng.uniform_int(0, i);
                    if (j < kOutputPool) all_outputs[static_cast<size_t>(j)] = q.output_tokens;
                }
            }
            if (source.failed()) return fail(source.error());
            source.rewind();
        }
        s.policy = policy_name(c.policy);
        s.requests = count;
        quarter = std::max<int64_t>(1, count / 4);
        for (Quantiles* q : {&ttft, &tpot, &e2e}) q->reserve(count);
        s.capacity_tokens = capacity;
        s.num_blocks = paged ? num_blocks : 0;
        pull();
        if (count == 0) is_done = true;
    }

    // Draws the next request of the workload into `upcoming`.
    void pull() {
        have_upcoming = false;
        const int64_t i = source.position();
        if (!source.next(&upcoming)) {
            if (source.failed()) fail(source.error());
            return;
        }
        if (const char* e = check_request(upcoming, last_arrival))
            return fail(refusal(e, {{"request", std::to_string(i)}}));
        last_arrival = upcoming.arrival_s;
        have_upcoming = true;
    }

    // The upcoming request becomes a group at the back of the window.
    Group& arrive() {
        const Request& q = upcoming;
        groups.emplace_back();
        Group& g = groups.back();
        g.id = static_cast<int32_t>(source.position() - 1);
        g.arrival = q.arrival_s;
        g.prompt = q.prompt_tokens;
        g.output = q.output_tokens;
        g.prefix = q.prefix_tokens;
        g.nseq = nseq_cfg;
        g.live = nseq_cfg;
        g.forked = nseq_cfg == 1;
        if (own_lengths) {
            g.sample_out.resize(static_cast<size_t>(nseq_cfg));
            g.sample_out[0] = q.output_tokens;
            for (int32_t k = 1; k < nseq_cfg; ++k)
                g.sample_out[static_cast<size_t>(k)] = all_outputs[static_cast<size_t>(
                    length_rng.uniform_int(0, static_cast<int64_t>(all_outputs.size()) - 1))];
            for (int32_t o : g.sample_out) g.output = std::max(g.output, o);
        }
        pull();
        max_held = std::max<int64_t>(max_held, static_cast<int64_t>(groups.size()));
        return g;
    }

    // Done requests leave the window from the front.
    void trim() {
        while (!groups.empty() &&
               (groups.front().state == GState::Finished || groups.front().state == GState::Refused)) {
            groups.pop_front();
            ++base;
        }
    }

    static bool mul_overflow(int64_t a, int64_t b, int64_t* out) {
        if (a != 0 && b > std::numeric_limits<int64_t>::max() / a) return true;
        *out = a * b;
        return false;
    }

    // ------------------------------------------------------------ arrivals
    KVB_SPLIT void take_arrivals() {
        trim();
        while (have_upcoming && upcoming.arrival_s <= now) {
            Group& g = arrive();
            if (g.id == s.requests - 1)
                s.waiting_at_last_arrival = static_cast<int64_t>(waiting.size() + swapped.size());
            const int32_t M = cfg.max_model_len;
            if (g.prompt >= M) {
                refuse(g);
                continue;
            }
            if (g.prompt + static_cast<int64_t>(g.output) > M) {
                if (cfg.overlong == Overlong::Refuse) {
                    refuse(g);
                    continue;
                }
                g.output = M - g.prompt;
                ++s.truncated;
            }
            for (int32_t& o : g.sample_out) o = std::min(o, g.output);
            if (!fits_alone(g)) {
                refuse(g);
                ++s.refused_no_room;
                continue;
            }
            g.state = GState::Waiting;
            waiting.push_back(g.id);
        }
    }

    void refuse(Group& g) {
        g.state = GState::Refused;
        ++s.refused;
    }

    // A request that could not run even with the whole pool to itself would
    // stall the queue forever: refuse it on arrival.
    bool fits_alone(const Group& g) {
        if (paged) {
            const int64_t shared = g.nseq > 1 ? g.prompt / bs : 0;
            int64_t worst = shared;
            for (int32_t k = 0; k < g.nseq; ++k) {
                const int64_t L = g.prompt + sample_output(g, k) - 1;
                worst += (L + bs - 1) / bs - shared;
            }
            return worst <= num_blocks - 1;
        }
        return buddy.fit_count_empty(BuddyAllocator::order_for(reservation(g, g.output))) >= g.nseq;
    }

    // Only while something runs: with nothing running there is nothing to protect,
    // and a request needing nearly the whole pool must still get in (v0 would
    // refuse it for good instead).
    int64_t watermark() const { return running.empty() ? 0 : watermark_blocks; }

    int32_t sample_output(const Group& g, int32_t k) const {
        if (g.sample_out.empty()) return g.output;
        return g.sample_out[static_cast<size_t>(k)];
    }

    // What each Orca variant asks the allocator for (Kwon et al. 2023, Sec. 6.1):
    // Max the whole context; Pow2 the prompt plus the output length rounded up to a
    // power of two ("if the true output length is 25, it reserves 32 positions for
    // outputs": only the output part is rounded); Oracle the real length.
    int64_t reservation(const Group& g, int32_t output) const {
        switch (cfg.policy) {
            case Policy::Max: return cfg.max_model_len;
            // Never past the context: a sequence cannot outgrow max_model_len, so
            // rounding 1200 + 600 up to 1200 + 1024 reserves 2048, not a 4096 block.
            case Policy::Pow2:
                return std::min<int64_t>(g.prompt + (int64_t{1} << BuddyAllocator::order_for(output)),
                                         cfg.max_model_len);
            default: return static_cast<int64_t>(g.prompt) + output;
        }
    }

    // ------------------------------------------------------------ paged block work
    uint64_t content_hash(const Group& g, int32_t seq, int64_t block) const {
        const int64_t end = (block + 1) * bs;
        if (g.prefix > 0 && end <= g.prefix)
            return mix(0x5359535052ull, static_cast<uint64_t>(block));  // the common system prompt
        if (end <= g.prompt)
            return mix(mix(0x50524F4D50ull, static_cast<uint64_t>(g.id)), static_cast<uint64_t>(block));
        return mix(mix(mix(0x4F5554ull, static_cast<uint64_t>(g.id)), static_cast<uint64_t>(seq)),
                   static_cast<uint64_t>(block));
    }

    uint64_t chain_hash(uint64_t parent, const Group& g, int32_t seq, int64_t block) const {
        return mix(parent, content_hash(g, seq, block));
    }

    // Blocks the group needs to write takes[] tokens into its active sequences,
    // counting exactly the copy-on-write copies of shared partial blocks: of w
    // writers of a block with r references, all copy if r > w, else the last
    // one writes in place.
    int64_t blocks_needed(const Group& g) {
        int64_t need = 0;
        const int32_t a = g.active();
        for (int32_t k = 0; k < a; ++k) {
            const int32_t t = takes[static_cast<size_t>(k)];
            if (t == 0) continue;
            const Seq& q = g.seqs[static_cast<size_t>(k)];
            // 32-bit: positions stay below 2^31 (max_model_len <= 10M), and this is the hot path.
            const int32_t r = q.computed % bs;
            const int32_t room = r == 0 ? 0 : bs - r;  // free slots in the last block
            if (t > room) need += (t - room + bs - 1) / bs;
            if (r != 0) {
                const int32_t b = q.table.back();
                if (pool.ref(b) > 1) ++cnt[static_cast<size_t>(b)];
            }
        }
        for (int32_t k = 0; k < a; ++k) {
            const Seq& q = g.seqs[static_cast<size_t>(k)];
            if (takes[static_cast<size_t>(k)] == 0 || q.computed % bs == 0) continue;
            const int32_t b = q.table.back();
            if (pool.ref(b) <= 1) continue;  // never counted (cnt is made only where blocks are shared)
            const int32_t w = cnt[static_cast<size_t>(b)];
            if (w == 0) continue;  // counted already
            need += pool.ref(b) > w ? w : w - 1;
            cnt[static_cast<size_t>(b)] = 0;
        }
        return need;
    }

    // Paged, simple: slots of a table of `blocks` blocks that will never hold a
    // token: the rest of the sequence's final block once it holds that block. With
    // no sharing, a sequence's reserved slots (the rest of its last block it will
    // still fill) are then blocks * bs - computed - this, so the split needs only
    // the sum of this, which changes when a block is taken or returned.
    int64_t internal_of(const Group& g, const Seq& q, size_t blocks) const {
        const int64_t f = final_stored(g, q);
        const int64_t last = (f + bs - 1) / bs;
        return static_cast<int64_t>(blocks) == last ? last * bs - f : 0;
    }

    // Simple, paged: block nb appended to the sequence's table.
    void grow(const Group& g, Seq& q, int32_t nb) {
        sum_internal -= internal_of(g, q, q.table.size());
        q.table.push_back(nb);
        if (track_owner) blk_owner[static_cast<size_t>(nb)] = g.id;
        sum_internal += internal_of(g, q, q.table.size());
    }

    KVB_SPLIT void write_tokens(Group& g, int32_t k, int32_t take) {
        Seq& q = g.seqs[static_cast<size_t>(k)];
        int32_t pos = q.computed;
        if (simple) {
            if (paged)
                sum_internal -= internal_of(g, q, q.table.size());
            else
                sum_stored += take;
        }
        if (paged) {
            int32_t r = pos % bs;
            if (r != 0 && pool.ref(q.table.back()) > 1) {
                const int32_t old = q.table.back();
                const int32_t nb = pool.alloc();
                if (nb < 0) return fail(inconsistency("copy-on-write found no free block"));
                pool.set_fill(nb, r);
                pool.decref(old);
                q.table.back() = nb;
                ++s.cow_copies;
                step_copy_bytes += static_cast<double>(r) * static_cast<double>(cfg.kv_bytes_per_token);
            }
            int32_t left = take;
            while (left > 0) {
                if (r == 0) {
                    const int32_t nb = pool.alloc();
                    if (nb < 0) return fail(inconsistency("no free block after the scheduler counted enough"));
                    q.table.push_back(nb);
                    if (track_owner) blk_owner[static_cast<size_t>(nb)] = g.id;
                }
                const int32_t w = std::min<int32_t>(left, bs - r);
                pool.add_fill(q.table.back(), w);
                pos += w;
                left -= w;
                r += w;
                if (r == bs) {
                    r = 0;
                    if (cfg.prefix_caching) {
                        const int64_t bi = pos / bs - 1;
                        const uint64_t parent = bi > 0 ? pool.hash(q.table[static_cast<size_t>(bi - 1)]) : 0x4B56ull;
                        pool.set_hash(q.table.back(), chain_hash(parent, g, k, bi));
                    }
                }
            }
        } else {
            pos += take;
        }
        q.computed = pos;
        if (simple && paged) sum_internal += internal_of(g, q, q.table.size());
    }

    void free_table(std::vector<int32_t>& t) {
        // Tail first, so with prefix caching the tail of a request is evicted before its head.
        for (size_t i = t.size(); i-- > 0;) pool.decref(t[i]);
        if (track_owner)  // simple: no block is shared, so each one here is free now
            for (int32_t b : t) blk_owner[static_cast<size_t>(b)] = -1;
        t.clear();
    }

    void release(Group& g) {
        if (paged) {
            for (int32_t k = static_cast<int32_t>(g.seqs.size()); k-- > 0;) {
                Seq& q = g.seqs[static_cast<size_t>(k)];
                if (simple) sum_internal -= internal_of(g, q, q.table.size());
                free_table(q.table);
            }
        } else {
            for (Seq& q : g.seqs)
                if (q.offset >= 0) {
                    buddy.free(q.offset, q.order);
                    q.offset = -1;
                }
        }
    }

    // vLLM v0 (the paper's system, scheduler.py _preempt): a group that runs more
    // than one sequence (parallel samples, beams) is swapped out to CPU memory, a
    // single sequence is recomputed; v1 only recomputes. A swap that does not fit
    // the swap space falls back to recompute (v0 would abort the request).
    KVB_SPLIT void preempt(Group& g) {
        ++s.preemptions;
        ++pending_preempt;
        running_seqs -= g.live;
        const bool swap = cfg.preemption == Preemption::Swap || (cfg.preemption == Preemption::V0 && g.multi());
        if (swap && paged) {
            if (try_swap_out(g)) return;
            ++s.swap_fallbacks;
        }
        // Tokens to compute again; a shared prompt counts once, not once per sequence.
        const int32_t a = g.active();
        if (a > 1) {
            s.recomputed_tokens += std::min(g.seqs[0].computed, g.prompt);
            for (int32_t k = 0; k < a; ++k)
                s.recomputed_tokens += std::max(g.seqs[static_cast<size_t>(k)].computed - g.prompt, 0);
        } else {
            s.recomputed_tokens += g.seqs[0].computed;
        }
        release(g);
        for (Seq& q : g.seqs) q.computed = 0;
        g.forked = g.nseq == 1;
        g.state = GState::Waiting;
        waiting.push_front(g.id);
    }

    bool try_swap_out(Group& g) {
        if (local_id.empty()) local_id.assign(static_cast<size_t>(num_blocks) + 1, -1);  // first swap
        int32_t unique = 0;
        const int32_t a = g.active();
        for (int32_t k = 0; k < a; ++k)
            for (int32_t b : g.seqs[static_cast<size_t>(k)].table)
                if (local_id[static_cast<size_t>(b)] < 0) local_id[static_cast<size_t>(b)] = unique++;
        const bool fits = swap_used + unique <= swap_cap_blocks;
        if (fits) {
            g.swap_fill.assign(static_cast<size_t>(unique), 0);
            g.swap_tables.clear();
            g.swap_lens.clear();
            for (int32_t k = 0; k < a; ++k) {
                const auto& t = g.seqs[static_cast<size_t>(k)].table;
                g.swap_lens.push_back(static_cast<int32_t>(t.size()));
                for (int32_t b : t) {
                    const int32_t l = local_id[static_cast<size_t>(b)];
                    g.swap_tables.push_back(l);
                    g.swap_fill[static_cast<size_t>(l)] = pool.fill(b);
                }
            }
        }
        for (int32_t k = 0; k < a; ++k)
            for (int32_t b : g.seqs[static_cast<size_t>(k)].table) local_id[static_cast<size_t>(b)] = -1;
        if (!fits) return false;
        swap_used += unique;
        step_swap_bytes += static_cast<double>(unique) * bs * static_cast<double>(cfg.kv_bytes_per_token);
        ++s.swapped_out;
        release(g);
        g.state = GState::Swapped;
        swapped.insert(std::upper_bound(swapped.begin(), swapped.end(), g.id), g.id);
        return true;
    }

    bool try_swap_in(Group& g) {
        const int32_t unique = static_cast<int32_t>(g.swap_fill.size());
        if (unique + watermark() > pool.num_free()) return false;
        std::vector<int32_t>& phys = hits;  // scratch
        phys.clear();
        for (int32_t l = 0; l < unique; ++l) {
            const int32_t b = pool.alloc();
            pool.set_fill(b, g.swap_fill[static_cast<size_t>(l)]);
            phys.push_back(b);
        }
        std::vector<uint8_t> first(static_cast<size_t>(unique), 1);
        size_t p = 0;
        for (int32_t k = 0; k < g.active(); ++k) {
            auto& t = g.seqs[static_cast<size_t>(k)].table;
            t.clear();
            for (int32_t j = 0; j < g.swap_lens[static_cast<size_t>(k)]; ++j) {
                const int32_t l = g.swap_tables[p++];
                const int32_t b = phys[static_cast<size_t>(l)];
                if (first[static_cast<size_t>(l)])
                    first[static_cast<size_t>(l)] = 0;
                else
                    pool.incref(b);
                t.push_back(b);
                if (track_owner) blk_owner[static_cast<size_t>(b)] = g.id;
            }
        }
        swap_used -= unique;
        step_swap_bytes += static_cast<double>(unique) * bs * static_cast<double>(cfg.kv_bytes_per_token);
        if (simple) sum_internal += internal_of(g, g.seqs[0], g.seqs[0].table.size());
        g.swap_fill.clear();
        g.swap_tables.clear();
        g.swap_lens.clear();
        return true;
    }

    void ensure_seqs(Group& g) {
        if (g.seqs.empty()) {
            g.seqs.resize(static_cast<size_t>(g.nseq));
            for (int32_t k = 0; k < g.nseq; ++k) g.seqs[static_cast<size_t>(k)].out = sample_output(g, k);
            if (paged)
                for (Seq& q : g.seqs) q.table.reserve(static_cast<size_t>((final_stored(g, q) + bs - 1) / bs + 1));
        }
    }

    // ------------------------------------------------------------ one step
    double step_new_tokens = 0, step_kv_read = 0, step_pairs = 0, step_seqs = 0;

    void account_tokens(const Group& g, int32_t k, int32_t take) {
        const double c1 = g.seqs[static_cast<size_t>(k)].computed;  // after the write
        const double c0 = c1 - take;
        // Orca computes the prompt once per sequence of a group, each into its own
        // region (the artifact's Orca worker, prepare_inputs: "we treat all
        // sequences in a sequence group as if they were independent"); the
        // scheduler's token budget still counts it once. vLLM computes it once.
        const double copies = !paged && !g.forked ? static_cast<double>(g.live) : 1.0;
        step_new_tokens += copies * take;
        step_seqs += copies;
        step_kv_read += copies * c1;
        step_pairs += copies * take * (c0 + (take + 1) / 2.0);
    }

    // The common step of a single-sequence request: one decode token. Does exactly
    // what the general path does for it (take 1, at most one new block, write,
    // account) without its per-sequence scratch; false when it is not that case
    // (prefill chunk, or no free block for a new one: the general path preempts).
    bool decode_one(Group& g, int32_t target) {
        Seq& q = g.seqs[0];
        const int32_t c0 = q.computed;
        if (target - c0 != 1) return false;
        if (paged) {
            if (c0 % bs == 0) {
                const int32_t nb = pool.alloc();
                if (nb < 0) return false;
                grow(g, q, nb);
            }
            pool.add_fill(q.table.back(), 1);
            q.computed = c0 + 1;
        } else {
            q.computed = c0 + 1;
            ++sum_stored;
        }
        const double c1 = q.computed;
        step_new_tokens += 1;
        step_seqs += 1;
        step_kv_read += c1;
        step_pairs += 1 * (static_cast<double>(c0) + (1 + 1) / 2.0);
        return true;
    }

    // Try to admit the waiting head; false when it cannot be (memory or budget).
    KVB_SPLIT bool admit(Group& g, int64_t& budget) {
        ensure_seqs(g);
        Seq& q0 = g.seqs[0];
        const int32_t target = g.target();
        int32_t cached_tokens = 0;
        hits.clear();
        int64_t evictable = 0;
        if (paged && cfg.prefix_caching) {
            uint64_t h = 0x4B56ull;
            // At least the last token is computed, so its logits exist (as vLLM).
            for (int64_t b = 0; (b + 1) * bs <= target - 1; ++b) {
                h = chain_hash(h, g, 0, b);
                const int32_t blk = pool.lookup(h);
                if (blk < 0) break;
                hits.push_back(blk);
                if (pool.ref(blk) == 0) ++evictable;
            }
            cached_tokens = static_cast<int32_t>(hits.size()) * bs;
            s.prefix_query_tokens += target;
        }
        const int32_t take = static_cast<int32_t>(std::min<int64_t>(target - cached_tokens, budget));
        if (take <= 0) return false;
        if (paged) {
            int64_t need = (cached_tokens + take + bs - 1) / bs - static_cast<int64_t>(hits.size()) + evictable;
            // A group readmitted after recompute forks at once and every live sequence
            // recomputes its own output: admit it only if all of them fit, else it
            // preempts newer requests at the fork and thrashes.
            if (g.nseq > 1 && g.generated > 0) {
                const int64_t shared = g.prompt / bs;
                const int64_t own = (static_cast<int64_t>(g.prompt) + g.generated + bs - 1) / bs - shared;
                need += shared + static_cast<int64_t>(g.live) * own - (g.prompt + bs - 1) / bs;
            }
            if (need + watermark() > pool.num_free()) return false;
            for (int32_t b : hits) pool.incref(b);
            q0.table.assign(hits.begin(), hits.end());
            q0.computed = cached_tokens;
            s.prefix_hit_tokens += cached_tokens;
        } else {
            // The buddy allocator hands out and keeps the whole power-of-two block
            // (Sec. 6.5 of the paper: the rounding is part of the Orca baselines'
            // waste, counted under "external fragmentation & others" in Fig. 2).
            int32_t k = 0;
            for (; k < g.live; ++k) {
                Seq& q = g.seqs[static_cast<size_t>(k)];
                q.reserve = reservation(g, q.out);
                q.order = BuddyAllocator::order_for(q.reserve);
                q.offset = buddy.alloc(q.order);
                if (q.offset < 0) break;
            }
            if (k < g.live) {
                for (int32_t j = 0; j < k; ++j) {
                    Seq& q = g.seqs[static_cast<size_t>(j)];
                    buddy.free(q.offset, q.order);
                    q.offset = -1;
                }
                return false;
            }
            q0.computed = 0;
            if (simple) {
                sum_length += static_cast<int64_t>(g.prompt) + q0.out;
                sum_reserve += q0.reserve;
                sum_alloc += int64_t{1} << q0.order;
            }
        }
        write_tokens(g, 0, take);
        account_tokens(g, 0, take);
        budget -= take;
        g.state = GState::Running;
        run_push(g);
        running_seqs += g.live;
        scheduled.push_back(g.id);
        return true;
    }

    // ------------------------------------------------------------ running list, lazy decoders
    void run_push(Group& g) {
        g.rank = next_rank++;
        running.push_back(g.id);
        running_rank.push_back(g.rank);
        if (simple) pending.push_back(g.id);
    }

    void run_pop_back() {
        running.pop_back();
        running_rank.pop_back();
    }

    void run_erase(const Group& g) {
        const auto it = std::lower_bound(running_rank.begin(), running_rank.end(), g.rank);
        running.erase(running.begin() + (it - running_rank.begin()));
        running_rank.erase(it);
    }

    // Every group no longer running taken out of the running list in one pass, in order.
    void run_compact() {
        size_t w = 0;
        for (size_t r = 0; r < running.size(); ++r)
            if (G(running[r]).state == GState::Running) {
                running_rank[w] = running_rank[r];
                running[w++] = running[r];
            }
        running.resize(w);
        running_rank.resize(w);
    }

    // Tokens the lazy decoders have computed and not yet stored.
    int64_t lazy_unwritten() const { return n_lazy * D + lazy_sum_d0 - lazy_sum_stored; }

    // A lazy decoder's implicit tokens written into its sequence (and last block).
    void sync(Group& g) {
        Seq& q = g.seqs[0];
        const int32_t c = static_cast<int32_t>(D + g.d0);
        const int32_t delta = c - q.computed;
        if (delta == 0) return;
        if (paged)
            pool.add_fill(q.table.back(), delta);
        else
            sum_stored += delta;
        lazy_sum_stored += delta;
        q.computed = c;
    }

    void sync_all() {
        for (int32_t id : running) {
            Group& g = G(id);
            if (g.lazy) sync(g);
        }
    }

    // Has its first token and decodes one token a step from now on.
    bool decode_ready(const Group& g) const {
        return g.state == GState::Running && g.generated >= 1 && g.target() - g.seqs[0].computed == 1;
    }

    size_t phase_of(int64_t d0) const {
        const int64_t m = (-d0) % bs;
        return static_cast<size_t>(m < 0 ? m + bs : m);
    }

    void join(Group& g) {
        const Seq& q = g.seqs[0];
        g.lazy = true;
        g.d0 = q.computed - D;
        ++n_lazy;
        lazy_sum_d0 += g.d0;
        lazy_sum_stored += q.computed;
        if (paged) {
            auto& v = alloc_phase[phase_of(g.d0)];
            const std::pair<int64_t, int32_t> e{g.rank, g.id};
            v.insert(std::upper_bound(v.begin(), v.end(), e), e);
        }
        // It finishes in the step that starts with D + d0 = final_stored - 1.
        finish_heap.push_back(FinishAt{final_stored(g, q) - 1 - g.d0, g.rank, g.id});
        std::push_heap(finish_heap.begin(), finish_heap.end(), std::greater<FinishAt>());
    }

    // Explicit again (its finish entry is already off the heap). Its entry in
    // alloc_phase goes with leave_phases(), once for all who left in the step.
    void leave(Group& g) {
        sync(g);
        const Seq& q = g.seqs[0];
        g.generated = q.computed - g.prompt + 1;
        g.lazy = false;
        --n_lazy;
        lazy_sum_d0 -= g.d0;
        lazy_sum_stored -= q.computed;
    }

    // The alloc_phase entries of the groups in `left` (leave() made them explicit).
    // A few are erased each; many in one pass over the lists: erasing each from the
    // front moved the rest of its list every time, and 66,000 requests finishing in one
    // step took a second.
    KVB_SPLIT void leave_phases(const std::vector<int32_t>& left) {
        if (!paged || left.empty()) return;
        if (left.size() <= 8) {
            for (int32_t id : left) {
                const Group& g = G(id);
                auto& v = alloc_phase[phase_of(g.d0)];
                v.erase(std::lower_bound(v.begin(), v.end(), std::pair<int64_t, int32_t>{g.rank, -1}));
            }
            return;
        }
        for (auto& v : alloc_phase)
            v.erase(std::remove_if(v.begin(), v.end(),
                                   [&](const std::pair<int64_t, int32_t>& e) { return !G(e.second).lazy; }),
                    v.end());
    }

    // Every running request explicit, for the general path.
    KVB_SPLIT void unlazy_all() {
        if (n_lazy > 0) {
            for (int32_t id : running) {
                Group& g = G(id);
                if (!g.lazy) continue;
                sync(g);
                g.generated = g.seqs[0].computed - g.prompt + 1;
                g.lazy = false;
            }
            n_lazy = lazy_sum_d0 = lazy_sum_stored = 0;
            for (auto& v : alloc_phase) v.clear();
            finish_heap.clear();
        }
        pending.clear();
    }

    // After a general step: decoders lazy again, the rest pending.
    KVB_SPLIT void relazify() {
        pending.clear();
        for (int32_t id : running) {
            Group& g = G(id);
            if (decode_ready(g))
                join(g);
            else
                pending.push_back(id);
        }
    }

    // A step the lazy path does exactly as the general one: the budget reaches every
    // decoder (the prefilling requests all come after them, as they do unless a
    // general step left it otherwise) and no one is preempted (the free blocks
    // cover every block the step takes).
    bool lazy_step_ok(int64_t budget) {
        if (n_lazy > budget) return false;
        if (!pending.empty() && running[running.size() - pending.size()] != pending.front()) return false;
        if (!paged) return true;
        int64_t need = static_cast<int64_t>(alloc_phase[static_cast<size_t>(D % bs)].size());
        int64_t left = budget - n_lazy;
        for (int32_t id : pending) {
            if (left <= 0) break;
            const Group& g = G(id);
            const int32_t c = g.seqs[0].computed;
            const int64_t t = std::min<int64_t>(g.target() - c, left);
            const int32_t r = c % bs;
            const int64_t room = r == 0 ? 0 : bs - r;
            if (t > room) need += (t - room + bs - 1) / bs;
            left -= t;
        }
        return need <= pool.num_free();
    }

    // Every lazy decoder computes one token: new blocks for those at a block
    // boundary (in running order, as the general path takes them), the step's work
    // from the sums.
    KVB_SPLIT void decode_lazy() {
        if (paged)
            for (const auto& e : alloc_phase[static_cast<size_t>(D % bs)]) {
                Group& g = G(e.second);
                sync(g);
                const int32_t nb = pool.alloc();
                if (nb < 0) return fail(inconsistency("no free block after the scheduler counted enough"));
                grow(g, g.seqs[0], nb);
            }
        const double n = static_cast<double>(n_lazy);
        const double c0 = static_cast<double>(n_lazy * D + lazy_sum_d0);
        step_new_tokens += n;
        step_seqs += n;
        step_kv_read += c0 + n;
        step_pairs += c0 + n;
        ++D;
    }

    // After a step's outputs: a sequence that caught up samples a token; true when
    // the request finished.
    KVB_SPLIT bool output(Group& g) {
        if (!g.forked && g.seqs[0].computed == g.prompt) fork(g);
        if (!g.forked) return false;
        for (int32_t k = 0; k < g.live; ++k)
            if (g.seqs[static_cast<size_t>(k)].computed != g.target()) return false;
        if (g.generated == 0) g.first_token = now;
        ++g.generated;
        for (int32_t k = g.live; k-- > 0;)
            if (g.seqs[static_cast<size_t>(k)].out <= g.generated) finish_seq(g, k);
        if (g.live == 0) {
            finish(g);
            return true;
        }
        if (cfg.beam_width > 1) reparent_beams(g);
        return false;
    }

    KVB_SPLIT void step() {
        take_arrivals();
        if (failed) return;
        if (running.empty() && waiting.empty() && swapped.empty()) {
            if (failed) return;
            if (have_upcoming) {
                const double t = upcoming.arrival_s;
                record(now, t);
                now = t;
                return;
            }
            is_done = true;
            return;
        }
        int64_t budget = cfg.max_num_batched_tokens;
        bool preempted = false;
        scheduled.clear();
        step_new_tokens = step_kv_read = step_pairs = step_seqs = 0;
        step_swap_bytes = 0;
        step_copy_bytes = next_copy_bytes;
        next_copy_bytes = 0;

        // 1. Running requests, oldest first, under the token budget.
        const bool lazy = simple && lazy_step_ok(budget);
        if (simple && !lazy) unlazy_all();
        int64_t lazy_decoded = 0;
        if (lazy) {
            lazy_decoded = n_lazy;
            decode_lazy();
            if (failed) return;
            budget -= lazy_decoded;
            for (int32_t id : pending) {  // after every decoder
                if (budget <= 0) break;
                Group& g = G(id);
                const int32_t t = static_cast<int32_t>(std::min<int64_t>(g.target() - g.seqs[0].computed, budget));
                write_tokens(g, 0, t);
                account_tokens(g, 0, t);
                if (failed) return;
                budget -= t;
                scheduled.push_back(id);
            }
        }
        for (size_t i = 0; !lazy && i < running.size() && budget > 0;) {
            Group& g = G(running[i]);
            const int32_t a = g.active(), target = g.target();
            if (simple && decode_one(g, target)) {
                --budget;
                scheduled.push_back(g.id);
                ++i;
                continue;
            }
            int64_t left = budget, total = 0;
            for (int32_t k = 0; k < a; ++k) {
                const int64_t t = std::min<int64_t>(target - g.seqs[static_cast<size_t>(k)].computed, left);
                takes[static_cast<size_t>(k)] = static_cast<int32_t>(std::max<int64_t>(t, 0));
                left -= takes[static_cast<size_t>(k)];
                total += takes[static_cast<size_t>(k)];
            }
            if (total == 0) {
                ++i;
                continue;
            }
            bool self_preempted = false;
            if (paged) {
                while (blocks_needed(g) > pool.num_free()) {
                    // FCFS: the most recently admitted running request goes first.
                    const int32_t victim = running.back();
                    run_pop_back();
                    preempt(G(victim));
                    preempted = true;
                    if (victim == g.id) {
                        self_preempted = true;
                        break;
                    }
                }
            }
            if (self_preempted) break;
            for (int32_t k = 0; k < a; ++k) {
                const int32_t t = takes[static_cast<size_t>(k)];
                if (t == 0) continue;
                write_tokens(g, k, t);
                account_tokens(g, k, t);
            }
            if (failed) return;
            budget -= total;
            scheduled.push_back(g.id);
            ++i;
        }

        // 2. No admissions in a step that preempted; swapped requests (older) before waiting ones.
        bool swapped_in = false;
        if (!preempted) {
            while (!swapped.empty()) {
                Group& g = G(swapped.front());
                if (running_seqs + g.live > cfg.max_num_seqs || !try_swap_in(g)) break;
                swapped.erase(swapped.begin());
                g.state = GState::Running;
                run_push(g);
                running_seqs += g.live;
                swapped_in = true;
            }
            if (swapped.empty()) {
                while (!waiting.empty() && budget > 0) {
                    Group& g = G(waiting.front());
                    if (running_seqs + g.live > cfg.max_num_seqs) break;
                    if (!admit(g, budget)) {
                        if (failed) return;
                        break;
                    }
                    waiting.pop_front();
                }
            }
        }
        if (failed) return;

        double dt;
        if (scheduled.empty() && lazy_decoded == 0) {
            if (!swapped_in && !preempted)
                return fail(inconsistency("scheduler made no progress at t=" + std::to_string(now) + " s"));
            StepWork idle;
            idle.copy_bytes = step_copy_bytes;
            dt = cfg.latency.step_overhead_s +
                 (cfg.latency.swap_bytes_per_s > 0 ? step_swap_bytes / cfg.latency.swap_bytes_per_s : 0) +
                 copy_seconds(cfg.latency, idle);
            if (!(dt > 0)) dt = 1e-6;
        } else {
            StepWork w;
            w.tokens = step_new_tokens;
            w.kv_bytes = step_kv_read * static_cast<double>(cfg.kv_bytes_per_token);
            w.attn_pairs = step_pairs;
            w.seqs = step_seqs;
            w.groups = static_cast<double>(scheduled.size() + static_cast<size_t>(lazy_decoded));
            w.swap_bytes = step_swap_bytes;
            w.copy_bytes = step_copy_bytes;
            dt = step_seconds(cfg.latency, w);
        }
        const double t0 = now;
        now += dt;
        ++step_no;
        ++s.steps;
        record(t0, now);

        // 3. Outputs: fork the prompt to all sequences, sample, finish. Lazy decoders
        // that finish come first: they precede every pending request.
        if (lazy) {
            done_ids.clear();
            while (!finish_heap.empty() && finish_heap.front().d == D - 1) {
                std::pop_heap(finish_heap.begin(), finish_heap.end(), std::greater<FinishAt>());
                Group& g = G(finish_heap.back().id);
                finish_heap.pop_back();
                leave(g);
                finish_seq(g, 0);
                finish(g);
                done_ids.push_back(g.id);
            }
            leave_phases(done_ids);
            for (int32_t id : scheduled)
                if (output(G(id))) done_ids.push_back(id);
            // A few leave by erasing each; many at once (a batch of equal requests
            // finishing together) in one pass, not one pass each: 70,000 requests
            // finishing in one step took 1.4 s of moving the list's tail.
            if (done_ids.size() <= 8)
                for (int32_t id : done_ids) run_erase(G(id));
            else
                run_compact();
            size_t w = 0;
            for (int32_t id : pending) {
                Group& g = G(id);
                if (g.state != GState::Running) continue;
                if (decode_ready(g))
                    join(g);
                else
                    pending[w++] = id;
            }
            pending.resize(w);
        } else {
            bool any_finished = false;
            for (int32_t id : scheduled) any_finished |= output(G(id));
            if (any_finished) run_compact();
            if (simple) relazify();
        }
        series.event(now, pending_preempt, pending_finish);
        pending_preempt = pending_finish = 0;
        if (snap_every > 0 && step_no % snap_every == 0) {
            sync_all();
            snaps.emplace_back();
            if (!spare_snaps.empty()) {
                snaps.back() = std::move(spare_snaps.back());
                spare_snaps.pop_back();
            }
            if (track_owner)
                capture(snaps.back());
            else
                fill_snapshot(snaps.back());
            if (static_cast<int32_t>(snaps.size()) > cfg.max_snapshots) {
                // Every other one is kept; the dropped ones end up past w (swapped, never
                // self-moved) and their arrays are reused for the next snapshots.
                size_t w = 0;
                for (size_t r = 0; r < snaps.size(); r += 2, ++w)
                    if (r != w) std::swap(snaps[w], snaps[r]);
                for (size_t r = w; r < snaps.size(); ++r) spare_snaps.push_back(std::move(snaps[r]));
                snaps.resize(w);
                snap_every *= 2;
            }
        }
    }

    void fork(Group& g) {
        Seq& q0 = g.seqs[0];
        for (int32_t k = 1; k < g.live; ++k) {
            Seq& q = g.seqs[static_cast<size_t>(k)];
            if (paged) {
                for (int32_t b : q0.table) pool.incref(b);
                q.table.assign(q0.table.begin(), q0.table.end());
            }
            q.computed = q0.computed;  // contiguous: each region computed its own prompt copy (account_tokens)
        }
        g.forked = true;
    }

    // Beam search: after each step a beam may continue from another beam's
    // history (the other beam's extension outscored its own). Only the block
    // tables matter: the new owner shares the other beam's blocks and copies the
    // last partial block on its next write. Re-ranking is modelled as happening a
    // fixed number of times per answer (cfg.beam_switches, spread uniformly over
    // the output), so short and long answers coalesce alike; 9, fitted over 6-12
    // and refitted over 7-10 for the paper's ShareGPT lengths (the worst of the four
    // ends of the published ranges, both datasets at widths 2 and 6, on seeds 1-3:
    // 8 -> 2.5 points, 8.5 -> 1.9, 9 -> 1.35, 9.5 -> 1.7, 10 -> 2.1), puts them all
    // within 1.35 points (test_sim_published). One constant cannot do better:
    // more switches raise Alpaca width 6 (under) and ShareGPT width 6 (over) alike.
    void reparent_beams(Group& g) {
        for (int32_t j = 0; j < g.live; ++j) {
            if (g.live < 2 || !beam_rng.chance(std::min(1.0, cfg.beam_switches / g.output))) continue;
            // Another beam, never itself: a switch that drew the beam's own history
            // would not be a switch (it made width 2 switch half as often as asked).
            int32_t i = static_cast<int32_t>(beam_rng.uniform_int(0, g.live - 2));
            if (i >= j) ++i;
            if (!paged) {
                // Orca keeps each beam in its own region: taking over another beam's
                // history copies that beam's K/V into it, the copy PagedAttention's
                // block sharing avoids (Kwon et al. 2023, Sec. 4.4 and Fig. 9). The
                // paper's Orca (its artifact's BuddyBlockSpaceManager.fork) copies the
                // whole buddy block of the other beam, written or not.
                next_copy_bytes += static_cast<double>(int64_t{1} << g.seqs[static_cast<size_t>(i)].order) *
                                   static_cast<double>(cfg.kv_bytes_per_token);
                continue;
            }
            Seq& from = g.seqs[static_cast<size_t>(i)];
            Seq& to = g.seqs[static_cast<size_t>(j)];
            for (int32_t b : from.table) pool.incref(b);
            free_table(to.table);
            to.table.assign(from.table.begin(), from.table.end());
        }
    }

    // One sample reached its length: its blocks (or region) go back now, and the
    // live sequences stay packed at the front.
    void finish_seq(Group& g, int32_t k) {
        Seq& q = g.seqs[static_cast<size_t>(k)];
        g.output_total += q.out;
        if (simple) {
            if (paged) {
                sum_internal -= internal_of(g, q, q.table.size());
            } else {
                sum_stored -= q.computed;
                sum_length -= static_cast<int64_t>(g.prompt) + q.out;
                sum_reserve -= q.reserve;
                sum_alloc -= int64_t{1} << q.order;
            }
        }
        if (paged) {
            free_table(q.table);
        } else if (q.offset >= 0) {
            buddy.free(q.offset, q.order);
            q.offset = -1;
        }
        --g.live;
        --running_seqs;
        if (k != g.live) std::swap(g.seqs[static_cast<size_t>(k)], g.seqs[static_cast<size_t>(g.live)]);
    }

    KVB_SPLIT void finish(Group& g) {
        g.finish = now;
        g.state = GState::Finished;
        release(g);
        running_seqs -= g.live;
        std::vector<Seq>().swap(g.seqs);
        std::vector<int32_t>().swap(g.sample_out);
        ++s.finished;
        ++pending_finish;
        s.prompt_tokens += g.prompt;
        s.generated_tokens += g.output_total;
        ttft.add(g.first_token - g.arrival);
        if (g.id < quarter) {
            ++s.early_finished;
            s.early_arrival_mean_s += g.arrival;
            s.early_ttft_mean_s += g.first_token - g.arrival;
        }
        if (g.id >= s.requests - quarter) {
            ++s.late_finished;
            s.late_arrival_mean_s += g.arrival;
            s.late_ttft_mean_s += g.first_token - g.arrival;
        }
        e2e.add(g.finish - g.arrival);
        norm_latency_sum += (g.finish - g.arrival) / g.output;
        if (g.output >= 2) tpot.add((g.finish - g.first_token) / (g.output - 1));
        s.makespan_s = now;
    }

    // ------------------------------------------------------------ metrics
    StateSample sample() {
        StateSample x;
        x.running = static_cast<double>(running.size());
        x.waiting = static_cast<double>(waiting.size() + swapped.size());
        if (simple && paged) {
            // No sharing: every used block is in exactly one running table.
            const double used = static_cast<double>(pool.num_used()) * bs;
            const int64_t token = pool.used_filled() + lazy_unwritten();
            x.token = static_cast<double>(token);
            x.reserved = static_cast<double>(int64_t{pool.num_used()} * bs - token - sum_internal);
            x.internal = used - x.token - x.reserved;
            x.null_block = bs;
            x.cached = static_cast<double>(pool.num_cached_free()) * bs;
            x.free = static_cast<double>(pool.num_free() - pool.num_cached_free()) * bs;
            x.logical = static_cast<double>(pool.num_used());
            x.saved = 0;
        } else if (paged) {
            double reserved = 0, logical = 0;
            for (int32_t id : running) {
                const Group& g = G(id);
                for (int32_t k = 0; k < g.active(); ++k) {
                    const Seq& q = g.seqs[static_cast<size_t>(k)];
                    logical += static_cast<double>(q.table.size());
                    if (q.computed % bs == 0 || q.table.empty()) continue;
                    const int32_t b = q.table.back();
                    if (pool.ref(b) != 1)
                        continue;  // a shared partial block will be copied: its free slots stay unused
                    const int64_t unfilled = bs - pool.fill(b);
                    const int64_t to_come = static_cast<int64_t>(final_stored(g, q)) - q.computed;
                    reserved += static_cast<double>(std::min(unfilled, std::max<int64_t>(to_come, 0)));
                }
            }
            const double used = static_cast<double>(pool.num_used()) * bs;
            x.token = static_cast<double>(pool.used_filled());
            x.reserved = reserved;
            x.internal = used - x.token - reserved;
            x.null_block = bs;
            x.cached = static_cast<double>(pool.num_cached_free()) * bs;
            x.free = static_cast<double>(pool.num_free() - pool.num_cached_free()) * bs;
            x.logical = logical;
            x.saved = logical - static_cast<double>(pool.num_used());
        } else {
            if (simple) {
                const int64_t stored = sum_stored + lazy_unwritten();
                x.token = static_cast<double>(stored);
                x.reserved = static_cast<double>(sum_length - stored);
                x.internal = static_cast<double>(sum_reserve - sum_length);
                x.external = static_cast<double>(sum_alloc - sum_reserve);
            }
            for (int32_t id : simple ? no_ids : running) {
                const Group& g = G(id);
                for (int32_t k = 0; k < g.live; ++k) {
                    const Seq& q = g.seqs[static_cast<size_t>(k)];
                    const double L = static_cast<double>(g.prompt) + q.out;
                    const double st = q.computed;
                    x.token += st;
                    x.reserved += L - st;
                    x.internal += static_cast<double>(q.reserve) - L;
                    x.external += static_cast<double>(int64_t{1} << q.order) - static_cast<double>(q.reserve);
                }
            }
            // Free memory the next request in line cannot be placed in, every step
            // (not only in steps where the scheduler tried and failed).
            double unusable = 0;
            if (!waiting.empty()) {
                const Group& h = G(waiting.front());
                unusable = static_cast<double>(buddy.free_below(BuddyAllocator::order_for(reservation(h, h.output))));
            }
            x.external += unusable;
            x.free = static_cast<double>(buddy.free_slots()) - unusable;
        }
        return x;
    }

    KVB_SPLIT void record(double t0, double t1) {
        const double w = t1 - t0;
        if (!(w > 0)) return;
        const StateSample x = sample();
        series.add(t0, t1, x);
        w_total += w;
        totals.token += x.token * w;
        totals.reserved += x.reserved * w;
        totals.internal += x.internal * w;
        totals.external += x.external * w;
        totals.cached += x.cached * w;
        totals.free += x.free * w;
        totals.null_block += x.null_block * w;
        totals.running += x.running * w;
        totals.waiting += x.waiting * w;
        totals.saved += x.saved * w;
        totals.logical += x.logical * w;
        const double used = static_cast<double>(capacity) - x.free - x.cached - x.null_block;
        if (used > 0) {
            w_used += used * w;
            used_totals.token += x.token * w;
            used_totals.reserved += x.reserved * w;
            used_totals.internal += x.internal * w;
            used_totals.external += x.external * w;
        }
        s.max_running = std::max<int64_t>(s.max_running, static_cast<int64_t>(x.running));
        s.max_waiting = std::max<int64_t>(s.max_waiting, static_cast<int64_t>(x.waiting));
        s.max_blocks_saved = std::max<int64_t>(s.max_blocks_saved, static_cast<int64_t>(x.saved));
    }

    MemorySplit split(const StateSample& sum, double weight) const {
        MemorySplit m;
        const double d = weight * static_cast<double>(capacity);
        if (!(d > 0)) {
            m.free = 1;
            return m;
        }
        m.token_states = sum.token / d;
        m.reserved = sum.reserved / d;
        m.internal_fragmentation = sum.internal / d;
        m.external_fragmentation = sum.external / d;
        m.cached = sum.cached / d;
        m.free = sum.free / d;
        m.null_block = sum.null_block / d;
        return m;
    }

    Summary summary() const {
        // A figure with nothing to measure is kNotMeasured, never 0: a policy that
        // served no request (Max refusing every one, its reservation larger than the
        // pool) had no latency and no throughput, and wasted no share of a memory it
        // never used; 0 read as the best value a policy can have.
        constexpr double none = kNotMeasured;
        Summary out = s;
        out.memory = split(totals, w_total);
        if (w_total > 0) {
            out.mean_running = totals.running / w_total;
            out.mean_waiting = totals.waiting / w_total;
            out.sharing_saved = totals.logical > 0 ? totals.saved / totals.logical : 0;
        } else {  // no time passed: nothing to weigh
            out.memory = MemorySplit{none, none, none, none, none, none, none};
            out.mean_running = out.mean_waiting = out.sharing_saved = none;
        }
        if (w_used > 0) {
            out.of_used.token_states = used_totals.token / w_used;
            out.of_used.reserved = used_totals.reserved / w_used;
            out.of_used.internal_fragmentation = used_totals.internal / w_used;
            out.of_used.external_fragmentation = used_totals.external / w_used;
        } else {  // no memory was ever in use: no share of it to split
            out.of_used = MemorySplit{none, none, none, none, 0, 0, 0};
        }
        out.token_states_of_used = out.of_used.token_states;
        for (auto [n, arrival, first] :
             {std::make_tuple(out.early_finished, &out.early_arrival_mean_s, &out.early_ttft_mean_s),
              std::make_tuple(out.late_finished, &out.late_arrival_mean_s, &out.late_ttft_mean_s)})
            if (n > 0) {
                *arrival /= static_cast<double>(n);
                *first /= static_cast<double>(n);
            } else {
                *arrival = *first = none;
            }
        if (out.finished > 0 && out.makespan_s > 0) {
            out.throughput_tokens_per_s = static_cast<double>(out.generated_tokens) / out.makespan_s;
            out.requests_per_s = static_cast<double>(out.finished) / out.makespan_s;
        } else {
            out.throughput_tokens_per_s = out.requests_per_s = none;
        }
        if (out.finished == 0) out.makespan_s = none;  // the time of the last finish: there was none
        static constexpr double kPercentiles[3] = {0.5, 0.9, 0.99};
        double p[3];
        // Each latency's mean and percentiles over its samples, or none without one.
        auto fill = [&](const Quantiles& q, double* mean, double* p50, double* p90, double* p99) {
            if (q.count() == 0) {
                *mean = *p50 = *p90 = *p99 = none;
                return;
            }
            *mean = q.mean();
            q.at(kPercentiles, p, 3);
            *p50 = p[0];
            *p90 = p[1];
            *p99 = p[2];
        };
        fill(ttft, &out.ttft_mean_s, &out.ttft_p50_s, &out.ttft_p90_s, &out.ttft_p99_s);
        fill(tpot, &out.tpot_mean_s, &out.tpot_p50_s, &out.tpot_p90_s, &out.tpot_p99_s);
        fill(e2e, &out.e2e_mean_s, &out.e2e_p50_s, &out.e2e_p90_s, &out.e2e_p99_s);
        out.normalized_latency_s = e2e.count() == 0 ? none : norm_latency_sum / static_cast<double>(e2e.count());
        return out;
    }

    std::vector<TimePoint> time_series() const {
        std::vector<TimePoint> out;
        const auto& b = series.buckets();
        for (size_t i = 0; i < series.used() && i < b.size(); ++i) {
            TimePoint p;
            p.time_s = static_cast<double>(i) * series.width();
            p.duration_s = series.width();
            p.preemptions = b[i].preemptions;
            p.finished = b[i].finished;
            if (b[i].weight > 0) {
                p.memory = split(b[i].sum, b[i].weight);
                p.running = b[i].sum.running / b[i].weight;
                p.waiting = b[i].sum.waiting / b[i].weight;
                p.sharing_saved = b[i].sum.logical > 0 ? b[i].sum.saved / b[i].sum.logical : 0;
            } else {
                p.memory.free = 1;
            }
            out.push_back(p);
        }
        return out;
    }

    // A snapshot of a tracked run (track_owner): the owners copied, the last blocks'
    // fills listed; expand() completes it. Proportional to the pool only by a copy.
    KVB_SPLIT void capture(BlockSnapshot& sn) const {
        sn.step = step_no;
        sn.time_s = now;
        sn.block_size = bs;
        sn.capacity_tokens = capacity;
        sn.regions.clear();
        sn.owner.assign(blk_owner.begin(), blk_owner.end());
        sn.refcount.clear();
        sn.fill.clear();
        sn.last_fill.clear();
        for (int32_t id : running) {
            const auto& t = G(id).seqs[0].table;
            if (t.empty()) continue;
            const int32_t b = t.back();
            const int32_t f = pool.fill(b);
            if (f != bs) {
                sn.last_fill.push_back(b);
                sn.last_fill.push_back(f);
            }
        }
        sn.captured = true;
    }

    // A captured snapshot made whole: what fill_snapshot() gives at that step.
    void expand(BlockSnapshot& sn) const {
        if (!sn.captured) return;
        const size_t n = sn.owner.size();
        sn.refcount.assign(n, 0);
        sn.fill.assign(n, 0);
        const int32_t* owner = sn.owner.data();
        int32_t* ref = sn.refcount.data();
        int32_t* fill = sn.fill.data();
        for (size_t b = 0; b < n; ++b)
            if (owner[b] >= 0) {
                ref[b] = 1;
                fill[b] = bs;
            }
        const std::vector<int32_t>& last = sn.last_fill;
        for (size_t i = 0; i + 1 < last.size(); i += 2) fill[static_cast<size_t>(last[i])] = last[i + 1];
        sn.captured = false;
        sn.last_fill.clear();
    }

    BlockSnapshot make_snapshot() const {
        BlockSnapshot sn;
        fill_snapshot(sn);
        return sn;
    }

    // The block map now, into `sn`, whose vectors may hold an older map of this pool
    // (a thinned snapshot's, kept for reuse: a map is three arrays the size of the pool,
    // taken up to a few hundred times a run).
    KVB_SPLIT void fill_snapshot(BlockSnapshot& sn) const {
        sn.captured = false;
        sn.last_fill.clear();
        sn.step = step_no;
        sn.time_s = now;
        sn.block_size = paged ? bs : 1;
        sn.capacity_tokens = capacity;
        sn.regions.clear();
        if (paged && pool.num_blocks() == 0) {  // CheckOnly: no pool
            sn.owner.clear();
            sn.refcount.clear();
            sn.fill.clear();
            return;
        }
        if (paged) {
            // Each array written once, in one pass: a snapshot is taken a few hundred
            // times a run (thinning drops most; 250 on the Azure trace), and clearing
            // then resizing zero-filled all three before this loop wrote them again.
            const size_t n = static_cast<size_t>(num_blocks);
            sn.owner.resize(n);
            sn.refcount.resize(n);
            sn.fill.resize(n);
            int32_t* owner = sn.owner.data();
            int32_t* refcount = sn.refcount.data();
            int32_t* fill = sn.fill.data();
            for (size_t b = 0; b < n; ++b) {
                const int32_t ref = pool.ref(static_cast<int32_t>(b));
                refcount[b] = ref;
                const bool idle = ref == 0;
                const bool cached = idle && pool.cached(static_cast<int32_t>(b));
                // A free block's old contents are garbage; a cached one still holds its tokens.
                fill[b] = idle && !cached ? 0 : pool.fill(static_cast<int32_t>(b));
                owner[b] = cached ? -2 : -1;
            }
            sn.owner[0] = -3;
            sn.refcount[0] = 0;
            for (int32_t id : running) {
                const Group& g = G(id);
                for (int32_t k = 0; k < g.active(); ++k)
                    for (int32_t b : g.seqs[static_cast<size_t>(k)].table)
                        if (sn.owner[static_cast<size_t>(b)] < 0) sn.owner[static_cast<size_t>(b)] = id;
            }
        } else {
            sn.owner.clear();
            sn.refcount.clear();
            sn.fill.clear();
            for (int32_t id : running) {
                const Group& g = G(id);
                for (int32_t k = 0; k < g.live; ++k) {
                    const Seq& q = g.seqs[static_cast<size_t>(k)];
                    Region r;
                    r.request = id;
                    r.seq = k;
                    r.offset = q.offset;
                    r.allocated = int64_t{1} << q.order;
                    r.reserved = q.reserve;
                    r.length = static_cast<int64_t>(g.prompt) + q.out;
                    r.stored = q.computed;
                    sn.regions.push_back(r);
                }
            }
            std::sort(sn.regions.begin(), sn.regions.end(),
                      [](const Region& a, const Region& b) { return a.offset < b.offset; });
        }
    }

    std::string check() const {
        if (paged && pool.num_blocks() == 0) return "";  // CheckOnly: no pool
        if (paged) {
            std::string e = pool.check();
            if (!e.empty()) return e;
            std::vector<int32_t> refs(static_cast<size_t>(num_blocks), 0);
            for (int32_t id : running) {
                const Group& g = G(id);
                for (int32_t k = 0; k < g.active(); ++k) {
                    const Seq& q = g.seqs[static_cast<size_t>(k)];
                    if (static_cast<int64_t>(q.table.size()) != (q.computed + bs - 1) / bs)
                        return "request " + std::to_string(id) + " holds " + std::to_string(q.table.size()) +
                               " blocks for " + std::to_string(q.computed) + " tokens";
                    for (size_t j = 0; j < q.table.size(); ++j) {
                        const int32_t b = q.table[j];
                        if (b <= 0 || b >= num_blocks) return "block table holds an invalid block";
                        ++refs[static_cast<size_t>(b)];
                        const int32_t expect = j + 1 < q.table.size() || q.computed % bs == 0 ? bs : q.computed % bs;
                        if (pool.fill(b) < expect)
                            return "block " + std::to_string(b) + " holds fewer tokens than its owner has computed";
                    }
                }
            }
            for (int32_t b = 1; b < num_blocks; ++b)
                if (refs[static_cast<size_t>(b)] != pool.ref(b))
                    return "block " + std::to_string(b) + " has " + std::to_string(pool.ref(b)) +
                           " references but appears in " + std::to_string(refs[static_cast<size_t>(b)]) + " tables";
            if (pool.used_filled() > static_cast<int64_t>(pool.num_used()) * bs)
                return "token states exceed allocated slots";
        } else {
            std::string e = buddy.check();
            if (!e.empty()) return e;
            int64_t held = 0;
            for (int32_t id : running) {
                const Group& g = G(id);
                for (int32_t k = 0; k < g.live; ++k) {
                    const Seq& q = g.seqs[static_cast<size_t>(k)];
                    if (q.offset < 0) return "running request without a region";
                    if (q.computed > q.reserve) return "token states exceed the reservation";
                    held += int64_t{1} << q.order;
                }
            }
            if (held + buddy.free_slots() != capacity) return "regions and free slots do not add up to the capacity";
        }
        if (simple) {
            int64_t lazy_count = 0;
            for (int32_t id : running) lazy_count += G(id).lazy ? 1 : 0;
            if (lazy_count != n_lazy ||
                n_lazy + static_cast<int64_t>(pending.size()) != static_cast<int64_t>(running.size()))
                return "lazy decoders out of step with the running list";
            if (lazy_unwritten() != 0) return "lazy decoders' tokens not all written";
            if (!finish_heap.empty() && finish_heap.front().d < D) return "a lazy decoder missed its finish";
        }
        if (!std::is_sorted(running_rank.begin(), running_rank.end()) || running_rank.size() != running.size())
            return "running list out of order";
        int64_t seqs = 0;
        for (int32_t id : running) seqs += G(id).live;
        if (seqs != running_seqs) return "running sequence count out of step";
        if (running_seqs > cfg.max_num_seqs) return "more sequences running than max-num-seqs";
        if (is_done && !failed) {
            if (paged && pool.num_used() != 0) return "blocks still owned after every request finished";
            if (!paged && buddy.free_slots() != capacity) return "regions still held after every request finished";
            if (s.finished + s.refused != s.requests) return "not every request finished or was refused";
        }
        return "";
    }
};

Simulator::Simulator(const SimConfig& config, const std::vector<Request>& requests) : impl_(new Impl) {
    impl_->setup(config, RequestStream::of(requests));
    // Given requests are checked whole before the run, so a bad one is refused at once.
    double last = 0;
    for (size_t i = 0; i < requests.size() && !impl_->failed; ++i) {
        if (const char* e = Impl::check_request(requests[i], last))
            impl_->fail(Impl::refusal(e, {{"request", std::to_string(i)}}));
        last = requests[i].arrival_s;
    }
}
Simulator::Simulator(const SimConfig& config, RequestStream requests) : impl_(new Impl) {
    impl_->setup(config, std::move(requests));
}
Simulator::Simulator(const SimConfig& config, CheckOnly) : impl_(new Impl) {
    impl_->setup(config, RequestStream::of({}), false);
    impl_->is_done = true;
}
Simulator::~Simulator() = default;
Simulator::Simulator(Simulator&&) noexcept = default;
Simulator& Simulator::operator=(Simulator&&) noexcept = default;

bool Simulator::ok() const {
    return !impl_->failed;
}
const Error& Simulator::error() const {
    return impl_->err;
}
std::string Simulator::error_message() const {
    return impl_->failed ? impl_->err.message : std::string();
}

int64_t Simulator::run(int64_t max_steps) {
    int64_t k = 0;
    while (k < max_steps && !impl_->is_done) {
        impl_->step();
        ++k;
    }
    if (impl_->is_done) impl_->spare_snaps = {};  // no more snapshots to take
    return k;
}
bool Simulator::done() const {
    return impl_->is_done;
}
double Simulator::progress() const {
    const Impl& m = *impl_;
    if (m.s.requests == 0) return 1;
    return static_cast<double>(m.s.finished + m.s.refused) / static_cast<double>(m.s.requests);
}
int64_t Simulator::steps() const {
    return impl_->step_no;
}
double Simulator::now_s() const {
    return impl_->now;
}
double Simulator::last_arrival_s() const {
    return impl_->last_arrival;
}
int64_t Simulator::requests_held() const {
    return static_cast<int64_t>(impl_->groups.size());
}
int64_t Simulator::max_requests_held() const {
    return impl_->max_held;
}
Summary Simulator::summary() const {
    return impl_->summary();
}
std::vector<TimePoint> Simulator::series() const {
    return impl_->time_series();
}
const std::vector<BlockSnapshot>& Simulator::snapshots() const {
    for (BlockSnapshot& sn : impl_->snaps) impl_->expand(sn);  // once each: taken cheaply, completed when read
    return impl_->snaps;
}
BlockSnapshot Simulator::snapshot() const {
    impl_->sync_all();  // the lazy decoders' tokens into their blocks: the state is the same
    return impl_->make_snapshot();
}
SimResult Simulator::result() const {
    return SimResult{summary(), series(), snapshots()};
}
std::string Simulator::check_invariants() const {
    impl_->sync_all();
    return impl_->check();
}

Result<SimResult> simulate(const SimConfig& config, const std::vector<Request>& requests) {
    Simulator sim(config, requests);
    while (sim.ok() && !sim.done()) sim.run(1 << 20);
    if (!sim.ok()) return sim.error();
    return sim.result();
}

}  // namespace kvb::sim
