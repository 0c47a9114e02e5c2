// quantization_config -> QuantPlan: the format of each linear layer and the bytes it holds on the
// GPU after vLLM loads it. Each reader below names the vLLM file (vllm-project/vllm,
// vllm/model_executor/layers/quantization/) and the commit read.
#include "model/quant.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <nlohmann/json.hpp>

#include "base/arith.h"
#include "base/text.h"
#include "model/config_reader.h"

namespace kvb {

using nlohmann::json;

// ---------------------------------------------------------------------------------------
// Bytes

int64_t QuantScheme::bytes(int64_t rows, int64_t cols) const {
    const int64_t elems = rows * cols;
    int64_t scales = 1;
    if (block_rows > 0 && block_cols > 0)
        scales = cdiv(rows, block_rows) * cdiv(cols, block_cols);
    else if (group > 0)
        scales = flat_groups ? cdiv(elems, group) : rows * cdiv(cols, group);
    else if (group == 0)
        scales = rows;
    int64_t b = (elems * bits + 7) / 8;
    b += scales * scale_bytes;
    if (zero_bits > 0) b += (scales * zero_bits + 7) / 8;
    b += int64_t(tensor_words) * 4;
    b += cols * 4 * g_idx_words;
    return b * copies;
}

void QuantScheme::rate(int64_t* num, int64_t* den) const {
    if (group > 0 && block_rows == 0) {
        // bits per group of `group` values, in bytes
        *num = (bits * group + 8 * scale_bytes + zero_bits) * copies;
        *den = 8 * group;
        return;
    }
    *num = bits * copies;
    *den = 8;
}

// ---------------------------------------------------------------------------------------
// Matching

namespace {

bool ident(char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

// Replace `from` by `to` where it stands as a whole name part (not inside self_attn or lm_head).
std::string replace_token(std::string s, const std::string& from, const std::string& to) {
    size_t pos = 0;
    while ((pos = s.find(from, pos)) != std::string::npos) {
        const bool left = pos == 0 || !ident(s[pos - 1]);
        const size_t end = pos + from.size();
        const bool right = end >= s.size() || !ident(s[end]);
        if (left && right) {
            s.replace(pos, from.size(), to);
            pos += to.size();
        } else {
            pos = end;
        }
    }
    return s;
}

std::string strip_prefixes(std::string s, bool regex) {
    // Longest first: "model.language_model." before "model.".
    static const char* prefixes[] = {"model.language_model.", "language_model.model.", "language_model.", "model.",
                                     "backbone."};
    for (const char* p : prefixes) {
        std::string lit = p;
        std::string esc;
        for (char c : lit) {
            if (c == '.') esc += '\\';
            esc += c;
        }
        if (s.compare(0, lit.size(), lit) == 0) return s.substr(lit.size());
        if (regex && s.compare(0, esc.size(), esc) == 0) return s.substr(esc.size());
    }
    return s;
}

}  // namespace

std::string normalize_quant_pattern(const std::string& pattern) {
    const bool regex = pattern.compare(0, 3, "re:") == 0;
    std::string s = regex ? pattern.substr(3) : pattern;
    if (regex && !s.empty() && s[0] == '^') s.erase(0, 1);
    s = strip_prefixes(s, regex);
    // Other families' block names, as Llama names them (the names kvbudget gives its tensors).
    static const std::pair<const char*, const char*> aliases[] = {
        {"attn", "self_attn"},       {"attention", "self_attn"}, {"ffn", "mlp"},
        {"block_sparse_moe", "mlp"}, {"feed_forward", "mlp"},    {"shared_expert", "shared_experts"},
        {"w1", "gate_proj"},         {"w3", "up_proj"},          {"w2", "down_proj"}};
    for (const auto& a : aliases) s = replace_token(s, a.first, a.second);
    if (!regex && s == "head") s = "lm_head";
    return regex ? "re:" + s : s;
}

bool fnmatch(const std::string& p, const std::string& t) {
    size_t pi = 0, ti = 0, star = std::string::npos, mark = 0;
    auto one = [&](size_t& i, char c) -> bool {  // matches p[i...] (one item) against c, advancing i
        if (p[i] == '?') {
            ++i;
            return true;
        }
        if (p[i] == '[') {
            size_t j = i + 1;
            bool neg = false;
            if (j < p.size() && (p[j] == '!' || p[j] == '^')) {
                neg = true;
                ++j;
            }
            bool hit = false;
            size_t k = j;
            while (k < p.size() && (p[k] != ']' || k == j)) {
                if (k + 2 < p.size() && p[k + 1] == '-' && p[k + 2] != ']') {
                    if (c >= p[k] && c <= p[k + 2]) hit = true;
                    k += 3;
                } else {
                    if (c == p[k]) hit = true;
                    ++k;
                }
            }
            if (k >= p.size()) {  // no closing bracket: a literal '['
                if (c != '[') return false;
                ++i;
                return true;
            }
            i = k + 1;
            return hit != neg;
        }
        if (p[i] != c) return false;
        ++i;
        return true;
    };
    while (ti < t.size()) {
        if (pi < p.size() && p[pi] == '*') {
            star = pi++;
            mark = ti;
            continue;
        }
        size_t save = pi;
        if (pi < p.size() && one(pi, t[ti])) {
            ++ti;
            continue;
        }
        pi = save;
        if (star == std::string::npos) return false;
        pi = star + 1;
        ti = ++mark;
    }
    while (pi < p.size() && p[pi] == '*') ++pi;
    return pi == p.size();
}

namespace {

struct RNode {
    enum Kind { Lit, Any, Cls, Grp, Bol, Eol } kind = Lit;
    char c = 0;
    std::vector<std::pair<char, char>> ranges;
    bool neg = false;
    std::vector<std::vector<RNode>> alts;
    int mn = 1, mx = 1;  // mx < 0: unbounded
};

class RParser {
public:
    explicit RParser(const std::string& s) : s_(s) {}
    bool parse(std::vector<std::vector<RNode>>* out) {
        *out = alts();
        return ok_ && i_ == s_.size();
    }

private:
    const std::string& s_;
    size_t i_ = 0;
    bool ok_ = true;

