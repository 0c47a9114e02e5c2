#include "check/lab.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <regex>

#include "base/text.h"
#include "base/units.h"
#include "engines/transformers_cache.h"

namespace kvb {

namespace {

std::vector<std::string> words(const std::string& s) {
    std::vector<std::string> out;
    std::string cur;
    for (char c : s + " ") {
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (!cur.empty()) out.push_back(cur);
            cur.clear();
        } else {
            cur += c;
        }
    }
    return out;
}

// Cut long pasted text in messages: the user sees which line, not a screenful.
std::string shown(const std::string& s) {
    return s.size() <= 60 ? s : s.substr(0, 57) + "...";
}

bool is_number(const std::string& s) {
    if (s.empty() || s.size() > 24) return false;
    int dots = 0;
    for (char c : s) {
        if (c == '.')
            ++dots;
        else if (!std::isdigit(static_cast<unsigned char>(c)))
            return false;
    }
    return dots <= 1 && s != ".";
}

bool is_unit(const std::string& u) {
    static const char* const units[] = {"b", "k", "kb", "kib", "m", "mb", "mib", "g", "gb", "gib", "t", "tb", "tib"};
    const std::string l = lower(u);
    for (const char* x : units)
        if (l == x) return true;
    return false;
}

// "5.31GiB" -> {"5.31", "GiB"}; {"", ""} when the token does not start with a number.
std::pair<std::string, std::string> split_number(const std::string& tok) {
    size_t i = 0;
    while (i < tok.size() && (std::isdigit(static_cast<unsigned char>(tok[i])) || tok[i] == '.')) ++i;
    if (i == 0 || !is_number(tok.substr(0, i))) return {"", ""};
    return {tok.substr(0, i), tok.substr(i)};
}

Error lab_error(const char* code, MessageParams p = {}) {
    return make_error("bad_value", note(code, std::move(p)));
}

// A size the user typed, with its unit: "5.31 GiB", "5300 MB", "5.2G". Consumes tokens from `i`.
Result<int64_t> take_size(const std::vector<std::string>& t, size_t& i, int64_t line) {
    const std::string ln = std::to_string(line);
    if (i >= t.size()) return lab_error("lab_no_value", {{"line", ln}});
    auto [num, unit] = split_number(t[i]);
    if (num.empty()) return lab_error("lab_bad_size", {{"line", ln}, {"value", shown(t[i])}});
    std::string text = t[i];
    ++i;
    if (unit.empty() && i < t.size() && is_unit(t[i])) {
        unit = t[i];
        text += " " + t[i];
        ++i;
    }
    if (unit.empty() && i < t.size() && lab_measure_id(t[i]).empty())  // "5.3 parsecs"
        return lab_error("lab_bad_size", {{"line", ln}, {"value", shown(text + " " + t[i])}});
    if (unit.empty()) return lab_error("lab_no_unit", {{"line", ln}, {"value", num}});
    if (!is_unit(unit)) return lab_error("lab_bad_size", {{"line", ln}, {"value", shown(text)}});
    auto v = parse_size(num + " " + unit);
    if (!v) return lab_error("lab_bad_size", {{"line", ln}, {"value", shown(text)}});
    return v.value();
}

struct Candidate {
    LabPoint point;
    std::string measure;     // "" = as the table's
    bool from_tool = false;  // /usr/bin/time prints several measures at once: the table's is kept
    bool baseline = false;
};

// The -c and -n 0 of a command line ("llama-completion -m m.gguf -c 4096 -n 0", GNU time's
// "Command being timed: "..."", a "$ /usr/bin/time -l ..." prompt line); nullopt when it has no -c.
struct Command {
    int64_t context = 0;
    bool n0 = false;
};
std::optional<Command> read_command(const std::string& line) {
    std::string s = line;
    for (char& c : s)
        if (c == '"' || c == '\'') c = ' ';
    const auto t = words(s);
    std::optional<Command> cmd;
    bool n0 = false;
    for (size_t i = 0; i < t.size(); ++i) {
        std::string v;
        if ((t[i] == "-c" || t[i] == "--ctx-size") && i + 1 < t.size())
            v = t[i + 1];
        else if (t[i].rfind("--ctx-size=", 0) == 0)
            v = t[i].substr(11);
        else if (t[i].rfind("-c=", 0) == 0)
            v = t[i].substr(3);
        if (!v.empty())
            if (auto c = parse_context(v, "-c")) cmd = Command{c.value(), false};
        if ((t[i] == "-n" || t[i] == "--n-predict" || t[i] == "--predict") && i + 1 < t.size() && t[i + 1] == "0")
            n0 = true;
        if (t[i] == "-n=0" || t[i] == "--n-predict=0") n0 = true;
    }
    if (cmd) cmd->n0 = n0;
    return cmd;
}

}  // namespace

