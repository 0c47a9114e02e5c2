#include "sim/workload.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/text.h"
#include "sim/rng.h"

namespace kvb::sim {

// Preset length distributions.
//
// The paper (Kwon et al. 2023, Fig. 11) publishes only the means of its two
// datasets after filtering to the 2048-token OPT context: ShareGPT 161.31 input /
// 337.99 output tokens, Alpaca 19.31 / 58.45, and shows long right-skewed
// histograms. A lognormal is the usual fit for such token-length histograms (a
// multiplicative spread, never negative, one heavy tail) and needs just a median
// and a spread. We fix the spread (sigma of ln length) from the histogram shapes:
// ShareGPT conversations span ~2 orders of magnitude in both directions (sigma 1.0
// for prompts and outputs: middle 68% within e^±1, i.e. 37..275 prompt tokens),
// Alpaca instructions are short and uniform (prompt sigma 0.6) while the answers
// vary more (output sigma 0.9). Then mu is solved so that the means of the
// *discretised, filtered* distribution (round to nearest, at least 1 token, pairs
// with prompt + output > 2048 redrawn like the paper's filter) match the published
// means; the calibration was done by Monte Carlo with 400k pairs and is checked by
// test_sim_workload (sample means within 2% of 161 / 338 and 19 / 58).
// Resulting medians: ShareGPT 102 in / 235 out, Alpaca 16 in / 39 out.
const LengthFit& sharegpt_fit() {
    static const LengthFit f{4.6206, 1.0, 5.4586, 1.0, 2048};
    return f;
}
const LengthFit& alpaca_fit() {
    static const LengthFit f{2.7644, 0.6, 3.6572, 0.9, 2048};
    return f;
}

namespace {

constexpr int64_t kMaxRequests = 10'000'000;
constexpr int64_t kMaxTokens = 10'000'000;

int32_t draw_lognormal(Rng& r, double mu, double sigma) {
    const double x = det_exp(mu + sigma * r.normal());
    const double rounded = std::floor(x + 0.5);
    if (!(rounded >= 1.0)) return 1;
    if (rounded > static_cast<double>(kMaxTokens)) return static_cast<int32_t>(kMaxTokens);
    return static_cast<int32_t>(rounded);
}

Error bad(const std::string& msg) {
    return make_error("bad_value", msg);
}

}  // namespace

Result<bool> check_workload(const WorkloadSpec& s) {
    const bool need_trace = s.arrival == Arrival::Trace || s.lengths == Lengths::Trace;
    if (need_trace && s.trace.empty()) return bad("the workload uses a trace but the trace has no requests");
    int64_t count = s.requests;
    if (count < 0) return bad("number of requests must not be negative");
    if (count == 0) {
        if (!need_trace) return bad("number of requests must be at least 1");
        count = static_cast<int64_t>(s.trace.size());
    }
    if (count > kMaxRequests) return bad("at most 10,000,000 requests can be simulated");
    if (need_trace && count > static_cast<int64_t>(s.trace.size()))
        return bad("asked for " + std::to_string(count) + " requests but the trace has only " +
                   std::to_string(s.trace.size()));
    if (s.arrival == Arrival::Poisson && !(s.rate > 0 && std::isfinite(s.rate)))
        return bad("arrival rate must be a positive number of requests per second");
    switch (s.lengths) {
        case Lengths::Fixed:
            if (s.fixed_prompt < 1 || s.fixed_output < 1)
                return bad("fixed lengths need at least 1 prompt and 1 output token");
            break;
        case Lengths::Uniform:
            if (s.min_prompt < 1 || s.min_output < 1 || s.max_prompt < s.min_prompt || s.max_output < s.min_output)
                return bad("uniform lengths need 1 <= min <= max for prompt and output");
            break;
        default: break;
    }
    if (s.shared_prefix < 0 || s.shared_prefix > kMaxTokens) return bad("shared prefix length out of range");
    if (!(s.shared_fraction >= 0 && s.shared_fraction <= 1))
        return bad("shared-prefix fraction must be between 0 and 1");
    return true;
}

Result<RequestStream> RequestStream::create(const WorkloadSpec& spec) {
    if (auto ok = check_workload(spec); !ok) return ok.error();
    const bool need_trace = spec.arrival == Arrival::Trace || spec.lengths == Lengths::Trace;
    RequestStream r;
    r.count_ = spec.requests > 0 ? spec.requests : static_cast<int64_t>(spec.trace.size());
    if (spec.arrival == Arrival::Trace) {
        // Trace arrivals come sorted from the parser; a hand-built trace might not:
        // then the whole workload is drawn and sorted once, as make_workload always did.
        bool sorted = true;
        for (int64_t i = 1; i < r.count_ && sorted; ++i)
            sorted = !(spec.trace[static_cast<size_t>(i)].arrival_s < spec.trace[static_cast<size_t>(i - 1)].arrival_s);
        if (!sorted) {
            WorkloadSpec unsorted = spec;
            unsorted.arrival = Arrival::Batch;  // draw in trace order, then take the trace's times
            RequestStream u;
            u.spec_ = std::make_shared<const WorkloadSpec>(unsorted);
            u.count_ = r.count_;
            u.rewind();
            std::vector<Request> all(static_cast<size_t>(r.count_));
            for (size_t i = 0; i < all.size(); ++i) {
                u.next(&all[i]);
                all[i].arrival_s = spec.trace[i].arrival_s;
            }
            std::stable_sort(all.begin(), all.end(),
                             [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
            return of(std::move(all));
        }
    }
    WorkloadSpec own = spec;
    if (!need_trace) own.trace.clear();
    r.spec_ = std::make_shared<const WorkloadSpec>(std::move(own));
    r.rewind();
    return r;
}

RequestStream RequestStream::of(std::vector<Request> requests) {
    RequestStream r;
    r.count_ = static_cast<int64_t>(requests.size());
    r.given_ = std::make_shared<const std::vector<Request>>(std::move(requests));
    r.use_given_ = true;
    return r;
}

void RequestStream::rewind() {
    index_ = 0;
    t_ = 0;
    if (!spec_) return;
    arrivals_ = Rng(spec_->seed, 1);
    lengths_ = Rng(spec_->seed, 2);
    prefix_ = Rng(spec_->seed, 3);
}

bool RequestStream::next(Request* out) {
    if (index_ >= count_) return false;
    const size_t i = static_cast<size_t>(index_++);
    if (use_given_) {
        *out = (*given_)[i];
        return true;
    }
    const WorkloadSpec& s = *spec_;
    Request q;
    switch (s.arrival) {
        case Arrival::Batch: q.arrival_s = 0; break;
        case Arrival::Poisson:
            t_ += arrivals_.exponential(s.rate);
            q.arrival_s = t_;
            break;
        case Arrival::Trace: q.arrival_s = s.trace[i].arrival_s; break;
    }
    switch (s.lengths) {
        case Lengths::Fixed:
            q.prompt_tokens = s.fixed_prompt;
            q.output_tokens = s.fixed_output;
            break;
        case Lengths::Uniform:
            q.prompt_tokens = static_cast<int32_t>(lengths_.uniform_int(s.min_prompt, s.max_prompt));
            q.output_tokens = static_cast<int32_t>(lengths_.uniform_int(s.min_output, s.max_output));
            break;
        case Lengths::ShareGpt:
        case Lengths::Alpaca: {
            const LengthFit& f = s.lengths == Lengths::ShareGpt ? sharegpt_fit() : alpaca_fit();
            do {
                q.prompt_tokens = draw_lognormal(lengths_, f.mu_prompt, f.sigma_prompt);
                q.output_tokens = draw_lognormal(lengths_, f.mu_output, f.sigma_output);
            } while (q.prompt_tokens + q.output_tokens > f.max_total);
            break;
        }
        case Lengths::Trace:
            q.prompt_tokens = s.trace[i].prompt_tokens;
            q.output_tokens = s.trace[i].output_tokens;
            break;
    }
    if (s.shared_prefix > 0 && s.shared_fraction > 0 && prefix_.chance(s.shared_fraction)) {
        q.prompt_tokens += s.shared_prefix;
        q.prefix_tokens = s.shared_prefix;
    }
    *out = q;
    return true;
}

Result<std::vector<Request>> make_workload(const WorkloadSpec& s) {
    auto st = RequestStream::create(s);
    if (!st) return st.error();
    std::vector<Request> out(static_cast<size_t>(st->size()));
    RequestStream& r = st.value();
    for (Request& q : out) r.next(&q);
    return out;
}

// ---------------------------------------------------------------- CSV parsing

namespace {

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && (s[b] == ' ' || s[b] == '\t')) ++b;
    while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t')) --e;
    return s.substr(b, e - b);
}

std::string lower(std::string s) {
    for (char& c : s)
        if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    return s;
}

std::vector<std::string> split_commas(const std::string& line) {
    std::vector<std::string> f;
    size_t start = 0;
    for (;;) {
        size_t p = line.find(',', start);
        f.push_back(trim(line.substr(start, p == std::string::npos ? std::string::npos : p - start)));
        if (p == std::string::npos) break;
        start = p + 1;
    }
    return f;
}

bool parse_uint(const std::string& s, int64_t max, int64_t* out) {
    if (s.empty() || s.size() > 18) return false;
    int64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9') return false;
        v = v * 10 + (c - '0');
    }
    if (v > max) return false;
    *out = v;
    return true;
}

// Strict decimal "123", "4.314579", "1.5e3" -> double, without strtod (locale) or
// from_chars (missing for doubles in the wasm toolchain's libc++). Exactly rounded
// for up to 15 significant digits and exponents within 10^±22, which covers any
// timestamp in seconds; beyond that still deterministic on every platform.
bool parse_decimal(const std::string& s, double* out) {
    size_t i = 0;
    uint64_t mant = 0;
    int digits = 0, exp10 = 0;
    bool any = false;
    auto take_digit = [&](char c, bool after_point) {
        any = true;
        if (mant == 0 && c == '0') {
            if (after_point) --exp10;
            return;
        }
        if (digits < 18) {
            mant = mant * 10 + static_cast<uint64_t>(c - '0');
            ++digits;
            if (after_point) --exp10;
        } else if (!after_point) {
            ++exp10;
        }
    };
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') take_digit(s[i++], false);
    if (i < s.size() && s[i] == '.') {
        ++i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') take_digit(s[i++], true);
    }
    if (!any) return false;
    if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
        ++i;
        bool neg = false;
        if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
        int64_t e = 0;
        size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9' && e < 100000) e = e * 10 + (s[i++] - '0');
        if (i == start) return false;
        exp10 += static_cast<int>(neg ? -e : e);
    }
    if (i != s.size()) return false;
    double v = static_cast<double>(mant);
    if (mant == 0) {
        *out = 0;
        return true;
    }
    // Below 1e-300 s is 0 to a simulator counting in nanoseconds (1e-320 is a valid number,
    // not a syntax error); above 1e300 is refused by the caller as too large.
    if (exp10 < -300) {
        *out = 0;
        return true;
    }
    if (exp10 > 300) {
        *out = HUGE_VAL;
        return true;
    }
    double p = 1;
    for (int k = 0; k < (exp10 < 0 ? -exp10 : exp10); ++k) p *= 10;
    v = exp10 < 0 ? v / p : v * p;
    *out = v;  // may be +inf: the caller calls it too large
    return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's algorithm).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
    y -= m <= 2;
    const int64_t era = (y >= 0 ? y : y - 399) / 400;
    const int64_t yoe = y - era * 400;
    const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

// "2023-11-16 18:15:46.6805900" (also with 'T', 'Z' or a ±HH:MM offset) -> ns since 1970.
bool parse_timestamp(const std::string& s, __int128* ns) {
    auto num = [&](size_t pos, size_t len, int64_t* v) {
        if (pos + len > s.size()) return false;
        int64_t x = 0;
        for (size_t k = pos; k < pos + len; ++k) {
            if (s[k] < '0' || s[k] > '9') return false;
            x = x * 10 + (s[k] - '0');
        }
        *v = x;
        return true;
    };
    int64_t y, mo, d, h, mi, se;
    if (!num(0, 4, &y) || s.size() < 19 || s[4] != '-' || !num(5, 2, &mo) || s[7] != '-' || !num(8, 2, &d) ||
        (s[10] != ' ' && s[10] != 'T') || !num(11, 2, &h) || s[13] != ':' || !num(14, 2, &mi) || s[16] != ':' ||
        !num(17, 2, &se))
        return false;
    static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    if (mo < 1 || mo > 12 || d < 1 || d > mdays[mo - 1] || h > 23 || mi > 59 || se > 60) return false;
    size_t i = 19;
    int64_t frac = 0;
    if (i < s.size() && s[i] == '.') {
        ++i;
        int n = 0;
        size_t start = i;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
            if (n < 9) {
                frac = frac * 10 + (s[i] - '0');
                ++n;
            }
            ++i;
        }
        if (i == start) return false;
        for (; n < 9; ++n) frac *= 10;
    }
    int64_t offset_s = 0;
    if (i < s.size()) {
        if (s[i] == 'Z' && i + 1 == s.size()) {
            ++i;
        } else if ((s[i] == '+' || s[i] == '-') && s.size() == i + 6 && s[i + 3] == ':') {
            int64_t oh, om;
            if (!num(i + 1, 2, &oh) || !num(i + 4, 2, &om) || oh > 23 || om > 59) return false;
            offset_s = (s[i] == '-' ? -1 : 1) * (oh * 3600 + om * 60);
            i += 6;
        } else {
            return false;
        }
    }
    const int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se - offset_s;
    *ns = static_cast<__int128>(secs) * 1'000'000'000 + frac;
    return true;
}

}  // namespace