    std::vector<std::vector<RNode>> alts() {
        std::vector<std::vector<RNode>> out(1);
        while (ok_ && i_ < s_.size() && s_[i_] != ')') {
            if (s_[i_] == '|') {
                ++i_;
                out.emplace_back();
                continue;
            }
            RNode n;
            if (!atom(n)) {
                ok_ = false;
                break;
            }
            quant(n);
            out.back().push_back(std::move(n));
        }
        return out;
    }
    static void add_class(RNode& n, char e) {
        switch (e) {
            case 'd': n.ranges.push_back({'0', '9'}); break;
            case 'w':
                n.ranges.push_back({'a', 'z'});
                n.ranges.push_back({'A', 'Z'});
                n.ranges.push_back({'0', '9'});
                n.ranges.push_back({'_', '_'});
                break;
            case 's':
                for (char c : std::string(" \t\n\r\f\v")) n.ranges.push_back({c, c});
                break;
            default: n.ranges.push_back({e, e});
        }
    }
    bool atom(RNode& n) {
        const char ch = s_[i_++];
        switch (ch) {
            case '.': n.kind = RNode::Any; return true;
            case '^': n.kind = RNode::Bol; return true;
            case '$': n.kind = RNode::Eol; return true;
            case '(':
                if (s_.compare(i_, 2, "?:") == 0) i_ += 2;
                n.kind = RNode::Grp;
                n.alts = alts();
                if (i_ >= s_.size() || s_[i_] != ')') return false;
                ++i_;
                return true;
            case '[': {
                n.kind = RNode::Cls;
                if (i_ < s_.size() && s_[i_] == '^') {
                    n.neg = true;
                    ++i_;
                }
                bool first = true;
                while (i_ < s_.size() && (s_[i_] != ']' || first)) {
                    first = false;
                    char a = s_[i_++];
                    if (a == '\\' && i_ < s_.size()) {
                        add_class(n, s_[i_++]);
                        continue;
                    }
                    if (i_ + 1 < s_.size() && s_[i_] == '-' && s_[i_ + 1] != ']') {
                        n.ranges.push_back({a, s_[i_ + 1]});
                        i_ += 2;
                    } else {
                        n.ranges.push_back({a, a});
                    }
                }
                if (i_ >= s_.size()) return false;
                ++i_;
                return true;
            }
            case '\\': {
                if (i_ >= s_.size()) return false;
                const char e = s_[i_++];
                if (e == 'd' || e == 'w' || e == 's' || e == 'D' || e == 'W' || e == 'S') {
                    n.kind = RNode::Cls;
                    n.neg = std::isupper(static_cast<unsigned char>(e)) != 0;
                    add_class(n, static_cast<char>(std::tolower(static_cast<unsigned char>(e))));
                    return true;
                }
                n.kind = RNode::Lit;
                n.c = e;
                return true;
            }
            case '*':
            case '+':
            case '?':
            case ')': return false;
            default:
                n.kind = RNode::Lit;
                n.c = ch;
                return true;
        }
    }
    void quant(RNode& n) {
        if (i_ >= s_.size()) return;
        const char q = s_[i_];
        if (q == '*' || q == '+' || q == '?') {
            n.mn = q == '+' ? 1 : 0;
            n.mx = q == '?' ? 1 : -1;
            ++i_;
        } else if (q == '{') {
            size_t j = i_ + 1;
            int a = 0, b = -1;
            bool digits = false;
            while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
                a = a * 10 + (s_[j++] - '0');
                digits = true;
            }
            if (!digits) return;  // a literal '{'
            if (j < s_.size() && s_[j] == ',') {
                ++j;
                if (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j]))) {
                    b = 0;
                    while (j < s_.size() && std::isdigit(static_cast<unsigned char>(s_[j])))
                        b = b * 10 + (s_[j++] - '0');
                }
            } else {
                b = a;
            }
            if (j >= s_.size() || s_[j] != '}') return;
            n.mn = a;
            n.mx = b;
            i_ = j + 1;
        } else {
            return;
        }
        if (i_ < s_.size() && s_[i_] == '?') ++i_;  // lazy: the same set of matches
    }
};

using Cont = std::function<bool(size_t)>;
bool m_seq(const std::vector<RNode>& seq, size_t idx, const std::string& t, size_t p, const Cont& k);

