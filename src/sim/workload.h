// Workloads for the paging simulator: when requests arrive and how long they are.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/result.h"
#include "sim/rng.h"

namespace kvb::sim {

struct Request {
    double arrival_s = 0;       // seconds since the start of the run, non-decreasing
    int32_t prompt_tokens = 0;  // including the shared prefix, if any
    int32_t output_tokens = 0;  // tokens to generate (>= 1)
    int32_t prefix_tokens = 0;  // leading prompt tokens that are the common system prompt
};

// Trace text read a piece at a time, so a trace of any length is never held whole
// (a week of a production trace is tens of millions of lines): fills `buf` with up
// to `n` bytes from byte `at` and returns how many (0 at the end), or -1 when the
// source cannot be read. The CLI reads a file; the page's worker a File's slices.
using TraceSource = std::function<int64_t(int64_t at, char* buf, int64_t n)>;
TraceSource text_source(std::string text);  // over text it keeps

// A first pass over a trace (scan_trace): every line checked, the requests counted,
// the earliest time and the order found, holding one line at a time. The second
// pass (a RequestStream) then reads the requests as the run reaches them.
struct TraceScan {
    TraceSource source;
    std::string name;
    int64_t requests = 0;
    bool sorted = true;        // arrivals non-decreasing in file order: streamed, else sorted in memory
    int64_t out_of_order = 0;  // rows earlier than a row listed before them
    // How to read the rows again.
    int64_t data_offset = 0;  // byte after the header line
    int64_t header_line = 0;  // its line number
    int fields = 0, col_t = -1, col_p = -1, col_o = -1;
    bool raw = false;                    // TIMESTAMP column (dates), else arrived_at seconds
    std::string t_name, p_name, o_name;  // the header's own spellings, for messages
    __int128 t0_ns = 0;                  // raw: the earliest timestamp, nanoseconds
    double t0_s = 0;                     // arrived_at: the earliest time
};

enum class Arrival { Batch, Poisson, Trace };
enum class Lengths { Fixed, Uniform, ShareGpt, Alpaca, Trace };

struct WorkloadSpec {
    Arrival arrival = Arrival::Batch;  // Batch: all at t=0 (offline); Trace: timestamps of `trace`
    double rate = 0;                   // requests per second, Poisson
    Lengths lengths = Lengths::ShareGpt;
    int32_t fixed_prompt = 0, fixed_output = 0;  // Fixed
    int32_t min_prompt = 0, max_prompt = 0;      // Uniform, inclusive
    int32_t min_output = 0, max_output = 0;
    std::vector<Request> trace;  // Trace lengths and/or arrivals, held (built by hand, or sorted)
    // Or a scanned trace, read as the run goes; used when `trace` is empty.
    std::shared_ptr<const TraceScan> trace_file;
    int64_t requests = 0;  // how many; 0 = all of the trace (required otherwise)
    // A common system prompt of `shared_prefix` tokens is prepended to each request
    // with probability `shared_fraction` (the paper's shared few-shot prefix).
    int32_t shared_prefix = 0;
    double shared_fraction = 0;
    uint64_t seed = 0;
};

// The lognormal length fit of the Alpaca preset (see workload.cpp for why; ShareGPT
// draws the paper's own length statistics, sim/sharegpt_lengths.h).
struct LengthFit {
    double mu_prompt, sigma_prompt, mu_output, sigma_output;
    int32_t max_total;  // pairs with prompt + output above this are redrawn
};
const LengthFit& alpaca_fit();

// Checks a spec without drawing anything (cheap: what make_workload refuses).
Result<bool> check_workload(const WorkloadSpec& spec);

// The workload drawn one request at a time, in arrival order, holding nothing per
// request: the same requests, in the same order, as make_workload (which collects
// it), so a simulation of ten million requests does not hold ten million requests.
// A trace spec is read from spec.trace, or from spec.trace_file a line at a time (a
// trace that is not sorted by arrival is read whole and sorted once, as make_workload does).
class RequestStream {
public:
    // The spec must pass check_workload (create() checks it).
    static Result<RequestStream> create(const WorkloadSpec& spec);
    // A stream over given requests (kept by value), in their order.
    static RequestStream of(std::vector<Request> requests);

    int64_t size() const { return count_; }
    int64_t position() const { return index_; }
    bool next(Request* out);  // false past the end, or when a streamed trace fails (error())
    void rewind();            // back to the first request, same draws again
    // Why a streamed trace stopped early (the file changed or became unreadable since
    // it was scanned): a coded refusal; failed() is false otherwise.
    bool failed() const { return !error_.code.empty(); }
    const Error& error() const { return error_; }

private:
    // Shared: copies of a stream (one per policy) share the spec and its trace.
    std::shared_ptr<const WorkloadSpec> spec_;
    std::shared_ptr<const std::vector<Request>> given_;  // of(): the requests themselves
    bool use_given_ = false;
    int64_t count_ = 0, index_ = 0;
    double t_ = 0;
    Rng arrivals_, lengths_, prefix_;
    // A streamed trace: the bytes read ahead of the next line (one chunk) and where they end.
    std::string chunk_;
    size_t chunk_pos_ = 0;
    int64_t read_at_ = 0, line_no_ = 0;
    Error error_;
    bool next_trace_row(Request* q);
};

// Draws the workload. Deterministic for a given spec (and seed) on every platform.
Result<std::vector<Request>> make_workload(const WorkloadSpec& spec);

// The first pass over a trace in Azure CSV form (as parse_trace_csv below): refuses
// what parse_trace_csv refuses, with the same messages, in one pass of bounded memory.
Result<std::shared_ptr<const TraceScan>> scan_trace(TraceSource source, const std::string& name);

// Parses an Azure LLM inference trace, either the raw form
// `TIMESTAMP,ContextTokens,GeneratedTokens` (timestamps like 2023-11-16 18:15:46.6805900)
// or the processed form `arrived_at,num_prefill_tokens,num_decode_tokens` (seconds).
// Arrivals are returned relative to the earliest request, sorted (stable).
// `name` is used in error messages ("line 12 of trace.csv: ...").
Result<std::vector<Request>> parse_trace_csv(const std::string& text, const std::string& name);

}  // namespace kvb::sim
