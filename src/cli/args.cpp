#include "args.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "base/units.h"
#include "model/gguf.h"
#include "model/gguf_spec.h"

namespace kvb::cli {

std::optional<Args> parse_args(const std::vector<std::string>& argv, const ArgSpec& spec, std::ostream& err) {
    Args a;
    for (size_t i = 0; i < argv.size(); ++i) {
        std::string s = argv[i];
        if (s == "--json" || s == "--help" || s == "-h" || spec.switches.count(s)) {
            a.switches.insert(s == "-h" ? "--help" : s);
            continue;
        }
        std::string key = s, value;
        bool inline_value = false;
        if (auto eq = s.find('='); s.rfind("--", 0) == 0 && eq != std::string::npos) {
            key = s.substr(0, eq);
            value = s.substr(eq + 1);
            inline_value = true;
        }
        if (spec.with_value.count(key)) {
            if (!inline_value) {
                if (i + 1 >= argv.size()) {
                    err << "kvbudget: error: " << key << " needs a value\n";
                    return std::nullopt;
                }
                value = argv[++i];
            }
            a.values[key] = value;
            continue;
        }
        if (s.size() > 1 && s[0] == '-' && s != "-") {
            err << "kvbudget: error: unknown option " << key << "\n";
            return std::nullopt;
        }
        a.positional.push_back(s);
    }
    return a;
}

std::optional<Args> parse_command(const std::string& name, const std::vector<std::string>& argv, const ArgSpec& spec,
                                  const char* help, std::ostream& out, std::ostream& err, int& exit_code) {
    auto a = parse_args(argv, spec, err);
    exit_code = kUsage;
    if (!a) return std::nullopt;
    if (a->has("--help")) {
        out << help;
        exit_code = kOk;
        return std::nullopt;
    }
    if (a->positional.size() != 1) {
        err << "kvbudget: error: " << name << " takes one CONFIG (a config.json or .gguf path, or - for stdin)\n"
            << help;
        return std::nullopt;
    }
    return a;
}

namespace {

bool ends_with(const std::string& s, const std::string& tail) {
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

std::string base_name(const std::string& path) {
    auto slash = path.find_last_of('/');
    return slash == std::string::npos ? path : path.substr(slash + 1);
}

// Reads only as much of a GGUF file as its header needs: a first 1 MiB, then whatever
// the parser asks for (metadata with a 262k-token vocabulary is ~10 MiB; tensor data
// is never read).
std::optional<GgufHeader> read_gguf_header(const std::string& path, std::ostream& err) {
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    if (!in) {
        err << "kvbudget: error: cannot read " << path << "\n";
        return std::nullopt;
    }
    const int64_t file_size = static_cast<int64_t>(in.tellg());
    in.seekg(0);
    std::vector<uint8_t> buf;
    uint64_t want = 1 << 20;
    for (;;) {
        const uint64_t have = buf.size();
        const uint64_t target = std::min<uint64_t>(want, static_cast<uint64_t>(file_size));
        if (target > have) {
            buf.resize(static_cast<size_t>(target));
            in.read(reinterpret_cast<char*>(buf.data() + have), static_cast<std::streamsize>(target - have));
            if (static_cast<uint64_t>(in.gcount()) != target - have) {
                err << "kvbudget: error: cannot read " << path << "\n";
                return std::nullopt;
            }
        }
        GgufParse p = parse_gguf(buf.data(), buf.size(), base_name(path), file_size);
        if (p.ok()) return std::move(p.header);
        if (p.status == GgufParse::Status::Error) {
            err << "kvbudget: error: " << p.error.message << "\n";
            return std::nullopt;
        }
        want = std::max<uint64_t>(p.need_total, buf.size() * 2);  // parse_gguf caps need_total at 512 MiB
    }
}

std::optional<ModelSpec> load_gguf(const std::string& path, const std::string& text, std::ostream& err) {
    std::string name = base_name(path);
    if (ends_with(name, ".gguf")) name.resize(name.size() - 5);
    std::optional<Result<ModelSpec>> m;
    if (path == "-") {
        GgufParse p = parse_gguf(reinterpret_cast<const uint8_t*>(text.data()), text.size(), "stdin");
        if (p.status == GgufParse::Status::NeedMore)  // stdin ended inside the header
            p = parse_gguf(reinterpret_cast<const uint8_t*>(text.data()), text.size(), "stdin",
                           static_cast<int64_t>(text.size()));
        if (!p.ok()) {
            err << "kvbudget: error: " << p.error.message << "\n";
            return std::nullopt;
        }
        m = spec_from_gguf(p.header, "stdin");
    } else {
        // Split models: every shard's header (the first shard holds the metadata, each
        // shard a share of the tensors).
        std::vector<std::string> shards = gguf_shard_names(path);
        if (shards.size() > 1) {
            std::vector<GgufHeader> headers;
            for (const auto& s : shards) {
                auto h = read_gguf_header(s, err);
                if (!h) return std::nullopt;
                headers.push_back(std::move(*h));
            }
            const auto cut = name.rfind("-00001-of-");
            if (cut != std::string::npos) name.resize(cut);
            m = spec_from_gguf_shards(headers, name);
        } else {
            auto h = read_gguf_header(path, err);
            if (!h) return std::nullopt;
            m = spec_from_gguf(*h, name);
        }
    }
    if (!*m) {
        err << "kvbudget: error: " << m->error().message << "\n";
        return std::nullopt;
    }
    return m->value();
}

// A config.json is kilobytes (the largest real ones, per-layer NAS block lists, are well
// under 1 MiB); 8 MiB is the most any command reads (the page's cap too, web/src/hub.js),
// so /dev/zero or a model's weights file given by mistake ends with a message instead
// of filling memory, and no config takes a second to read (a 45 MB one took 1.1 s of
// JSON parsing; bench_budget times the largest accepted).
constexpr std::streamsize kMaxConfigBytes = std::streamsize(8) << 20;
constexpr const char* kMaxConfigText = "8 MiB";

bool read_capped(std::istream& in, std::string* text) {
    text->clear();
    char buf[1 << 16];
    while (in) {
        in.read(buf, sizeof buf);
        text->append(buf, static_cast<size_t>(in.gcount()));
        if (static_cast<std::streamsize>(text->size()) > kMaxConfigBytes) return false;
    }
    return true;
}

// A config-sized file: false (and why on `err`) when it cannot be read or is over the cap.
bool read_file_capped(const std::string& path, std::string* text, std::ostream& err) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
        err << "kvbudget: error: cannot read " << path << "\n";
        return false;
    }
    if (read_capped(in, text)) return true;
    err << "kvbudget: error: " << render_english(note("config_too_big", {{"path", path}, {"limit", kMaxConfigText}}))
        << "\n";
    return false;
}

}  // namespace