std::string lab_measure_id(const std::string& name) {
    std::string s = lower(trim(name));
    for (char& c : s)
        if (c == '-' || c == ' ') c = '_';
    if (s.rfind("torch.cuda.", 0) == 0) s = s.substr(11);
    // Most specific first: max_memory_reserved holds memory_reserved.
    if (s.find("max_memory_reserved") != std::string::npos || s == "torch_max_reserved") return "torch_max_reserved";
    if (s.find("max_memory_allocated") != std::string::npos || s == "torch_max_allocated") return "torch_max_allocated";
    if (s.find("memory_reserved") != std::string::npos || s == "torch_reserved") return "torch_reserved";
    if (s.find("memory_allocated") != std::string::npos || s == "torch_allocated") return "torch_allocated";
    if (s.find("nvidia_smi") != std::string::npos || s.find("memory.used") != std::string::npos) return "nvidia_smi";
    if (s.find("footprint") != std::string::npos) return "footprint";
    if (s == "rss" || s == "maxrss" || s == "max_rss" || s.find("resident_set_size") != std::string::npos ||
        s.find("(rss)") != std::string::npos)
        return "rss";
    return "";
}

std::string lab_measure_name(const std::string& id) {
    if (id == "rss") return "maximum resident set size (RSS)";
    if (id == "footprint") return "peak memory footprint";
    if (id == "nvidia_smi") return "nvidia-smi memory.used";
    if (id == "torch_allocated") return "torch.cuda.memory_allocated";
    if (id == "torch_max_allocated") return "torch.cuda.max_memory_allocated";
    if (id == "torch_reserved") return "torch.cuda.memory_reserved";
    if (id == "torch_max_reserved") return "torch.cuda.max_memory_reserved";
    return id;
}