Result<std::vector<Request>> parse_trace_csv(const std::string& text, const std::string& name) {
    size_t pos = 0;
    if (text.size() >= 3 && static_cast<unsigned char>(text[0]) == 0xEF &&
        static_cast<unsigned char>(text[1]) == 0xBB && static_cast<unsigned char>(text[2]) == 0xBF)
        pos = 3;
    int64_t line_no = 0;
    auto next_line = [&](std::string* line) {
        while (pos < text.size()) {
            size_t e = text.find('\n', pos);
            if (e == std::string::npos) e = text.size();
            *line = text.substr(pos, e - pos);
            pos = e + 1;
            ++line_no;
            if (!line->empty() && line->back() == '\r') line->pop_back();
            if (!trim(*line).empty()) return true;
        }
        return false;
    };
    auto at = [&](const std::string& msg) {
        return bad("line " + std::to_string(line_no) + " of " + name + ": " + msg);
    };

    std::string line;
    if (!next_line(&line)) return bad(name + " is empty (expected a CSV header and one request per line)");
    const std::vector<std::string> header = split_commas(line);
    int col_t = -1, col_p = -1, col_o = -1;
    bool raw = false;
    for (int k = 0; k < static_cast<int>(header.size()); ++k) {
        const std::string h = lower(header[static_cast<size_t>(k)]);
        if (h == "timestamp")
            col_t = k, raw = true;
        else if (h == "arrived_at")
            col_t = k;
        else if (h == "contexttokens" || h == "num_prefill_tokens")
            col_p = k;
        else if (h == "generatedtokens" || h == "num_decode_tokens")
            col_o = k;
    }
    if (col_t < 0 || col_p < 0 || col_o < 0)
        return bad(name + ": unrecognized header \"" + line +
                   "\" (expected TIMESTAMP,ContextTokens,GeneratedTokens or "
                   "arrived_at,num_prefill_tokens,num_decode_tokens)");
    const std::string t_name = header[static_cast<size_t>(col_t)];
    const std::string p_name = header[static_cast<size_t>(col_p)];
    const std::string o_name = header[static_cast<size_t>(col_o)];

    std::vector<Request> out;
    // Raw timestamps in 128-bit nanoseconds, exact until made relative: int64 nanoseconds
    // only reach 1677..2262, and two timestamps 584 years apart wrapped to a 0.84 s span.
    std::vector<__int128> ns;
    while (next_line(&line)) {
        const std::vector<std::string> f = split_commas(line);
        if (f.size() != header.size())
            return at("expected " + std::to_string(header.size()) + " fields, found " + std::to_string(f.size()));
        if (static_cast<int64_t>(out.size()) >= kMaxRequests) return at("more than 10,000,000 requests");
        Request q;
        const std::string& ft = f[static_cast<size_t>(col_t)];
        if (raw) {
            __int128 v;
            if (!parse_timestamp(ft, &v))
                return at(t_name + " \"" + ft + "\" is not a timestamp like 2023-11-16 18:15:46.6805900");
            ns.push_back(v);
        } else {
            double v;
            if (!parse_decimal(ft, &v)) return at(t_name + " \"" + ft + "\" is not a non-negative number of seconds");
            if (!(v <= 1e300)) return at(t_name + " \"" + ft + "\" is too large (at most 1e300 seconds)");
            q.arrival_s = v;
        }
        int64_t p, o;
        const std::string& fp = f[static_cast<size_t>(col_p)];
        const std::string& fo = f[static_cast<size_t>(col_o)];
        if (!parse_uint(fp, kMaxTokens, &p))
            return at(p_name + " \"" + fp + "\" is not a token count (an integer from 1 to 10,000,000)");
        if (!parse_uint(fo, kMaxTokens, &o))
            return at(o_name + " \"" + fo + "\" is not a token count (an integer from 1 to 10,000,000)");
        if (p < 1) return at(p_name + " must be at least 1 (an engine refuses an empty prompt)");
        if (o < 1) return at(o_name + " must be at least 1 (a request generates at least one token)");
        q.prompt_tokens = static_cast<int32_t>(p);
        q.output_tokens = static_cast<int32_t>(o);
        out.push_back(q);
    }
    if (out.empty()) return bad(name + " has a header but no requests");
    if (raw) {
        const __int128 t0 = *std::min_element(ns.begin(), ns.end());
        for (size_t k = 0; k < out.size(); ++k) out[k].arrival_s = static_cast<double>(ns[k] - t0) * 1e-9;
    } else {
        double t0 = out[0].arrival_s;
        for (const Request& q : out) t0 = std::min(t0, q.arrival_s);
        for (Request& q : out) q.arrival_s -= t0;
    }
    std::stable_sort(out.begin(), out.end(),
                     [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
    return out;
}

}  // namespace kvb::sim
