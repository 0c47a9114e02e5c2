#include "sim/conclusions.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/units.h"

namespace kvb {

namespace {

// Two policies that finished as many requests served "the same" when their throughputs
// are within 1% of the larger. Below that the simulator cannot rank them: its step-time
// model is fitted to the paper within a few percent (docs/paging.md: 31.48 against 30.42
// batched requests), and when every request finishes, throughput is generated tokens over
// the time of the last finish, so it differs only by the last answers' tails (the Azure
// code trace, all four policies: 71.39 and 71.04 tokens/s, 17 s on an hour).
constexpr double kSameThroughput = 0.01;

// Overload, as the fluid model of a queue reads it: requests arriving at rate λ to a
// server that starts them at rate μ < λ wait t (λ/μ - 1) when they arrive at time t, so
// the wait grows in proportion to the time requests have been arriving. Measured between
// the first and the last quarter of the requests (by arrival): the difference of their
// mean times to first token over the difference of their mean arrival times. A growth of
// 0.05 s per second or more (arrivals 5% faster than the GPU serves them), with requests
// still waiting to start when the last one arrived, is an overload. Below capacity the
// measure stays at 0.001 or less (Llama-3.1-8B on an A100-80GB, ShareGPT at 5.5 to 6.6
// req/s, 1,000 requests, seeds 1-3), so 0.05 is far from noise; at 7 req/s it is 0.07,
// the last quarter waiting 15 s for a first token against 0.08 s for the first. A
// run's length alone is no evidence: the rule before this one (finished / time of the
// last finish against requests / arrival span) called every short run overloaded, the
// last answers' tails counting in the first and not in the second.
constexpr double kOverloadGrowth = 0.05;

std::string fixed1(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string pct(double f) {
    return fixed1(f * 100) + "%";
}

// "42 ms", "4.2 s", "1.3 min", "80 min", "2.5 h": a waiting time people can picture.
std::string duration(double s) {
    if (s < 0.9995) return std::to_string(static_cast<int>(std::lround(s * 1000))) + " ms";
    if (s < 90) return fixed1(s) + " s";
    if (s < 5400) return fixed1(s / 60) + " min";
    return fixed1(s / 3600) + " h";
}

// The share of the memory in use that held no token; kNotMeasured when no memory was
// ever in use (a policy that served nothing).
double waste(const sim::Summary& s) {
    return 1.0 - s.token_states_of_used;
}

bool served_same(const sim::Summary& a, const sim::Summary& b) {
    const double top = std::max(a.throughput_tokens_per_s, b.throughput_tokens_per_s);
    return a.finished == b.finished &&
           std::fabs(a.throughput_tokens_per_s - b.throughput_tokens_per_s) <= kSameThroughput * top;
}

// The throughputs of policies that served alike: one figure when they print alike,
// else the range ("297.1–298.6"), so the sentence holds for each of them.
std::string throughput_range(const std::vector<const sim::Summary*>& ps) {
    double lo = ps.front()->throughput_tokens_per_s, hi = lo;
    for (const sim::Summary* s : ps) {
        lo = std::min(lo, s->throughput_tokens_per_s);
        hi = std::max(hi, s->throughput_tokens_per_s);
    }
    const std::string a = fixed1(lo), b = fixed1(hi);
    return a == b ? a : a + "\u2013" + b;
}

// "paged", "paged and oracle", "paged, pow2 and oracle".
std::string names(const std::vector<const sim::Summary*>& ps) {
    std::string out;
    for (size_t i = 0; i < ps.size(); ++i) {
        if (i > 0) out += i + 1 == ps.size() ? " and " : ", ";
        out += ps[i]->policy;
    }
    return out;
}

// Seconds of waiting added per second of arrivals, or NAN when the run cannot tell.
double queue_growth(const sim::Summary& s) {
    const double span = s.late_arrival_mean_s - s.early_arrival_mean_s;
    if (s.early_finished == 0 || s.late_finished == 0 || !(span > 0)) return NAN;
    return (s.late_ttft_mean_s - s.early_ttft_mean_s) / span;
}

}  // namespace

std::vector<Message> sim_conclusions(const std::vector<sim::Summary>& policies, double arrival_span_s) {
    std::vector<Message> out;
    if (policies.empty()) return out;
    // Most requests finished, then the highest throughput; those that served the same
    // share the first place. A policy that finished none has no throughput to rank and
    // is never first: it is told apart below, with why.
    const sim::Summary* best = nullptr;
    for (const sim::Summary& s : policies)
        if (s.finished > 0 &&
            (!best || s.finished > best->finished ||
             (s.finished == best->finished && s.throughput_tokens_per_s > best->throughput_tokens_per_s)))
            best = &s;
    std::vector<const sim::Summary*> top;
    if (best)
        for (const sim::Summary& s : policies)
            if (s.finished > 0 && served_same(s, *best)) top.push_back(&s);
    if (top.size() == 1)
        out.push_back(note("sim_most_served", {{"policy", best->policy},
                                               {"finished", with_commas(best->finished)},
                                               {"requests", with_commas(best->requests)},
                                               {"throughput", fixed1(best->throughput_tokens_per_s)},
                                               {"running", fixed1(best->mean_running)}}));
    else if (top.size() > 1)
        out.push_back(note("sim_served_alike", {{"policies", names(top)},
                                                {"finished", with_commas(best->finished)},
                                                {"requests", with_commas(best->requests)},
                                                {"throughput", throughput_range(top)}}));
    // Each policy's waste, or why it served nothing; refusals a policy's reservation
    // caused (prompts past max-model-len are refused alike by every policy, and the
    // tables count them).
    for (const sim::Summary& s : policies) {
        const std::string slots = with_commas(s.capacity_tokens);
        if (s.finished == 0) {
            if (s.refused_no_room == s.requests)
                out.push_back(note("sim_served_none_no_room",
                                   {{"policy", s.policy}, {"requests", with_commas(s.requests)}, {"slots", slots}}));
            else
                out.push_back(note("sim_served_none", {{"policy", s.policy},
                                                       {"requests", with_commas(s.requests)},
                                                       {"no_room", with_commas(s.refused_no_room)},
                                                       {"too_long", with_commas(s.refused - s.refused_no_room)},
                                                       {"slots", slots}}));
            continue;
        }
        if (s.refused_no_room > 0)
            out.push_back(note("sim_policy_refused", {{"policy", s.policy},
                                                      {"refused", with_commas(s.refused_no_room)},
                                                      {"requests", with_commas(s.requests)},
                                                      {"slots", slots}}));
        if (sim::measured(waste(s)))
            out.push_back(note("sim_policy_waste", {{"policy", s.policy},
                                                    {"waste", pct(waste(s))},
                                                    {"reserved", pct(s.of_used.reserved)},
                                                    {"internal", pct(s.of_used.internal_fragmentation)},
                                                    {"external", pct(s.of_used.external_fragmentation)}}));
    }
    if (top.empty()) return out;
    // Why the first served more than another: it wasted less memory and so ran more
    // requests at once. Said only when each step is real: the other served less (not
    // the same), wasted more, and ran fewer requests by more than the 1% that makes a
    // tie (5.1 against 5.1 explains nothing). Of the first place, the one that wasted
    // least; against it, of the others, the one that wasted most.
    const sim::Summary* lean = nullptr;
    for (const sim::Summary* s : top)
        if (sim::measured(waste(*s)) && (!lean || waste(*s) < waste(*lean))) lean = s;
    const sim::Summary* worst = nullptr;
    for (const sim::Summary& s : policies)
        if (s.finished > 0 && sim::measured(waste(s)) && std::find(top.begin(), top.end(), &s) == top.end() &&
            (!worst || waste(s) > waste(*worst)))
            worst = &s;
    if (lean && worst && waste(*worst) > waste(*lean) &&
        lean->mean_running > (1 + kSameThroughput) * worst->mean_running)
        out.push_back(note("sim_why", {{"best", lean->policy},
                                       {"best_waste", pct(waste(*lean))},
                                       {"worst", worst->policy},
                                       {"worst_waste", pct(waste(*worst))},
                                       {"best_running", fixed1(lean->mean_running)},
                                       {"worst_running", fixed1(worst->mean_running)}}));
    // Overloaded when even the policy whose queue grew least kept up with fewer than
    // the arrivals (kOverloadGrowth above).
    if (arrival_span_s > 0 && best->requests > 1) {
        const sim::Summary* calm = nullptr;
        double calm_growth = 0;
        bool all_over = true;
        for (const sim::Summary& s : policies) {
            if (s.finished == 0) continue;  // no queue to judge: it refused every request
            const double g = queue_growth(s);
            if (!(g >= kOverloadGrowth) || s.waiting_at_last_arrival < 1) all_over = false;
            if (!std::isnan(g) && (!calm || g < calm_growth)) {
                calm = &s;
                calm_growth = g;
            }
        }
        if (all_over && calm)
            out.push_back(note("sim_overload", {{"offered", fixed1(double(calm->requests) / arrival_span_s)},
                                                {"policy", calm->policy},
                                                {"waiting", with_commas(calm->waiting_at_last_arrival)},
                                                {"late", duration(calm->late_ttft_mean_s)},
                                                {"early", duration(calm->early_ttft_mean_s)}}));
    }
    return out;
}

}  // namespace kvb