Result<LabInput> read_lab_paste(const std::string& text, const std::string& measure) {
    if (static_cast<int64_t>(text.size()) > kMaxLabBytes)
        return lab_error("lab_too_large", {{"limit", format_bytes(kMaxLabBytes)}});
    std::string flag;
    if (!measure.empty()) {
        flag = lab_measure_id(measure);
        if (flag.empty()) return lab_error("lab_unknown_measure", {{"measure", shown(measure)}});
    }
    const std::string low_all = lower(text);
    // /usr/bin/time's output holds many other lines (page faults, context switches): read
    // only what the lab needs from it. A plain table is read strictly, line by line.
    const bool tool = low_all.find("resident set size") != std::string::npos ||
                      low_all.find("peak memory footprint") != std::string::npos;
    static const std::regex n_ctx_re(R"((?:^|[^\w])n_ctx\s*=\s*(\d{1,9})(?:\D|$))");

    std::vector<Candidate> cands;
    std::vector<std::pair<std::string, int64_t>> tags;  // measures rows or headers name, with their line
    std::optional<int64_t> weights;
    std::optional<LabPoint> baseline_typed;
    std::optional<Command> cmd;
    int64_t number = 0;
    size_t pos = 0;
    while (pos <= text.size()) {
        size_t end = text.find('\n', pos);
        if (end == std::string::npos) end = text.size();
        const std::string raw = text.substr(pos, end - pos);
        pos = end + 1;
        ++number;
        const std::string ln = std::to_string(number);
        std::string line = trim(raw);
        if (line.empty() || line.rfind("```", 0) == 0) continue;
        const std::string low = lower(line);

        const bool rss = low.find("resident set size") != std::string::npos;
        const bool foot = low.find("peak memory footprint") != std::string::npos;
        if (rss || foot) {
            int64_t v = -1;
            if (auto k = low.find("(kbytes)"); k != std::string::npos) {  // GNU time -v
                const std::string rest =
                    trim(low.substr(low.find(':', k) == std::string::npos ? low.size() : low.find(':', k) + 1));
                if (!rest.empty() && is_number(rest) && rest.find('.') == std::string::npos && rest.size() < 16)
                    v = std::strtoll(rest.c_str(), nullptr, 10) * 1024;
            } else {  // macOS time -l: bytes first
                const auto t = words(low);
                if (!t.empty() && is_number(t[0]) && t[0].find('.') == std::string::npos && t[0].size() < 19)
                    v = std::strtoll(t[0].c_str(), nullptr, 10);
            }
            if (v < 0) return lab_error("lab_bad_line", {{"line", ln}, {"text", shown(line)}});
            if (!cmd) return lab_error("lab_no_context", {{"line", ln}});
            Candidate c;
            c.point = LabPoint{number, cmd->context, v};
            c.measure = rss ? "rss" : "footprint";
            c.from_tool = true;
            c.baseline = cmd->n0;
            cands.push_back(c);
            continue;
        }
        if (auto c = read_command(line)) {
            cmd = c;
            continue;
        }
        std::smatch mm;
        if (std::regex_search(low, mm, n_ctx_re)) {
            cmd = Command{std::strtoll(mm[1].str().c_str(), nullptr, 10), false};
            continue;
        }
        // Separators people paste: Markdown tables, CSV, "4096: 5.31 GiB", "key = value".
        std::string flat = line;
        while (!flat.empty() && flat[0] == '#') flat.erase(0, 1);
        for (char& ch : flat)
            if (ch == '|' || ch == ',' || ch == ';' || ch == '\t' || ch == ':' || ch == '=') ch = ' ';
        const auto t = words(flat);
        if (t.empty()) continue;
        bool dashes = true;  // a Markdown separator row
        for (const auto& w : t)
            if (w.find_first_not_of("-") != std::string::npos) dashes = false;
        if (dashes) continue;
        const std::string w0 = lower(t[0]);
        if (w0 == "measure") {
            std::string rest;
            for (size_t i = 1; i < t.size(); ++i) rest += (i > 1 ? " " : "") + t[i];
            const std::string id = lab_measure_id(rest);
            if (id.empty()) return lab_error("lab_unknown_measure", {{"measure", shown(rest)}});
            tags.emplace_back(id, number);
            continue;
        }
        if (w0 == "baseline" || w0 == "n0" || w0 == "-n0" || w0 == "weights" || w0 == "weight" || w0 == "model" ||
            w0 == "gguf") {
            size_t i = 1;
            while (i < t.size() && split_number(t[i]).first.empty()) ++i;  // "weight file", "-n 0 run"
            if (w0 == "baseline" || w0 == "n0" || w0 == "-n0") {
                auto v = take_size(t, i, number);
                if (!v) return v.error();
                baseline_typed = LabPoint{number, 0, v.value()};
            } else {
                auto v = take_size(t, i, number);
                if (!v) return v.error();
                weights = v.value();
            }
            continue;
        }
        if (line[0] == '#') continue;
        // In a tool's output, lines such as "2.10 real 0.91 user" are passed over.
        if (!split_number(t[0]).first.empty() && !tool) {
            auto ctx = parse_context(t[0], "context");
            if (!ctx || ctx.value() <= 0) return lab_error("lab_bad_context", {{"line", ln}, {"value", shown(t[0])}});
            size_t i = 1;
            auto v = take_size(t, i, number);
            if (!v) return v.error();
            Candidate c;
            c.point = LabPoint{number, ctx.value(), v.value()};
            if (i < t.size()) {
                std::string rest;
                for (size_t k = i; k < t.size(); ++k) rest += (k > i ? " " : "") + t[k];
                c.measure = lab_measure_id(rest);
                if (c.measure.empty()) return lab_error("lab_bad_line", {{"line", ln}, {"text", shown(line)}});
                tags.emplace_back(c.measure, number);
            }
            cands.push_back(c);
            continue;
        }
        // A header row ("| context | RSS |") may name the measure; other text is refused
        // in a plain table and passed over in a tool's output.
        if (low.find_first_of("0123456789") == std::string::npos) {
            std::string id = lab_measure_id(low);
            for (const auto& w : t)
                if (id.empty()) id = lab_measure_id(w);
            if (!id.empty()) {
                tags.emplace_back(id, number);
                continue;
            }
            bool header = false;
            for (const auto& w : t) header |= lower(w) == "context" || lower(w) == "ctx" || lower(w) == "tokens";
            if (header) continue;
        }
        if (tool) continue;
        return lab_error("lab_bad_line", {{"line", ln}, {"text", shown(line)}});
    }

    // One measure per table: what the flag, the headers and the rows name must agree.
    std::vector<std::string> named;
    if (!flag.empty()) named.push_back(flag);
    for (const auto& [id, l] : tags)
        if (std::find(named.begin(), named.end(), id) == named.end()) named.push_back(id);
    if (named.size() > 1)
        return lab_error("lab_mixed_measures",
                         {{"first", lab_measure_name(named[0])}, {"second", lab_measure_name(named[1])}});
    if (cands.empty()) return lab_error("lab_empty");
    std::string chosen = named.empty() ? "" : named[0];
    bool tool_rows = false, tool_rss = false;
    std::string tool_measure;
    for (const auto& c : cands)
        if (c.from_tool) {
            tool_rows = true;
            tool_rss |= c.measure == "rss";
            if (tool_measure.empty()) tool_measure = c.measure;
        }
    if (chosen.empty() && tool_rows) chosen = tool_rss ? "rss" : tool_measure;
    if (chosen.empty()) return lab_error("lab_no_measure");
    if (tool_rows) {
        bool any = false;
        for (const auto& c : cands) any |= c.from_tool && c.measure == chosen;
        if (!any)
            return lab_error("lab_mixed_measures",
                             {{"first", lab_measure_name(chosen)}, {"second", lab_measure_name(tool_measure)}});
    }

    LabInput in;
    in.measure = chosen;
    in.weights = weights;
    if (baseline_typed) in.baseline = baseline_typed->measured;
    for (const auto& c : cands) {
        if (c.from_tool && c.measure != chosen) continue;
        if (c.baseline) {
            if (in.baseline) return lab_error("lab_two_baselines", {{"line", std::to_string(c.point.line)}});
            in.baseline = c.point.measured;
            continue;
        }
        for (const auto& p : in.points)
            if (p.context == c.point.context)
                return lab_error("lab_same_context", {{"context", with_commas(p.context)},
                                                      {"first", std::to_string(p.line)},
                                                      {"second", std::to_string(c.point.line)}});
        in.points.push_back(c.point);
    }
    if (in.points.empty()) return lab_error("lab_empty");
    if (in.points.size() < 2) return lab_error("lab_too_few", {{"context", with_commas(in.points[0].context)}});
    std::sort(in.points.begin(), in.points.end(),
              [](const LabPoint& a, const LabPoint& b) { return a.context < b.context; });
    return in;
}