std::optional<ModelSpec> load_model(const std::string& path, std::ostream& err) {
    std::string text;
    auto refuse = [&](const char* code) {
        err << "kvbudget: error: "
            << render_english(note(code, {{"path", path == "-" ? "stdin" : path}, {"limit", kMaxConfigText}})) << "\n";
        return std::nullopt;
    };
    if (path != "-") {
        struct stat st {};
        if (::stat(path.c_str(), &st) == 0) {
            if (S_ISDIR(st.st_mode)) return refuse("config_is_directory");
            if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) return refuse("config_not_regular_file");
        }
        // GGUF by extension or by magic: only the header is read, never the whole file.
        char magic[4] = {0, 0, 0, 0};
        std::ifstream probe(path, std::ios::binary);
        if (probe) probe.read(magic, 4);
        if (ends_with(path, ".gguf") || (probe && probe.gcount() == 4 && std::string(magic, 4) == "GGUF"))
            return load_gguf(path, "", err);
    }
    if (path == "-") {
        // A GGUF on stdin is read only as far as its header reaches (the size of the
        // whole file, and so whether its tensor data is all there, stays unknown).
        if (std::cin.peek() == 'G') {
            std::string head;
            char buf[1 << 16];
            for (;;) {
                GgufParse p = parse_gguf(reinterpret_cast<const uint8_t*>(head.data()), head.size(), "stdin");
                if (p.status != GgufParse::Status::NeedMore) break;
                while (head.size() < p.need_total) {
                    std::cin.read(buf, sizeof buf);
                    if (std::cin.gcount() <= 0) break;
                    head.append(buf, static_cast<size_t>(std::cin.gcount()));
                }
                if (head.size() < p.need_total) break;  // end of input: parse_gguf says truncated below
            }
            if (is_gguf(reinterpret_cast<const uint8_t*>(head.data()), head.size())) return load_gguf(path, head, err);
            text = head;
        }
        std::string rest;
        if (!read_capped(std::cin, &rest)) return refuse("config_too_big");
        text += rest;
    } else if (!read_file_capped(path, &text, err)) {
        return std::nullopt;
    }
    // Name the model after the file: tests/fixtures/configs/Qwen--Qwen3-8B.json -> Qwen/Qwen3-8B,
    // .../Qwen3-8B/config.json -> Qwen3-8B.
    std::string name = path == "-" ? "stdin" : path;
    auto slash = name.find_last_of('/');
    std::string base = slash == std::string::npos ? name : name.substr(slash + 1);
    if (base == "config.json" && slash != std::string::npos && slash > 0) {
        auto prev = name.find_last_of('/', slash - 1);
        base =
            name.substr(prev == std::string::npos ? 0 : prev + 1, slash - (prev == std::string::npos ? 0 : prev + 1));
    }
    if (base.size() > 5 && base.compare(base.size() - 5, 5, ".json") == 0) base.resize(base.size() - 5);
    if (auto dd = base.find("--"); dd != std::string::npos) base.replace(dd, 2, "/");
    // A model folder's config.json: vLLM also reads hf_quant_config.json beside it when the config has no
    // quantization_config (ModelOpt 0.29 and before); parse_config decides whether it counts.
    std::string hf_quant;
    if (slash != std::string::npos ? name.compare(slash + 1, std::string::npos, "config.json") == 0
                                   : name == "config.json") {
        const std::string sibling =
            (slash == std::string::npos ? std::string() : name.substr(0, slash + 1)) + "hf_quant_config.json";
        struct stat st {};
        if (::stat(sibling.c_str(), &st) == 0 && S_ISREG(st.st_mode) && !read_file_capped(sibling, &hf_quant, err))
            return std::nullopt;
    }
    auto m = parse_config(text, base, hf_quant);
    if (!m) {
        err << "kvbudget: error: " << m.error().message << "\n";
        return std::nullopt;
    }
    return m.value();
}