bool m_one(const RNode& n, const std::string& t, size_t p, const Cont& k) {
    switch (n.kind) {
        case RNode::Lit: return p < t.size() && t[p] == n.c && k(p + 1);
        case RNode::Any: return p < t.size() && t[p] != '\n' && k(p + 1);
        case RNode::Cls: {
            if (p >= t.size()) return false;
            bool hit = false;
            for (const auto& r : n.ranges)
                if (t[p] >= r.first && t[p] <= r.second) hit = true;
            return hit != n.neg && k(p + 1);
        }
        case RNode::Bol: return p == 0 && k(p);
        case RNode::Eol: return (p == t.size() || (p + 1 == t.size() && t[p] == '\n')) && k(p);
        case RNode::Grp:
            for (const auto& alt : n.alts)
                if (m_seq(alt, 0, t, p, k)) return true;
            return false;
    }
    return false;
}

bool m_rep(const RNode& n, int count, const std::string& t, size_t p, const Cont& rest) {
    if (n.mx < 0 || count < n.mx) {
        // Greedy: one more, as long as it consumes something (a zero-width repeat would loop).
        if (m_one(n, t, p, [&](size_t q) { return (q != p || count < n.mn) && m_rep(n, count + 1, t, q, rest); }))
            return true;
    }
    return count >= n.mn && rest(p);
}

bool m_seq(const std::vector<RNode>& seq, size_t idx, const std::string& t, size_t p, const Cont& k) {
    if (idx == seq.size()) return k(p);
    return m_rep(seq[idx], 0, t, p, [&](size_t q) { return m_seq(seq, idx + 1, t, q, k); });
}

}  // namespace

bool regex_match_prefix(const std::string& regex, const std::string& text) {
    std::vector<std::vector<RNode>> alts;
    if (!RParser(regex).parse(&alts)) return false;  // a pattern beyond the subset matches nothing
    RNode top;
    top.kind = RNode::Grp;
    top.alts = std::move(alts);
    return m_one(top, text, 0, [](size_t) { return true; });
}

void QuantPatterns::add(const std::string& p, int value) {
    if (p.compare(0, 3, "re:") == 0) {
        regex.emplace_back(p.substr(3), value);
    } else if (p.find_first_of("*?[") != std::string::npos) {
        const std::string head = p.size() > 2 ? p.substr(0, p.size() - 2) : "";
        if (p.size() > 2 && p.compare(p.size() - 2, 2, ".*") == 0 && head.find_first_of("*?[") == std::string::npos)
            subtree.emplace(head, value);
        else
            wildcard.emplace_back(p, value);
    } else {
        literal.emplace(p, value);
    }
}

int QuantPatterns::find(const std::string& name, bool runs) const {
    if (!literal.empty()) {
        if (runs) {
            // Every dot-bounded run of parts: "layers.3.mlp" in "layers.3.mlp.gate_proj".
            std::vector<size_t> cuts = {0};
            for (size_t i = 0; i < name.size(); ++i)
                if (name[i] == '.') cuts.push_back(i + 1);
            cuts.push_back(name.size() + 1);
            for (size_t a = 0; a + 1 < cuts.size(); ++a)
                for (size_t b = a + 1; b < cuts.size(); ++b) {
                    auto it = literal.find(name.substr(cuts[a], cuts[b] - 1 - cuts[a]));
                    if (it != literal.end()) return it->second;
                }
        } else {
            // The name or one of its ancestors ("layers.0.mlp.experts" holds expert 0's gate_proj).
            for (size_t end = name.size();; end = name.rfind('.', end - 1)) {
                auto it = literal.find(name.substr(0, end));
                if (it != literal.end()) return it->second;
                if (end == 0 || name.rfind('.', end - 1) == std::string::npos) break;
            }
        }
    }
    if (!subtree.empty()) {
        for (size_t dot = name.find('.'); dot != std::string::npos; dot = name.find('.', dot + 1)) {
            auto it = subtree.find(name.substr(0, dot));
            if (it != subtree.end()) return it->second;
        }
    }
    for (const auto& w : wildcard)
        if (fnmatch(w.first, name)) return w.second;
    for (const auto& r : regex)
        if (regex_match_prefix(r.first, name)) return r.second;
    return -1;
}

namespace {

// fp8.py / fbgemm_fp8.py: quant_utils.is_layer_skipped without skip_with_substr. A linear layer is
// skipped when its whole name is listed; a FusedMoE layer ("layers.3.mlp.experts") when an entry
// naming experts contains that prefix (the checkpoint lists every expert's projections).
bool exact_skip(const QuantPatterns& p, const std::string& name) {
    if (p.literal.count(name)) return true;
    const size_t e = name.find(".experts.");
    if (e == std::string::npos) return false;
    const std::string prefix = name.substr(0, e + 8);
    for (const auto& kv : p.literal)
        if (kv.first.find("experts") != std::string::npos && kv.first.find(prefix) != std::string::npos) return true;
    return false;
}

}  // namespace

const QuantScheme* QuantPlan::scheme_for(const std::string& name, bool explicit_only) const {
    if (match == QuantMatch::Exact ? exact_skip(ignore, name)
                                   : ignore.find(name, match != QuantMatch::CompressedTensors) >= 0)
        return nullptr;
    const int t = targets.find(name, false);
    if (t >= 0 && t < static_cast<int>(schemes.size())) return &schemes[static_cast<size_t>(t)];
    if (explicit_only || default_scheme < 0 || default_scheme >= static_cast<int>(schemes.size())) return nullptr;
    return &schemes[static_cast<size_t>(default_scheme)];
}