namespace {

// Least squares y = a + b x; x has at least two distinct values.
std::pair<double, double> fit(const std::vector<double>& x, const std::vector<double>& y) {
    const double n = static_cast<double>(x.size());
    double sx = 0, sy = 0;
    for (size_t i = 0; i < x.size(); ++i) sx += x[i], sy += y[i];
    const double mx = sx / n, my = sy / n;
    double sxx = 0, sxy = 0;
    for (size_t i = 0; i < x.size(); ++i) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    const double b = sxy / sxx;
    return {my - b * mx, b};
}

}  // namespace

Result<LabReport> lab_table(const LabInput& in, const ModelSpec& m, const LabSettings& s) {
    if (s.engine == "vllm") return lab_error("lab_vllm_preallocates");
    if (s.engine != "llamacpp" && s.engine != "transformers")
        return lab_error("lab_unknown_engine", {{"engine", shown(s.engine)}});
    if (in.points.size() < 2)
        return lab_error("lab_too_few", {{"context", in.points.empty() ? "0" : with_commas(in.points[0].context)}});
    LabReport r;
    r.engine = s.engine;
    r.model = m.name;
    r.measure = in.measure;
    r.baseline = in.baseline;
    r.weights = in.weights;
    if (s.engine == "llamacpp") {
        r.settings = {{"type_k", s.llama.type_k}, {"type_v", s.llama.type_v}};
        if (s.llama.n_seq_max != 1) r.settings.emplace_back("n_seq_max", std::to_string(s.llama.n_seq_max));
        if (s.llama.kv_unified) r.settings.emplace_back("kv_unified", "true");
        if (s.llama.swa_full) r.settings.emplace_back("swa_full", "true");
    } else {
        r.settings = {{"dtype", s.dtype.empty() ? m.dtype : s.dtype}};
    }
    for (size_t i = 1; i < in.points.size(); ++i)
        for (size_t j = 0; j < i; ++j)
            if (in.points[i].context == in.points[j].context)
                return lab_error("lab_same_context", {{"context", with_commas(in.points[i].context)},
                                                      {"first", std::to_string(in.points[j].line)},
                                                      {"second", std::to_string(in.points[i].line)}});
    std::vector<double> x, y, fy;
    for (const LabPoint& p : in.points) {
        LabRow row;
        row.line = p.line;
        row.context = p.context;
        row.measured = p.measured;
        if (s.engine == "llamacpp") {
            LlamaOptions o = s.llama;
            o.n_ctx = p.context;
            auto lay = llamacpp_layout(m, o);
            if (!lay) return lay.error();
            row.formula_kv = lay->total_bytes;
        } else {
            auto b = transformers_cache_bytes(m, p.context, 1, s.dtype);
            if (!b) return b.error();
            row.formula_kv = b.value();
        }
        if (!r.rows.empty()) {
            const LabRow& prev = r.rows.back();
            row.increment = row.measured - prev.measured;
            row.formula_increment = row.formula_kv - prev.formula_kv;
            if (*row.formula_increment > 0)
                row.deviation_percent =
                    double(*row.increment - *row.formula_increment) / double(*row.formula_increment) * 100.0;
            if (*row.increment <= 0)
                r.notes.push_back(note("lab_not_increasing", {{"from", with_commas(prev.context)},
                                                              {"to", with_commas(row.context)},
                                                              {"change", format_bytes(*row.increment)}}));
        }
        x.push_back(double(p.context));
        y.push_back(double(p.measured));
        fy.push_back(double(row.formula_kv));
        r.rows.push_back(row);
    }
    const auto [a, b] = fit(x, y);
    const auto [fa, fb] = fit(x, fy);
    (void)fa;
    r.intercept = a;
    r.slope = b;
    r.formula_slope = fb;
    if (b > 0 && fb > 0)
        r.deviation_percent = (b - fb) / fb * 100.0;
    else if (b <= 0)
        r.notes.push_back(note("lab_slope_not_positive"));
    if (in.weights && std::fabs(a) < 9.0e18) {  // llround of an extrapolated intercept past int64 is undefined
        r.runtime = static_cast<int64_t>(std::llround(a)) - *in.weights;
        if (*r.runtime < 0)
            r.notes.push_back(note("lab_intercept_below_weights", {{"intercept", format_bytes(std::llround(a))},
                                                                   {"weights", format_bytes(*in.weights)}}));
    }
    return r;
}

}  // namespace kvb