std::optional<int64_t> get_count(const Args& a, const std::string& key, int64_t def, std::ostream& err) {
    auto it = a.values.find(key);
    if (it == a.values.end()) return def;
    auto v = parse_count(it->second, key);
    if (!v) {
        err << "kvbudget: error: " << v.error().message << "\n";
        return std::nullopt;
    }
    return v.value();
}

std::optional<int64_t> get_context(const Args& a, const std::string& key, int64_t def, std::ostream& err) {
    auto it = a.values.find(key);
    if (it == a.values.end()) return def;
    auto v = parse_context(it->second, key);
    if (!v) {
        err << "kvbudget: error: " << v.error().message << "\n";
        return std::nullopt;
    }
    return v.value();
}

std::optional<int64_t> get_size(const Args& a, const std::string& key, int64_t def, std::ostream& err) {
    auto it = a.values.find(key);
    if (it == a.values.end()) return def;
    auto v = parse_size(it->second);
    if (!v) {
        err << "kvbudget: error: " << key << ": " << v.error().message << "\n";
        return std::nullopt;
    }
    return v.value();
}

std::optional<double> get_fraction(const Args& a, const std::string& key, double def, std::ostream& err) {
    auto it = a.values.find(key);
    if (it == a.values.end()) return def;
    const std::string& s = it->second;
    char* end = nullptr;
    double v = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !(v > 0.0 && v <= 1.0)) {
        err << "kvbudget: error: " << key << " must be a number in (0, 1], got '" << s << "'\n";
        return std::nullopt;
    }
    return v;
}

std::vector<std::string> data_dirs(const char* env, const std::string& share, const std::string& repo,
                                   std::initializer_list<const char*> configured) {
    std::vector<std::string> dirs;
    if (const char* e = std::getenv(env)) dirs.push_back(e);
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) {
        const std::string exe(buf, static_cast<size_t>(n));
        const std::string dir = exe.substr(0, exe.rfind('/'));
        dirs.push_back(dir + "/../share/kvbudget/" + share);
        dirs.push_back(dir + "/../" + repo);
        dirs.push_back(dir + "/../../" + repo);
    }
    for (const char* c : configured)
        if (c && *c) dirs.push_back(c);
    return dirs;
}

std::string json_string(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

}  // namespace kvb::cli