// ---------------------------------------------------------------------------------------
// Reading quantization_config

namespace {

int64_t int_or(const json& j, const char* key, int64_t dflt) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_integer()) return dflt;
    return it->get<int64_t>();
}
bool bool_or(const json& j, const char* key, bool dflt) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_boolean()) return dflt;
    return it->get<bool>();
}
std::string str_or(const json& j, const char* key) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return "";
    return it->get<std::string>();
}
std::string upper(std::string s) {
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return s;
}
const json* list_at(const json& j, std::initializer_list<const char*> keys) {
    for (const char* k : keys) {
        auto it = j.find(k);
        if (it != j.end() && it->is_array()) return &*it;
    }
    return nullptr;
}
void add_ignores(QuantPlan& p, const json* list, bool modelopt) {
    if (!list) return;
    for (const json& e : *list) {
        if (!e.is_string()) continue;
        const std::string s = e.get<std::string>();
        // modelopt.py apply_vllm_mapper: "path*" means the module and its subtree, "path" and
        // "path.*" (so "layers.1*" does not reach layers.10).
        if (modelopt && s.size() >= 2 && s.back() == '*' && s[s.size() - 2] != '.') {
            p.ignore.add(normalize_quant_pattern(s.substr(0, s.size() - 1)), 0);
            p.ignore.add(normalize_quant_pattern(s.substr(0, s.size() - 1) + ".*"), 0);
        } else {
            p.ignore.add(normalize_quant_pattern(s), 0);
        }
    }
}

QuantScheme fp8_tensor(bool static_input) {
    QuantScheme s;
    s.name = "fp8";
    s.bits = 8;
    s.group = -1;
    s.scale_bytes = 4;
    s.tensor_words = static_input ? 1 : 0;
    return s;
}
QuantScheme fp8_block(int64_t r, int64_t c) {
    QuantScheme s = fp8_tensor(false);
    s.name = "fp8-block";
    s.block_rows = r;
    s.block_cols = c;
    return s;
}
QuantScheme fp4(const char* name, int64_t group, int scale_bytes, int words) {
    QuantScheme s;
    s.name = name;
    s.bits = 4;
    s.group = group;
    s.scale_bytes = scale_bytes;
    s.tensor_words = words;
    return s;
}
QuantScheme int_group(const char* name, int bits, int64_t group, int zero_bits, int g_idx_words) {
    QuantScheme s;
    s.name = name;
    s.bits = bits;
    s.group = group > 0 ? group : 0;  // -1 / none: one group per row (channel)
    s.scale_bytes = 2;                // the model dtype (params_dtype)
    s.zero_bits = zero_bits;
    s.g_idx_words = g_idx_words;
    return s;
}

// The bytes one compressed-tensors config group's weights take (compressed_tensors.py _get_scheme_from_parts).
QuantScheme ct_storage(const json& w, const json* input, std::string* not_in_vllm) {
    const int bits = static_cast<int>(int_or(w, "num_bits", 8));
    const bool is_float = str_or(w, "type") == "float";
    const std::string strategy = str_or(w, "strategy");
    const int64_t group = int_or(w, "group_size", 0);
    const bool has_input = input && input->is_object();
    const bool static_input = has_input && !bool_or(*input, "dynamic", true);
    if (is_float && bits == 8) {
        QuantScheme s = fp8_tensor(static_input);
        auto bs = w.find("block_structure");
        if (strategy == "block" && bs != w.end() && bs->is_array() && bs->size() == 2 && (*bs)[0].is_number_integer() &&
            (*bs)[1].is_number_integer()) {
            s.name = "fp8-block";
            s.block_rows = std::max<int64_t>(1, (*bs)[0].get<int64_t>());
            s.block_cols = std::max<int64_t>(1, (*bs)[1].get<int64_t>());
        } else if (strategy == "channel") {
            s.name = "fp8-channel";
            s.group = 0;
        } else if (strategy == "group" && group > 0) {
            // MXFP8 (compressed_tensors_w8a8_mxfp8.py): an E8M0 byte per 32 values.
            s.name = group == 32 ? "mxfp8" : "fp8-group";
            s.group = group;
            s.scale_bytes = group == 32 ? 1 : 4;
        }
        return s;
    }
    if (is_float && bits == 4) {
        // NVFP4 (compressed_tensors_w4a4_nvfp4.py / w4a16_nvfp4.py): packed pairs, an FP8 scale per
        // 16, weight_global_scale, and input_global_scale when activations are quantized.
        // MXFP4 (w4a16_mxfp4.py / w4a4_mxfp4.py): an E8M0 byte per 32.
        if (group == 32) return fp4("mxfp4", 32, 1, 0);
        return fp4("nvfp4", group > 0 ? group : 16, 1, has_input ? 2 : 1);
    }
    if (!is_float && bits == 8 && has_input) {
        // W8A8 int8 (compressed_tensors_w8a8_int8.py): fp32 scale per channel or per tensor.
        QuantScheme s;
        s.name = "int8";
        s.bits = 8;
        s.group = strategy == "tensor" ? -1 : 0;
        s.scale_bytes = 4;
        s.tensor_words = static_input ? 1 : 0;
        return s;
    }
    // Weight-only integers (compressed_tensors_wNa16.py): packed int32, a scale per group (or per
    // row) in the model dtype, packed zero points when asymmetric, weight_g_idx for actorder
    // "group". On CUDA the Marlin kernel (kernels/mixed_precision/marlin.py @ def725a5) keeps the
    // zero points repacked at the same size and, with g_idx, adds g_idx_sort_indices beside it.
    const bool sym = bool_or(w, "symmetric", true);
    const bool gidx = str_or(w, "actorder") == "group";
    if (bits != 4 && bits != 8) *not_in_vllm = "compressed-tensors int" + std::to_string(bits);
    const std::string name = "w" + std::to_string(bits) + "a16";
    QuantScheme s = int_group(name.c_str(), bits, strategy == "group" ? group : 0, sym ? 0 : bits, gidx ? 2 : 0);
    s.name = name;
    return s;
}

