#include "sim/workload.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <string_view>

#include "base/text.h"
#include "base/units.h"
#include "sim/rng.h"
#include "sim/sharegpt_lengths.h"

namespace kvb::sim {

// Preset length distributions.
//
// ShareGPT: the paper's own lengths, as statistics of the file its evaluation read
// (src/sim/sharegpt_lengths.cpp).
//
// Alpaca: the paper (Kwon et al. 2023, Fig. 11) publishes only the means after
// filtering to the 2048-token OPT context, 19.31 input / 58.45 output tokens, and
// its artifact's Alpaca file (datasets/alpaca_opt_text_completion.pkl, in its tree)
// is missing from the repository snapshot we could read, so these are lognormal fits: a
// multiplicative spread, never negative, one heavy tail. The instructions are short
// and uniform (prompt sigma 0.6 of ln length) while the answers vary more (output
// sigma 0.9); mu is solved so that the means of the *discretised, filtered*
// distribution (round to nearest, at least 1 token, pairs with prompt + output >
// 2048 redrawn like the paper's filter) match the published means (Monte Carlo,
// 400k pairs; test_sim_workload holds the sample means within 2% of 19 / 58).
// Medians: 16 in / 39 out.
const LengthFit& alpaca_fit() {
    static const LengthFit f{2.7644, 0.6, 3.6572, 0.9, 2048};
    return f;
}

namespace {

constexpr int64_t kMaxRequests = 10'000'000;  // drawn, or held whole (a trace not sorted by time)
// A sorted trace is read as the run goes, so only the simulator's request ids (int32)
// bound it: a week of a production trace is tens of millions of requests.
constexpr int64_t kMaxStreamedRequests = 1'000'000'000;
constexpr int64_t kMaxTokens = 10'000'000;

int32_t draw_lognormal(Rng& r, double mu, double sigma) {
    const double x = det_exp(mu + sigma * r.normal());
    const double rounded = std::floor(x + 0.5);
    if (!(rounded >= 1.0)) return 1;
    if (rounded > static_cast<double>(kMaxTokens)) return static_cast<int32_t>(kMaxTokens);
    return static_cast<int32_t>(rounded);
}

Error bad(const std::string& code, MessageParams params = {}) {
    return make_error("bad_value", note(code, std::move(params)));
}

// A refusal already made as a message (a trace line's, made where the line is read).
Error refuse(Message m) {
    return bad(m.code, std::move(m.params));
}

}  // namespace

int64_t trace_rows(const WorkloadSpec& s) {
    return !s.trace.empty() || !s.trace_file ? static_cast<int64_t>(s.trace.size()) : s.trace_file->requests;
}

Result<bool> check_workload(const WorkloadSpec& s) {
    const bool need_trace = s.arrival == Arrival::Trace || s.lengths == Lengths::Trace;
    const int64_t rows = trace_rows(s);
    if (need_trace && rows == 0) return bad("sim_trace_has_none");
    int64_t count = s.requests;
    if (count < 0) return bad("sim_requests_negative");
    if (count == 0) {
        if (!need_trace) return bad("sim_requests_none");
        count = rows;
    }
    const bool streamed = need_trace && s.trace.empty() && s.trace_file && s.trace_file->sorted;
    if (!streamed && count > kMaxRequests) return bad("sim_requests_too_many", {{"max", with_commas(kMaxRequests)}});
    if (need_trace && count > rows)
        return bad("sim_trace_too_short", {{"requests", with_commas(count)}, {"rows", with_commas(rows)}});
    if (s.arrival == Arrival::Poisson && !(s.rate > 0 && std::isfinite(s.rate))) return bad("sim_rate_not_positive");
    switch (s.lengths) {
        case Lengths::Fixed:
            if (s.fixed_prompt < 1 || s.fixed_output < 1) return bad("sim_fixed_lengths");
            break;
        case Lengths::Uniform:
            if (s.min_prompt < 1 || s.min_output < 1 || s.max_prompt < s.min_prompt || s.max_output < s.min_output)
                return bad("sim_uniform_lengths");
            break;
        default: break;
    }
    if (s.shared_prefix < 0 || s.shared_prefix > kMaxTokens)
        return bad("sim_prefix_out_of_range", {{"max", with_commas(kMaxTokens)}});
    if (!(s.shared_fraction >= 0 && s.shared_fraction <= 1)) return bad("sim_prefix_fraction");
    return true;
}

namespace {
Result<std::vector<Request>> read_all(const TraceScan& scan);
}  // namespace

Result<RequestStream> RequestStream::create(const WorkloadSpec& spec) {
    if (auto ok = check_workload(spec); !ok) return ok.error();
    const bool need_trace = spec.arrival == Arrival::Trace || spec.lengths == Lengths::Trace;
    if (need_trace && spec.trace.empty() && spec.trace_file && !spec.trace_file->sorted) {
        // Out of time order: held whole and sorted (at most 10,000,000 requests, as scanned).
        auto rows = read_all(*spec.trace_file);
        if (!rows) return rows.error();
        WorkloadSpec held = spec;
        held.trace = std::move(rows.value());
        held.trace_file.reset();
        return create(held);
    }
    RequestStream r;
    r.count_ = spec.requests > 0 ? spec.requests : trace_rows(spec);
    if (spec.arrival == Arrival::Trace && !spec.trace.empty()) {
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
    if (!need_trace) {
        own.trace.clear();
        own.trace_file.reset();
    } else if (!own.trace.empty()) {
        own.trace_file.reset();
    }
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
    error_ = Error{};
    if (!spec_) return;
    if (spec_->trace_file) {
        std::string().swap(chunk_);
        chunk_pos_ = 0;
        read_at_ = spec_->trace_file->data_offset;
        line_no_ = spec_->trace_file->header_line;
    }
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
    Request q, row;
    if (s.trace_file && !next_trace_row(&row)) {
        index_ = count_;
        return false;
    }
    switch (s.arrival) {
        case Arrival::Batch: q.arrival_s = 0; break;
        case Arrival::Poisson:
            t_ += arrivals_.exponential(s.rate);
            q.arrival_s = t_;
            break;
        case Arrival::Trace: q.arrival_s = s.trace_file ? row.arrival_s : s.trace[i].arrival_s; break;
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
        case Lengths::ShareGpt: draw_sharegpt_lengths(lengths_, &q.prompt_tokens, &q.output_tokens); break;
        case Lengths::Alpaca: {
            const LengthFit& f = alpaca_fit();
            do {
                q.prompt_tokens = draw_lognormal(lengths_, f.mu_prompt, f.sigma_prompt);
                q.output_tokens = draw_lognormal(lengths_, f.mu_output, f.sigma_output);
            } while (q.prompt_tokens + q.output_tokens > f.max_total);
            break;
        }
        case Lengths::Trace:
            q.prompt_tokens = s.trace_file ? row.prompt_tokens : s.trace[i].prompt_tokens;
            q.output_tokens = s.trace_file ? row.output_tokens : s.trace[i].output_tokens;
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

// Views into the line being read, not copies: a trace is read twice (scan, then
// stream) and each of its rows went through a vector of strings, a copy per field
// and one for the line (a third of a whole Azure run's instructions).
std::string_view trim(std::string_view s) {
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

std::vector<std::string> split_commas(std::string_view line) {
    std::vector<std::string> f;
    size_t start = 0;
    for (;;) {
        size_t p = line.find(',', start);
        f.emplace_back(trim(line.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start)));
        if (p == std::string_view::npos) break;
        start = p + 1;
    }
    return f;
}

bool parse_uint(std::string_view s, int64_t max, int64_t* out) {
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
bool parse_decimal(std::string_view s, double* out, bool* too_large) {
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
    *too_large = false;
    if (mant == 0) {
        *out = 0;
        return true;
    }
    // Above 1e300 is too large, decided on the decimal digits themselves: the double the
    // loop below makes of "1e300" is a little above 1e300, and "1e300" was refused as more
    // than 1e300. The value is mant x 10^exp10 with `digits` digits in mant, so its
    // leading digit sits at 10^(digits - 1 + exp10); at 10^300 only 1 followed by zeros
    // (mant a power of ten) is not above it.
    const int64_t lead = int64_t{digits} - 1 + exp10;
    uint64_t m = mant;
    while (m >= 10 && m % 10 == 0) m /= 10;
    const bool power_of_ten = m == 1;
    if (lead > 300 || (lead == 300 && !power_of_ten)) {
        *too_large = true;
        *out = HUGE_VAL;
        return true;
    }
    // Below 1e-300 s is 0 to a simulator counting in nanoseconds (1e-320 is a valid number,
    // not a syntax error).
    if (exp10 < -300) {
        *out = 0;
        return true;
    }
    double p = 1;
    for (int k = 0; k < (exp10 < 0 ? -exp10 : exp10); ++k) p *= 10;
    v = exp10 < 0 ? v / p : v * p;
    *out = v;  // at most 1e300 in decimal: finite
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
bool parse_timestamp(std::string_view s, __int128* ns) {
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

constexpr int64_t kChunkBytes = int64_t{1} << 16;
// No trace line comes near this (an Azure row is ~40 bytes); past it the input is not
// a trace, and one line is all a pass holds.
constexpr size_t kMaxLineBytes = size_t{1} << 16;

enum class LineRead { Line, End, Unreadable, TooLong };

// The next line of `src` (its \r dropped) into *line, a view into `chunk` valid until
// the next call. `chunk` holds bytes read ahead from [pos, size), and `at` is the
// source offset just past them.
LineRead next_line(const TraceSource& src, std::string& chunk, size_t& pos, int64_t& at, std::string_view* line) {
    for (;;) {
        const size_t e = chunk.find('\n', pos);
        if (e != std::string::npos) {
            if (e - pos > kMaxLineBytes) return LineRead::TooLong;
            *line = std::string_view(chunk).substr(pos, e - pos);
            pos = e + 1;
            break;
        }
        if (chunk.size() - pos > kMaxLineBytes) return LineRead::TooLong;
        chunk.erase(0, pos);
        pos = 0;
        const size_t have = chunk.size();
        chunk.resize(have + static_cast<size_t>(kChunkBytes));
        const int64_t got = src(at, &chunk[have], kChunkBytes);
        if (got < 0 || got > kChunkBytes) return LineRead::Unreadable;
        chunk.resize(have + static_cast<size_t>(got));
        at += got;
        if (got == 0) {
            if (chunk.empty()) return LineRead::End;
            *line = chunk;
            pos = chunk.size();
            break;
        }
    }
    if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    return LineRead::Line;
}

// The next non-blank line, counting every line in *line_no (a BOM before line 1 dropped):
// what the scan, read_all and a streamed trace all step by.
LineRead next_text_line(const TraceSource& src, std::string& chunk, size_t& pos, int64_t& at, int64_t* line_no,
                        std::string_view* line) {
    for (;;) {
        const LineRead r = next_line(src, chunk, pos, at, line);
        if (r != LineRead::Line) return r;
        ++*line_no;
        if (*line_no == 1 && line->size() >= 3 && static_cast<unsigned char>((*line)[0]) == 0xEF &&
            static_cast<unsigned char>((*line)[1]) == 0xBB && static_cast<unsigned char>((*line)[2]) == 0xBF)
            line->remove_prefix(3);
        if (!trim(*line).empty()) return r;
    }
}

// One data row of a scanned trace, its time left absolute (seconds, or *ns for raw
// timestamps): a refusal naming the line, or a message without a code when it is good.
Message parse_row(const TraceScan& h, int64_t line_no, std::string_view line, Request* q, __int128* ns) {
    // The three fields read, as trimmed views; the others only counted.
    std::string_view ft, fp, fo;
    int fields = 0;
    for (size_t start = 0;; ++fields) {
        const size_t p = line.find(',', start);
        const std::string_view f = line.substr(start, p == std::string_view::npos ? std::string_view::npos : p - start);
        if (fields == h.col_t) ft = trim(f);
        if (fields == h.col_p) fp = trim(f);
        if (fields == h.col_o) fo = trim(f);
        if (p == std::string_view::npos) break;
        start = p + 1;
    }
    ++fields;
    const auto at = [&](const char* code, MessageParams more) {
        MessageParams params = {{"line", std::to_string(line_no)}, {"file", h.name}};
        for (auto& p : more) params.push_back(std::move(p));
        return note(code, std::move(params));
    };
    if (fields != h.fields)
        return at("sim_trace_fields", {{"expected", std::to_string(h.fields)}, {"found", std::to_string(fields)}});
    if (h.raw) {
        if (!parse_timestamp(ft, ns))
            return at("sim_trace_bad_timestamp", {{"column", h.t_name}, {"value", std::string(ft)}});
    } else {
        double v;
        bool too_large = false;
        if (!parse_decimal(ft, &v, &too_large))
            return at("sim_trace_bad_seconds", {{"column", h.t_name}, {"value", std::string(ft)}});
        if (too_large)
            return at("sim_trace_time_too_large", {{"column", h.t_name}, {"value", std::string(ft)}, {"max", "1e300"}});
        q->arrival_s = v;
    }
    int64_t p, o;
    if (!parse_uint(fp, kMaxTokens, &p))
        return at("sim_trace_bad_count",
                  {{"column", h.p_name}, {"value", std::string(fp)}, {"max", with_commas(kMaxTokens)}});
    if (!parse_uint(fo, kMaxTokens, &o))
        return at("sim_trace_bad_count",
                  {{"column", h.o_name}, {"value", std::string(fo)}, {"max", with_commas(kMaxTokens)}});
    if (p < 1) return at("sim_trace_empty_prompt", {{"column", h.p_name}});
    if (o < 1) return at("sim_trace_no_output", {{"column", h.o_name}});
    q->prompt_tokens = static_cast<int32_t>(p);
    q->output_tokens = static_cast<int32_t>(o);
    q->prefix_tokens = 0;
    return {};
}

// Seconds since the earliest request: raw timestamps subtracted in 128-bit
// nanoseconds, exact (int64 nanoseconds reach only 1677..2262, and two timestamps
// 584 years apart wrapped to a 0.84 s span).
double relative_s(const TraceScan& h, double abs_s, __int128 ns) {
    return h.raw ? static_cast<double>(ns - h.t0_ns) * 1e-9 : abs_s - h.t0_s;
}

Message read_failure(LineRead r, const std::string& name, int64_t line_no) {
    if (r == LineRead::TooLong)
        return note(
            "sim_trace_line_too_long",
            {{"line", std::to_string(line_no + 1)}, {"file", name}, {"max", with_commas(int64_t(kMaxLineBytes))}});
    return note("sim_trace_unreadable", {{"file", name}, {"line", std::to_string(line_no)}});
}

Result<std::vector<Request>> read_all(const TraceScan& h) {
    std::vector<Request> out;
    out.reserve(static_cast<size_t>(h.requests));
    std::string chunk;
    std::string_view line;
    size_t pos = 0;
    int64_t at = h.data_offset, line_no = h.header_line;
    for (;;) {
        const LineRead r = next_text_line(h.source, chunk, pos, at, &line_no, &line);
        if (r == LineRead::End) break;
        if (r != LineRead::Line) return refuse(read_failure(r, h.name, line_no));
        Request q;
        __int128 ns = 0;
        if (Message e = parse_row(h, line_no, line, &q, &ns); !e.code.empty()) return refuse(std::move(e));
        q.arrival_s = relative_s(h, q.arrival_s, ns);
        out.push_back(q);
    }
    if (static_cast<int64_t>(out.size()) != h.requests)
        return bad("sim_trace_changed", {{"file", h.name},
                                         {"found", with_commas(static_cast<int64_t>(out.size()))},
                                         {"requests", with_commas(h.requests)}});
    std::stable_sort(out.begin(), out.end(),
                     [](const Request& a, const Request& b) { return a.arrival_s < b.arrival_s; });
    return out;
}

}  // namespace

TraceSource text_source(std::string text) {
    auto held = std::make_shared<const std::string>(std::move(text));
    return [held](int64_t at, char* buf, int64_t n) -> int64_t {
        if (at < 0 || n < 0) return -1;
        if (at >= static_cast<int64_t>(held->size())) return 0;
        const int64_t k = std::min<int64_t>(n, static_cast<int64_t>(held->size()) - at);
        std::copy_n(held->data() + at, static_cast<size_t>(k), buf);
        return k;
    };
}

Result<std::shared_ptr<const TraceScan>> scan_trace(TraceSource source, const std::string& name) {
    auto h = std::make_shared<TraceScan>();
    h->source = std::move(source);
    h->name = name;
    std::string chunk;
    std::string_view line;
    size_t pos = 0;
    int64_t at = 0, line_no = 0;
    auto read = [&]() { return next_text_line(h->source, chunk, pos, at, &line_no, &line); };

    LineRead r = read();
    if (r == LineRead::End) return bad("sim_trace_empty", {{"file", name}});
    if (r != LineRead::Line) return refuse(read_failure(r, name, line_no));
    const std::vector<std::string> header = split_commas(line);
    for (int k = 0; k < static_cast<int>(header.size()); ++k) {
        const std::string l = lower(header[static_cast<size_t>(k)]);
        if (l == "timestamp")
            h->col_t = k, h->raw = true;
        else if (l == "arrived_at")
            h->col_t = k;
        else if (l == "contexttokens" || l == "num_prefill_tokens")
            h->col_p = k;
        else if (l == "generatedtokens" || l == "num_decode_tokens")
            h->col_o = k;
    }
    if (h->col_t < 0 || h->col_p < 0 || h->col_o < 0)
        return bad("sim_trace_bad_header", {{"file", name}, {"header", std::string(line)}});
    h->fields = static_cast<int>(header.size());
    h->t_name = header[static_cast<size_t>(h->col_t)];
    h->p_name = header[static_cast<size_t>(h->col_p)];
    h->o_name = header[static_cast<size_t>(h->col_o)];
    h->data_offset = at - static_cast<int64_t>(chunk.size() - pos);
    h->header_line = line_no;

    double max_s = 0, min_s = 0;
    __int128 max_ns = 0, min_ns = 0;
    while ((r = read()) == LineRead::Line) {
        const auto here = [&]() { return MessageParams{{"line", std::to_string(line_no)}, {"file", name}}; };
        if (h->requests >= kMaxStreamedRequests) {
            MessageParams p = here();
            p.push_back({"max", with_commas(kMaxStreamedRequests)});
            return bad("sim_trace_too_many", std::move(p));
        }
        if (!h->sorted && h->requests >= kMaxRequests) {
            MessageParams p = here();
            p.push_back({"max", with_commas(kMaxRequests)});
            p.push_back({"streamed", with_commas(kMaxStreamedRequests)});
            return bad("sim_trace_too_many_unsorted", std::move(p));
        }
        Request q;
        __int128 ns = 0;
        if (Message e = parse_row(*h, line_no, line, &q, &ns); !e.code.empty()) return refuse(std::move(e));
        if (h->requests == 0) {
            min_s = max_s = q.arrival_s;
            min_ns = max_ns = ns;
        } else {
            // Out of order: earlier than a request listed before it (counted, then sorted).
            if (h->raw ? ns < max_ns : q.arrival_s < max_s) {
                h->sorted = false;
                ++h->out_of_order;
            }
            min_s = std::min(min_s, q.arrival_s);
            min_ns = std::min(min_ns, ns);
            max_s = std::max(max_s, q.arrival_s);
            max_ns = std::max(max_ns, ns);
        }
        ++h->requests;
    }
    if (r != LineRead::End) return refuse(read_failure(r, name, line_no));
    if (h->requests == 0) return bad("sim_trace_no_requests", {{"file", name}});
    h->t0_s = min_s;
    h->t0_ns = min_ns;
    return std::shared_ptr<const TraceScan>(std::move(h));
}

Result<std::vector<Request>> parse_trace_csv(const std::string& text, const std::string& name) {
    auto scan = scan_trace(text_source(text), name);
    if (!scan) return scan.error();
    return read_all(*scan.value());
}

// The next row of a streamed trace; a trace that no longer reads as it was scanned
// stops the stream with error_ set (the simulator reports it).
bool RequestStream::next_trace_row(Request* q) {
    const TraceScan& h = *spec_->trace_file;
    std::string_view line;
    const LineRead r = next_text_line(h.source, chunk_, chunk_pos_, read_at_, &line_no_, &line);
    if (r == LineRead::End) {
        error_ = bad("sim_trace_ended",
                     {{"file", h.name}, {"line", std::to_string(line_no_)}, {"requests", with_commas(count_)}});
        return false;
    }
    if (r != LineRead::Line) {
        error_ = refuse(read_failure(r, h.name, line_no_));
        return false;
    }
    __int128 ns = 0;
    if (!parse_row(h, line_no_, line, q, &ns).code.empty()) {
        error_ = bad("sim_trace_changed_line", {{"line", std::to_string(line_no_)}, {"file", h.name}});
        return false;
    }
    q->arrival_s = relative_s(h, q->arrival_s, ns);
    return true;
}

}  // namespace kvb::sim
