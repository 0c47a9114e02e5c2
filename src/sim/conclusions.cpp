#include "sim/conclusions.h"

#include <cstdio>

#include "base/units.h"

namespace kvb {

namespace {

std::string fixed1(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.1f", v);
    return buf;
}

std::string pct(double f) {
    return fixed1(f * 100) + "%";
}

// "42 s", "1.3 min", "80 min", "2.5 h": a waiting time people can picture.
std::string duration(double s) {
    if (s < 90) return fixed1(s) + " s";
    if (s < 5400) return fixed1(s / 60) + " min";
    return fixed1(s / 3600) + " h";
}

double waste(const sim::Summary& s) {
    return s.token_states_of_used > 0 ? 1.0 - s.token_states_of_used : 0.0;
}

}  // namespace

std::vector<Message> sim_conclusions(const std::vector<sim::Summary>& policies, double arrival_span_s) {
    std::vector<Message> out;
    if (policies.empty()) return out;
    // Most requests finished, then the highest throughput.
    const sim::Summary* best = &policies.front();
    for (const sim::Summary& s : policies)
        if (s.finished > best->finished ||
            (s.finished == best->finished && s.throughput_tokens_per_s > best->throughput_tokens_per_s))
            best = &s;
    out.push_back(note("sim_most_served", {{"policy", best->policy},
                                           {"finished", with_commas(best->finished)},
                                           {"requests", with_commas(best->requests)},
                                           {"throughput", fixed1(best->throughput_tokens_per_s)},
                                           {"running", fixed1(best->mean_running)}}));
    for (const sim::Summary& s : policies)
        out.push_back(note("sim_policy_waste", {{"policy", s.policy},
                                                {"waste", pct(waste(s))},
                                                {"reserved", pct(s.of_used.reserved)},
                                                {"internal", pct(s.of_used.internal_fragmentation)},
                                                {"external", pct(s.of_used.external_fragmentation)}}));
    if (policies.size() > 1) {
        const sim::Summary* worst = &policies.front();
        for (const sim::Summary& s : policies)
            if (waste(s) > waste(*worst)) worst = &s;
        if (worst != best && waste(*worst) > waste(*best))
            out.push_back(note("sim_why", {{"best", best->policy},
                                           {"best_waste", pct(waste(*best))},
                                           {"worst", worst->policy},
                                           {"worst_waste", pct(waste(*worst))},
                                           {"best_running", fixed1(best->mean_running)},
                                           {"worst_running", fixed1(worst->mean_running)}}));
    }
    if (arrival_span_s > 0 && best->requests > 1 && best->makespan_s > 0) {
        const double offered = double(best->requests) / arrival_span_s;
        double served = 0;
        const sim::Summary* fastest = best;
        for (const sim::Summary& s : policies)
            if (s.makespan_s > 0 && double(s.finished) / s.makespan_s > served) {
                served = double(s.finished) / s.makespan_s;
                fastest = &s;
            }
        if (served < 0.8 * offered)
            out.push_back(note("sim_overload", {{"offered", fixed1(offered)},
                                                {"served", fixed1(served)},
                                                {"policy", fastest->policy},
                                                {"ttft", duration(fastest->ttft_p50_s)},
                                                {"ttft_p99", duration(fastest->ttft_p99_s)}}));
    }
    return out;
}

}  // namespace kvb