// One compressed-tensors config group's weights, and the scheme vLLM runs them with.
QuantScheme ct_scheme(const json& w, const json* input, const std::string& format, std::string* not_in_vllm) {
    QuantScheme s = ct_storage(w, input, not_in_vllm);
    // vLLM's choice of scheme class (compressed_tensors.py _get_scheme_from_parts, read at v0.7.3 ... v0.27.1), for
    // the forms it has kept the same: fp8 weights of tensor, channel or block strategy (W8A8 when the activations are
    // fp8 too; vLLM takes W8A16 below 8.9 either way), NVFP4 (group 16) and MXFP4 (group 32) weights, int8 weights
    // with int8 activations, and 4- or 8-bit integer weights alone in the pack-quantized format.
    const bool is_float = str_or(w, "type") == "float";
    const std::string strategy = str_or(w, "strategy");
    const bool has_input = input && input->is_object();
    const bool float_input = has_input && str_or(*input, "type") == "float";
    if (is_float && s.bits == 8 && (strategy == "tensor" || strategy == "channel" || strategy == "block"))
        s.ct_scheme = float_input && int_or(*input, "num_bits", 8) == 8 ? "W8A8Fp8" : "W8A16Fp8";
    else if (s.name == "nvfp4")
        s.ct_scheme = has_input ? "W4A4Fp4" : "W4A16Fp4";
    else if (s.name == "mxfp4" && !has_input)
        s.ct_scheme = "W4A16Mxfp4";
    else if (s.name == "int8" && !float_input)
        s.ct_scheme = "W8A8Int8";
    else if (!is_float && !has_input && (s.bits == 4 || s.bits == 8) &&
             (strategy == "channel" || strategy == "group") && format == "pack-quantized")
        s.ct_scheme = "WNA16";
    return s;
}

std::shared_ptr<QuantPlan> read_ct(const json& qc) {
    auto p = std::make_shared<QuantPlan>();
    p->match = QuantMatch::CompressedTensors;
    auto groups = qc.find("config_groups");
    if (groups == qc.end() || !groups->is_object()) return nullptr;
    for (auto it = groups->begin(); it != groups->end(); ++it) {
        const json& g = it.value();
        if (!g.is_object()) continue;
        auto w = g.find("weights");
        if (w == g.end() || !w->is_object()) continue;
        auto in = g.find("input_activations");
        const int idx = static_cast<int>(p->schemes.size());
        // A group's own format (compressed-tensors 0.10 on) wins over the config's.
        std::string format = str_or(g, "format");
        if (format.empty()) format = str_or(qc, "format");
        p->schemes.push_back(ct_scheme(*w, in == g.end() ? nullptr : &*in, format, &p->not_in_vllm));
        auto targets = g.find("targets");
        if (targets == g.end() || !targets->is_array()) {
            if (p->default_scheme < 0) p->default_scheme = idx;
            continue;
        }
        for (const json& t : *targets) {
            if (!t.is_string()) continue;
            const std::string s = t.get<std::string>();
            // A module class name ("Linear") matches every linear layer (check_contains on the class name).
            if (s.compare(0, 3, "re:") != 0 && s.find('.') == std::string::npos &&
                s.find("Linear") != std::string::npos) {
                if (p->default_scheme < 0) p->default_scheme = idx;
            } else {
                p->targets.add(normalize_quant_pattern(s), idx);
            }
        }
    }
    if (p->schemes.empty()) return nullptr;
    add_ignores(*p, list_at(qc, {"ignore"}), false);
    return p;
}

bool modelopt_scheme(const std::string& algo, int64_t group, QuantScheme* s) {
    // modelopt.py @ c9a59901 (QUANT_ALGOS FP8, FP8_PER_CHANNEL_PER_TOKEN, FP8_PB_WO, NVFP4):
    // ModelOptFp8LinearMethod (per-tensor weight_scale + input_scale), the per-channel and block
    // (FP8_PB_WO, 128 x 128) variants, ModelOptNvFp4LinearMethod (weight_scale FP8 per group,
    // weight_scale_2 and input_scale fp32). W4A16_NVFP4, MXFP8 and MIXED_PRECISION are not in that
    // commit's list; their rules are from the checkpoints' listings (nvidia/*-NVFP4 mixed exports).
    if (algo == "FP8") {
        *s = fp8_tensor(true);
    } else if (algo == "FP8_PER_CHANNEL_PER_TOKEN") {
        *s = fp8_tensor(false);
        s->name = "fp8-channel";
        s->group = 0;
    } else if (algo == "FP8_PB_WO") {
        *s = fp8_block(128, 128);
    } else if (algo == "NVFP4") {
        *s = fp4("nvfp4", group > 0 ? group : 16, 1, 2);
    } else if (algo == "W4A16_NVFP4") {
        *s = fp4("nvfp4", group > 0 ? group : 16, 1, 1);
    } else if (algo == "MXFP8") {
        *s = fp8_tensor(false);
        s->name = "mxfp8";
        s->group = 32;
        s->scale_bytes = 1;
    } else {
        return false;
    }
    return true;
}

std::shared_ptr<QuantPlan> read_modelopt(const json& qc) {
    auto p = std::make_shared<QuantPlan>();
    p->match = QuantMatch::ModelOpt;
    const json& q = qc.contains("quantization") && qc["quantization"].is_object() ? qc["quantization"] : qc;
    const std::string algo = upper(str_or(q, "quant_algo"));
    const int64_t group = int_or(q, "group_size", 0);
    if (algo == "MIXED_PRECISION") {
        auto layers = q.find("quantized_layers");
        std::vector<std::string> seen;
        if (layers != q.end() && layers->is_object()) {
            for (auto it = layers->begin(); it != layers->end(); ++it) {
                if (!it.value().is_object()) continue;
                const std::string a = upper(str_or(it.value(), "quant_algo"));
                const int64_t gs = int_or(it.value(), "group_size", group);
                const std::string key = a + "/" + std::to_string(gs);
                auto f = std::find(seen.begin(), seen.end(), key);
                int idx = static_cast<int>(f - seen.begin());
                if (f == seen.end()) {
                    QuantScheme s;
                    if (!modelopt_scheme(a, gs, &s)) {
                        p->not_in_vllm = "ModelOpt " + a;
                        continue;
                    }
                    seen.push_back(key);
                    p->schemes.push_back(s);
                }
                p->targets.add(normalize_quant_pattern(it.key()), idx);
            }
        }
    } else {
        QuantScheme s;
        if (!modelopt_scheme(algo, group, &s)) {
            p->not_in_vllm = "ModelOpt " + (algo.empty() ? std::string("(no quant_algo)") : algo);
            return p->schemes.empty() ? nullptr : p;
        }
        p->schemes.push_back(s);
        p->default_scheme = 0;
        p->algo = algo;
    }
    if (p->schemes.empty()) return nullptr;
    add_ignores(*p, list_at(q, {"ignore", "exclude_modules"}), true);
    return p;
}

}  // namespace

namespace {
// A KV scheme as the notes quote it: the fields that say what is cached, not the observer's settings.
std::string scheme_text(const json& v) {
    if (!v.is_object()) return short_dump(v);
    std::string out;
    for (const char* k : {"num_bits", "type", "strategy", "dynamic"}) {
        auto it = v.find(k);
        if (it == v.end() || it->is_null()) continue;
        out += (out.empty() ? "" : ", ") + std::string(k) + " " +
               (it->is_string() ? it->get<std::string>() : short_dump(*it));
    }
    return out.empty() ? short_dump(v) : out;
}

// Python's truth value of a JSON value, for the `a or b` chains vLLM reads configs with.
bool truthy(const json& v) {
    if (v.is_null()) return false;
    if (v.is_boolean()) return v.get<bool>();
    if (v.is_number()) return v.get<double>() != 0;
    if (v.is_string()) return !v.get_ref<const std::string&>().empty();  // json::empty() is false for any string
    if (v.is_array() || v.is_object()) return !v.empty();
    return false;
}
}  // namespace

// vLLM's get_kv_cache_quant_algo_string (utils/torch_utils.py, v0.14.0 to v0.27.1): for a modelopt* method, the
// first truthy of quantization.kv_cache_scheme, kv_cache_scheme, quantization.kv_cache_quant_algo,
// kv_cache_quant_algo; a dict {dynamic: false, num_bits: 8, type: float} is fp8 and {num_bits: 4, type: float}
// nvfp4 (from 0.20.0), a string is looked up lower-cased in MODELOPT_TO_VLLM_KV_CACHE_DTYPE_MAP (fp8, and nvfp4
// from 0.20.0), anything else is "auto" with a warning. compressed-tensors: CompressedTensorsConfig keeps
// kv_cache_scheme and its Attention layers cache fp8 when it is not None (attention.py, from 0.15.0).
DeclaredKv read_declared_kv(const json& qc, const std::string& method_in) {
    DeclaredKv d;
    if (!qc.is_object()) return d;
    const std::string method = lower(method_in);
    if (method == "compressed-tensors" || method == "compressed_tensors") {
        auto k = qc.find("kv_cache_scheme");
        if (k == qc.end() || k->is_null()) return d;
        d.source = "compressed-tensors";
        d.dtype = "fp8";
        d.written = scheme_text(*k);
        return d;
    }
    if (method.compare(0, 8, "modelopt") != 0) return d;
    const json& inner = qc.contains("quantization") && qc["quantization"].is_object() ? qc["quantization"] : qc;
    const json* kv = nullptr;
    for (const json* o : {&inner, &qc})
        if (!kv && o->contains("kv_cache_scheme") && truthy((*o)["kv_cache_scheme"])) kv = &(*o)["kv_cache_scheme"];
    for (const json* o : {&inner, &qc})
        if (!kv && o->contains("kv_cache_quant_algo") && truthy((*o)["kv_cache_quant_algo"]))
            kv = &(*o)["kv_cache_quant_algo"];
    if (!kv) return d;
    d.source = "modelopt";
    d.written = kv->is_string() ? kv->get<std::string>() : scheme_text(*kv);
    if (kv->is_object()) {
        auto field = [&](const char* k) { return kv->contains(k) ? (*kv)[k] : json(); };
        const json bits = field("num_bits");
        const bool is_float = field("type") == "float";
        if (field("dynamic") == false && bits == 8 && is_float)
            d.dtype = "fp8";
        else if (bits == 4 && is_float)
            d.dtype = "nvfp4";
    } else if (kv->is_string()) {
        const std::string v = lower(kv->get<std::string>());
        if (v == "fp8" || v == "nvfp4") d.dtype = v;
    }
    return d;
}

std::shared_ptr<const QuantPlan> read_quant_plan(const json& qc) {
    if (!qc.is_object()) return nullptr;
    std::string method = lower(str_or(qc, "quant_method"));
    // A ModelOpt export whose config.json names only quant_algo (its hf_quant_config.json says modelopt).
    if (method.empty() && (qc.contains("quant_algo") || qc.contains("quantization"))) method = "modelopt";
    std::shared_ptr<QuantPlan> p;
    if (method == "compressed-tensors") {
        p = read_ct(qc);
    } else if (method.compare(0, 8, "modelopt") == 0) {
        p = read_modelopt(qc);
    } else if (method == "fp8") {
        // fp8.py @ 1436674b (Fp8Config.from_config, Fp8LinearMethod.create_weights): the weight in
        // float8_e4m3fn; with weight_block_size [n, k] an fp32 weight_scale_inv of
        // cdiv(rows, n) x cdiv(cols, k), else one fp32 weight_scale per logical matrix and, for
        // activation_scheme "static", one fp32 input_scale. Block scales with static activations
        // raise ValueError. ignored_layers, or modules_to_not_convert when that is empty, skips a
        // layer by its whole name (quant_utils.is_layer_skipped @ 4de0dd6d).
        p = std::make_shared<QuantPlan>();
        p->match = QuantMatch::Exact;
        const bool static_act = str_or(qc, "activation_scheme") == "static";
        auto wbs = qc.find("weight_block_size");
        if (wbs != qc.end() && wbs->is_array() && wbs->size() == 2 && (*wbs)[0].is_number_integer() &&
            (*wbs)[1].is_number_integer()) {
            p->schemes.push_back(fp8_block(std::max<int64_t>(1, (*wbs)[0].get<int64_t>()),
                                           std::max<int64_t>(1, (*wbs)[1].get<int64_t>())));
            if (static_act) p->not_in_vllm = "fp8 weight_block_size with static activations";
        } else {
            p->schemes.push_back(fp8_tensor(static_act));
        }
        const json* ign = list_at(qc, {"ignored_layers"});
        if (!ign || ign->empty()) ign = list_at(qc, {"modules_to_not_convert"});
        add_ignores(*p, ign, false);
    } else if (method == "fbgemm_fp8") {
        // fbgemm_fp8.py @ 5deacad0: float8_e4m3fn weight, an fp32 weight_scale per output row;
        // modules_to_not_convert by whole name (quant_utils.is_layer_skipped).
        p = std::make_shared<QuantPlan>();
        p->match = QuantMatch::Exact;
        QuantScheme s = fp8_tensor(false);
        s.name = "fp8-channel";
        s.group = 0;
        p->schemes.push_back(s);
        add_ignores(*p, list_at(qc, {"modules_to_not_convert"}), false);
    } else if (method == "awq" || method == "awq_marlin") {
        // awq_marlin.py @ 2ab31a81 (CUDA's kernel for 4-bit AWQ) and awq.py: qweight int32 (8
        // values), scales in the model dtype and qzeros int32 (8 zeros) per group; Marlin repacks
        // each at its size and keeps no g_idx. awq.py allocates qzeros whatever zero_point says,
        // and awq_marlin refuses uint4 without zero points, falling back to it. Only 4-bit
        // (AWQMarlinConfig.TYPE_MAP, AWQConfig "only 4-bit"); "lm_head" quantizes the head.
        p = std::make_shared<QuantPlan>();
        const int bits = static_cast<int>(int_or(qc, "bits", int_or(qc, "w_bit", 4)));
        const int64_t group = int_or(qc, "group_size", int_or(qc, "q_group_size", 128));
        p->schemes.push_back(int_group("awq", bits, group, bits, 0));
        p->lm_head = bool_or(qc, "lm_head", false);
        if (bits != 4) p->not_in_vllm = "AWQ " + std::to_string(bits) + "-bit";
        add_ignores(*p, list_at(qc, {"modules_to_not_convert"}), false);
    } else if (method == "gptq" || method == "gptq_marlin" || method == "auto-round" || method == "auto_round") {
        // The checkpoint stores qweight, scales (model dtype) and qzeros per group and a g_idx. What
        // stays after loading depends on the kernel. gptq_marlin.py @ 0ede9ef3 takes bits 4 / 8
        // with "sym": true and a Marlin group size (-1, 32, 64, 128; is_gptq_marlin_compatible);
        // its kernel (kernels/mixed_precision/marlin.py @ def725a5) empties qzeros (zero_points
        // False) and, without desc_act, g_idx; with desc_act it keeps the sorted g_idx and adds
        // g_idx_sort_indices, two int32 per input column. Otherwise gptq.py @ e5dd90be (bits 2, 3,
        // 4, 8): qzeros stay, g_idx is emptied without desc_act and argsorted with it. desc_act
        // with group_size -1 is no act order (GPTQMarlinConfig). "lm_head" quantizes the head.
        p = std::make_shared<QuantPlan>();
        const int bits = static_cast<int>(int_or(qc, "bits", 4));
        const int64_t group = int_or(qc, "group_size", 128);
        const bool sym = bool_or(qc, "sym", false) && qc.contains("desc_act");
        const bool marlin =
            sym && (bits == 4 || bits == 8) && (group == -1 || group == 32 || group == 64 || group == 128);
        const bool act_order = bool_or(qc, "desc_act", false) && group != -1;
        p->schemes.push_back(int_group(bits == 8 ? "gptq-int8" : "gptq", bits, group, marlin ? 0 : bits,
                                       act_order ? (marlin ? 2 : 1) : 0));
        p->lm_head = bool_or(qc, "lm_head", false);
        if (bits != 2 && bits != 3 && bits != 4 && bits != 8) p->not_in_vllm = "GPTQ " + std::to_string(bits) + "-bit";
        add_ignores(*p, list_at(qc, {"modules_to_not_convert"}), false);
    } else if (method == "bitsandbytes") {
        // bitsandbytes.py @ 5a6541db: a pre-quantized 4-bit weight is a uint8 tensor of
        // rows * cols / 2; its QuantState (model_loader/bitsandbytes_loader.py @ c9e9c484,
        // _quantized_4bit_generator) sits on the GPU: an absmax per blocksize values of the
        // flattened matrix and the 16-entry fp32 code table (quant_map). _dequantize_dq turns a
        // double-quantized absmax (8-bit + nested fp32) into fp32 at load, so the GPU holds an fp32
        // absmax per 64 either way (64: bitsandbytes' 4-bit blocksize, which the config does not
        // name; the checkpoint's quant_state says it). 8-bit: int8 weight and an fp32 SCB per row
        // (loaded on the CPU, copied to the GPU into the matmul state by the profile run).
        // bnb_4bit_quant_type defaults to fp4 (BitsAndBytesConfig.from_config).
        p = std::make_shared<QuantPlan>();
        QuantScheme s;
        if (bool_or(qc, "load_in_8bit", false)) {
            s.name = "bnb-int8";
            s.bits = 8;
            s.group = 0;
            s.scale_bytes = 4;
        } else {
            s.name = lower(str_or(qc, "bnb_4bit_quant_type")) == "nf4" ? "nf4" : "fp4";
            s.bits = 4;
            s.group = 64;
            s.flat_groups = true;
            s.scale_bytes = 4;
            s.tensor_words = 16;
        }
        p->schemes.push_back(s);
        add_ignores(*p, list_at(qc, {"llm_int8_skip_modules"}), false);
    } else if (method == "mxfp4") {
        // mxfp4.py @ afdb4a4f: routed experts only (Mxfp4MoEMethod: uint8 pairs of values and a
        // uint8 E8M0 scale per 32; linear layers are not MXFP4). The backends pad the expert
        // widths (Marlin: intermediate to 128, hidden to 256; FlashInfer SM100: both to 256;
        // Triton: intermediate to 64), which is not counted here.
        p = std::make_shared<QuantPlan>();
        p->schemes.push_back(fp4("mxfp4", 32, 1, 0));
        p->experts_only = true;
        add_ignores(*p, list_at(qc, {"modules_to_not_convert"}), false);
    } else if (method == "hqq") {
        // hqq_marlin.py @ 91b4f8fb: W_q repacked to GPTQ int32 at load, zero and scale in the
        // model dtype per group; process_weights_after_loading adds marlin_qweight, marlin_zeros
        // and marlin_scales of the same sizes and keeps the loaded parameters, so the GPU holds
        // both. HQQMarlinConfig asserts nbits 4 and group_size 64; skip_modules by name part.
        p = std::make_shared<QuantPlan>();
        const json* wq = &qc;
        if (qc.contains("quant_config") && qc["quant_config"].is_object()) {
            const json& c = qc["quant_config"];
            if (c.contains("weight_quant_params") && c["weight_quant_params"].is_object())
                wq = &c["weight_quant_params"];
        }
        const int bits = static_cast<int>(int_or(*wq, "nbits", 4));
        const int64_t group = int_or(*wq, "group_size", 64);
        QuantScheme s = int_group("hqq", bits, group, 16, 0);
        s.copies = 2;
        p->schemes.push_back(s);
        if (bits != 4 || group != 64)
            p->not_in_vllm = "HQQ " + std::to_string(bits) + "-bit group " + std::to_string(group);
        add_ignores(*p, list_at(qc, {"skip_modules"}), false);
    }
    if (!p || p->schemes.empty()) return nullptr;
    if (p->default_scheme < 0 && p->targets.empty()) p->default_scheme = 0;
    p->method = str_or(qc, "quant_method").empty() ? method : str_or(qc, "quant_method");
    return p;
}

}  // namespace kvb
