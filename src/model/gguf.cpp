// GGUF header reader. The checks follow ggml/src/gguf.cpp (gguf_init_from_file_impl)
// so a file kvbudget accepts is one llama.cpp would open, and each refusal names the
// key, tensor or count that is wrong.
#include "model/gguf.h"

#include <cstdio>
#include <cstring>
#include <set>

#include "base/arith.h"

namespace kvb {

const char* gguf_type_name(GgufType t) {
    // llama_model_loader prints gguf_type_name(): these are its strings.
    switch (t) {
        case GgufType::U8: return "u8";
        case GgufType::I8: return "i8";
        case GgufType::U16: return "u16";
        case GgufType::I16: return "i16";
        case GgufType::U32: return "u32";
        case GgufType::I32: return "i32";
        case GgufType::F32: return "f32";
        case GgufType::Bool: return "bool";
        case GgufType::String: return "str";
        case GgufType::Array: return "arr";
        case GgufType::U64: return "u64";
        case GgufType::I64: return "i64";
        case GgufType::F64: return "f64";
    }
    return "?";
}

bool GgufValue::is_int() const {
    switch (type) {
        case GgufType::U8:
        case GgufType::I8:
        case GgufType::U16:
        case GgufType::I16:
        case GgufType::U32:
        case GgufType::I32:
        case GgufType::U64:
        case GgufType::I64:
        case GgufType::Bool: return true;
        default: return false;
    }
}

std::optional<int64_t> GgufValue::as_int() const {
    switch (type) {
        case GgufType::U8:
        case GgufType::U16:
        case GgufType::U32:
        case GgufType::U64:
        case GgufType::Bool:
            if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
            return static_cast<int64_t>(u);
        case GgufType::I8:
        case GgufType::I16:
        case GgufType::I32:
        case GgufType::I64: return i;
        default: return std::nullopt;
    }
}

std::optional<double> GgufValue::as_number() const {
    if (type == GgufType::F32 || type == GgufType::F64) return f;
    if (auto v = as_int()) return static_cast<double>(*v);
    return std::nullopt;
}

const GgufValue* GgufHeader::find(const std::string& key) const {
    for (const auto& e : kv)
        if (e.key == key) return &e.value;
    return nullptr;
}

const GgmlTypeInfo* ggml_type_info(uint32_t id) {
    // ggml/src/ggml.c type_traits[] (blck_size, type_size) and ggml/include/ggml.h enum
    // ggml_type. Ids 4, 5 (Q4_2, Q4_3) and 31-33, 36-38 (repacked Q4_0 / IQ4_NL) were
    // removed from GGUF files upstream: blck_size 0, gguf.cpp refuses them.
    static const GgmlTypeInfo table[] = {
        {"f32", 1, 4},      {"f16", 1, 2},        {"q4_0", 32, 18},     {"q4_1", 32, 20},     {"q4_2", 0, 0},
        {"q4_3", 0, 0},     {"q5_0", 32, 22},     {"q5_1", 32, 24},     {"q8_0", 32, 34},     {"q8_1", 32, 36},
        {"q2_K", 256, 84},  {"q3_K", 256, 110},   {"q4_K", 256, 144},   {"q5_K", 256, 176},   {"q6_K", 256, 210},
        {"q8_K", 256, 292}, {"iq2_xxs", 256, 66}, {"iq2_xs", 256, 74},  {"iq3_xxs", 256, 98}, {"iq1_s", 256, 50},
        {"iq4_nl", 32, 18}, {"iq3_s", 256, 110},  {"iq2_s", 256, 82},   {"iq4_xs", 256, 136}, {"i8", 1, 1},
        {"i16", 1, 2},      {"i32", 1, 4},        {"i64", 1, 8},        {"f64", 1, 8},        {"iq1_m", 256, 56},
        {"bf16", 1, 2},     {"q4_0_4_4", 0, 0},   {"q4_0_4_8", 0, 0},   {"q4_0_8_8", 0, 0},   {"tq1_0", 256, 54},
        {"tq2_0", 256, 66}, {"iq4_nl_4_4", 0, 0}, {"iq4_nl_4_8", 0, 0}, {"iq4_nl_8_8", 0, 0}, {"mxfp4", 32, 17},
        {"nvfp4", 64, 36},  {"q1_0", 128, 18},    {"q2_0", 64, 18},
    };
    if (id >= sizeof table / sizeof table[0] || table[id].block == 0) return nullptr;
    return &table[id];
}

bool is_gguf(const uint8_t* data, size_t size) {
    return size >= 4 && std::memcmp(data, "GGUF", 4) == 0;
}

namespace {

// A header beyond this is refused rather than read: real headers (a 262k-token
// vocabulary with merges and a chat template) stay under 30 MiB, and the caller
// grows its read up to what we ask for.
constexpr uint64_t kMaxHeader = uint64_t(512) << 20;
constexpr int kMaxDepth = 8;               // nested arrays
constexpr uint64_t kKeepArray = 4096;      // arrays longer than this are counted, not stored
constexpr uint64_t kKeepBudget = 1 << 18;  // items stored over the whole header
constexpr size_t kMaxTensorName = 64;      // GGML_MAX_NAME: names must be shorter
constexpr uint32_t kMaxDims = 4;           // GGML_MAX_DIMS

uint64_t fixed_size(GgufType t) {
    switch (t) {
        case GgufType::U8:
        case GgufType::I8:
        case GgufType::Bool: return 1;
        case GgufType::U16:
        case GgufType::I16: return 2;
        case GgufType::U32:
        case GgufType::I32:
        case GgufType::F32: return 4;
        case GgufType::U64:
        case GgufType::I64:
        case GgufType::F64: return 8;
        default: return 0;
    }
}
// Fewest bytes one element of type t takes on the wire (a string is its 8-byte
// length, an array its type and count).
uint64_t min_size(GgufType t) {
    if (t == GgufType::String) return 8;
    if (t == GgufType::Array) return 12;
    return fixed_size(t);
}
bool valid_type(uint32_t t) {
    return t <= 12;
}

// Every step returns false once `out` holds a verdict (need more bytes, or a refusal);
// no exceptions, so the same code runs in WebAssembly builds without them.
struct Reader {
    const uint8_t* d;
    uint64_t n;
    uint64_t pos;
    const std::string& name;
    int64_t file_size;
    GgufParse& out;
    uint64_t kept = 0;

    bool fail(const char* category, Message m) {
        out.status = GgufParse::Status::Error;
        out.error = make_error(category, std::move(m));
        return false;
    }
    // The header needs `need` more bytes from `pos` to read `what`.
    bool require(uint64_t need, const std::string& what) {
        if (need <= n - pos) return true;
        const uint64_t total = pos + need;
        if (need > kMaxHeader || total > kMaxHeader)
            return fail("bad_gguf",
                        note("gguf_header_too_large", {{"file", name}, {"what", what}, {"limit", "512 MiB"}}));
        if (file_size >= 0 && total > static_cast<uint64_t>(file_size))
            return fail("truncated_gguf", note("gguf_truncated", {{"file", name},
                                                                  {"what", what},
                                                                  {"size", std::to_string(file_size)},
                                                                  {"need", std::to_string(total)}}));
        out.status = GgufParse::Status::NeedMore;
        out.need_total = total;
        return false;
    }
    template <class T>
    bool raw(T& v, const std::string& what) {
        if (!require(sizeof(T), what)) return false;
        std::memcpy(&v, d + pos, sizeof(T));  // GGUF is little-endian, as every host we build for
        pos += sizeof(T);
        return true;
    }
    bool str(std::string& s, const std::string& what, uint64_t max_len = kMaxHeader) {
        uint64_t len = 0;
        if (!raw(len, what)) return false;
        if (len > max_len)
            return fail(
                "bad_gguf",
                note("gguf_string_too_long",
                     {{"file", name}, {"what", what}, {"len", std::to_string(len)}, {"max", std::to_string(max_len)}}));
        if (!require(len, what)) return false;
        s.assign(reinterpret_cast<const char*>(d + pos), static_cast<size_t>(len));
        pos += len;
        return true;
    }
    bool type_id(GgufType& t, const std::string& what) {
        uint32_t id = 0;
        if (!raw(id, what)) return false;
        if (!valid_type(id))
            return fail("bad_gguf",
                        note("gguf_bad_value_type", {{"file", name}, {"what", what}, {"id", std::to_string(id)}}));
        t = static_cast<GgufType>(id);
        return true;
    }
    template <class T, class D>
    bool num(D& dst, const std::string& what) {
        T v{};
        if (!raw(v, what)) return false;
        dst = static_cast<D>(v);
        return true;
    }

    bool scalar(GgufValue& v, const std::string& what) {
        switch (v.type) {
            case GgufType::U8: return num<uint8_t>(v.u, what);
            case GgufType::I8: return num<int8_t>(v.i, what);
            case GgufType::U16: return num<uint16_t>(v.u, what);
            case GgufType::I16: return num<int16_t>(v.i, what);
            case GgufType::U32: return num<uint32_t>(v.u, what);
            case GgufType::I32: return num<int32_t>(v.i, what);
            case GgufType::F32: return num<float>(v.f, what);
            case GgufType::U64: return num<uint64_t>(v.u, what);
            case GgufType::I64: return num<int64_t>(v.i, what);
            case GgufType::F64: return num<double>(v.f, what);
            case GgufType::Bool: {
                uint8_t b = 0;
                if (!raw(b, what)) return false;
                // One byte; anything but 0 / 1 is not a bool.
                if (b > 1)
                    return fail("bad_gguf",
                                note("gguf_bad_bool", {{"file", name}, {"what", what}, {"value", std::to_string(b)}}));
                v.u = b;
                return true;
            }
            case GgufType::String: return str(v.str, what);
            case GgufType::Array: return true;
        }
        return true;
    }

    bool value(GgufValue& v, const std::string& what, int depth) {
        if (v.type != GgufType::Array) return scalar(v, what);
        if (depth >= kMaxDepth)
            return fail("bad_gguf",
                        note("gguf_nesting", {{"file", name}, {"what", what}, {"max", std::to_string(kMaxDepth)}}));
        if (!type_id(v.elem_type, what) || !raw(v.count, what)) return false;
        // The elements must be there before anything is stored for them.
        const uint64_t least = min_size(v.elem_type);
        if (v.count > kMaxHeader / least)
            return fail(
                "bad_gguf",
                note("gguf_count",
                     {{"file", name}, {"what", what}, {"count", std::to_string(v.count)}, {"limit", "512 MiB"}}));
        if (!require(v.count * least, what)) return false;
        const uint64_t fs = fixed_size(v.elem_type);
        v.items_kept = v.count <= kKeepArray && kept + v.count <= kKeepBudget;
        if (v.items_kept) {
            kept += v.count;
            v.items.reserve(static_cast<size_t>(v.count));  // bounded by kKeepArray, and the bytes are present
        }
        if (!v.items_kept && fs > 0) {  // fixed-size elements nobody will look at: skip them
            pos += v.count * fs;
            return true;
        }
        for (uint64_t k = 0; k < v.count; ++k) {
            GgufValue item;
            item.type = v.elem_type;
            if (!value(item, what, depth + 1)) return false;
            if (v.items_kept) v.items.push_back(std::move(item));
        }
        return true;
    }

    bool header(GgufHeader& h);
    bool tensor(GgufHeader& h, uint64_t k, std::set<std::string>& names, uint64_t& expected_offset);
};

bool Reader::header(GgufHeader& h) {
    uint32_t version = 0;
    if (!require(4, "the magic")) return false;
    pos = 4;
    if (!raw(version, "the version")) return false;
    h.version = version;
    if (version == 1) return fail("unsupported_gguf", note("gguf_v1", {{"file", name}}));
    if (version != 2 && version != 3) {
        // gguf.cpp: a version with the low 16 bits clear is a file of the other endianness.
        const bool endian = (version & 0xFFFFu) == 0;
        return fail("unsupported_gguf", note(endian ? "gguf_big_endian" : "gguf_version",
                                             {{"file", name}, {"version", std::to_string(version)}}));
    }
    uint64_t n_tensors = 0, n_kv = 0;
    if (!raw(n_tensors, "the tensor count") || !raw(n_kv, "the metadata count")) return false;
    // A metadata pair takes at least 13 bytes, a tensor info 24: a count no header
    // could hold is refused before anything is reserved for it.
    if (n_kv > kMaxHeader / 13)
        return fail("bad_gguf", note("gguf_count", {{"file", name},
                                                    {"what", "the metadata count"},
                                                    {"count", std::to_string(n_kv)},
                                                    {"limit", "512 MiB"}}));
    if (n_tensors > kMaxHeader / 24)
        return fail("bad_gguf", note("gguf_count", {{"file", name},
                                                    {"what", "the tensor count"},
                                                    {"count", std::to_string(n_tensors)},
                                                    {"limit", "512 MiB"}}));
    if (!require(n_kv * 13 + n_tensors * 24, "the metadata and tensor infos")) return false;

    std::set<std::string> keys;
    for (uint64_t k = 0; k < n_kv; ++k) {
        GgufKv e;
        if (!str(e.key, "the key of metadata entry " + std::to_string(k), 65535)) return false;
        const std::string what = "metadata " + e.key;
        if (!keys.insert(e.key).second)
            return fail("bad_gguf", note("gguf_duplicate_key", {{"file", name}, {"key", e.key}}));
        if (!type_id(e.value.type, what) || !value(e.value, what, 0)) return false;
        h.kv.push_back(std::move(e));
    }
    if (const GgufValue* a = h.find("general.alignment")) {
        // gguf.cpp: general.alignment must be a u32 power of two.
        if (!(a->type == GgufType::U32 && a->u != 0 && (a->u & (a->u - 1)) == 0))
            return fail("bad_gguf",
                        note("gguf_alignment", {{"file", name},
                                                {"value", a->as_int() ? std::to_string(*a->as_int())
                                                                      : std::string(gguf_type_name(a->type))}}));
        h.alignment = a->u;
    }

    std::set<std::string> names;
    uint64_t expected_offset = 0;
    for (uint64_t k = 0; k < n_tensors; ++k)
        if (!tensor(h, k, names, expected_offset)) return false;
    h.header_bytes = pos;
    h.data_offset = pos + (h.alignment - pos % h.alignment) % h.alignment;
    h.data_bytes = expected_offset;
    // The last tensor's padding need not be in the file; its bytes must.
    if (file_size >= 0 && !h.tensors.empty()) {
        const GgufTensorInfo& last = h.tensors.back();
        const uint64_t end = h.data_offset + last.offset + static_cast<uint64_t>(last.bytes);
        if (end > static_cast<uint64_t>(file_size))
            return fail("truncated_gguf",
                        note("gguf_data_past_end",
                             {{"file", name}, {"end", std::to_string(end)}, {"size", std::to_string(file_size)}}));
    }
    return true;
}

bool Reader::tensor(GgufHeader& h, uint64_t k, std::set<std::string>& names, uint64_t& expected_offset) {
    GgufTensorInfo t;
    if (!str(t.name, "the name of tensor info " + std::to_string(k), 65535)) return false;
    if (t.name.size() >= kMaxTensorName)
        return fail("bad_gguf",
                    note("gguf_tensor_name",
                         {{"file", name}, {"tensor", t.name.substr(0, 80)}, {"len", std::to_string(t.name.size())}}));
    if (!names.insert(t.name).second)
        return fail("bad_gguf", note("gguf_duplicate_tensor", {{"file", name}, {"tensor", t.name}}));
    const std::string what = "tensor " + t.name;
    uint32_t nd = 0;
    if (!raw(nd, what)) return false;
    if (nd > kMaxDims)
        return fail("bad_gguf",
                    note("gguf_tensor_dims", {{"file", name}, {"tensor", t.name}, {"n", std::to_string(nd)}}));
    int64_t elements = 1;
    for (uint32_t j = 0; j < nd; ++j) {
        uint64_t ne = 0;
        if (!raw(ne, what)) return false;
        if (ne > static_cast<uint64_t>(INT64_MAX) || mul_overflows(elements, static_cast<int64_t>(ne), &elements))
            return fail("bad_gguf", note("gguf_tensor_size", {{"file", name}, {"tensor", t.name}}));
        t.ne.push_back(static_cast<int64_t>(ne));
    }
    if (!raw(t.type, what) || !raw(t.offset, what)) return false;
    const GgmlTypeInfo* ti = ggml_type_info(t.type);
    if (!ti)
        return fail("bad_gguf",
                    note("gguf_tensor_type", {{"file", name}, {"tensor", t.name}, {"id", std::to_string(t.type)}}));
    const int64_t ne0 = t.ne.empty() ? 1 : t.ne[0];
    if (ne0 % ti->block != 0)
        return fail("bad_gguf", note("gguf_tensor_block", {{"file", name},
                                                           {"tensor", t.name},
                                                           {"ne0", std::to_string(ne0)},
                                                           {"type", ti->name},
                                                           {"block", std::to_string(ti->block)}}));
    // ggml_nbytes of a contiguous tensor: whole blocks per row times rows.
    int64_t bytes = 0;
    if (mul_overflows(elements / ti->block, ti->type_size, &bytes))
        return fail("bad_gguf", note("gguf_tensor_size", {{"file", name}, {"tensor", t.name}}));
    t.elements = elements;
    t.bytes = bytes;
    // gguf.cpp: tensors lie back to back in the data section, each padded to the alignment.
    if (t.offset != expected_offset)
        return fail("bad_gguf", note("gguf_tensor_offset", {{"file", name},
                                                            {"tensor", t.name},
                                                            {"offset", std::to_string(t.offset)},
                                                            {"expected", std::to_string(expected_offset)}}));
    const int64_t pad = static_cast<int64_t>((h.alignment - static_cast<uint64_t>(bytes) % h.alignment) % h.alignment);
    int64_t padded = 0, next = 0;
    if (add_overflows(bytes, pad, &padded) || add_overflows(static_cast<int64_t>(expected_offset), padded, &next) ||
        add_overflows(h.tensor_bytes, bytes, &h.tensor_bytes) ||
        add_overflows(h.tensor_elements, elements, &h.tensor_elements))
        return fail("bad_gguf", note("gguf_tensor_size", {{"file", name}, {"tensor", t.name}}));
    expected_offset = static_cast<uint64_t>(next);
    h.tensors.push_back(std::move(t));
    return true;
}

}  // namespace

GgufParse parse_gguf(const uint8_t* data, size_t size, const std::string& name, int64_t file_size) {
    GgufParse out;
    // Bytes past the stated end of the file are not the file's.
    if (file_size >= 0 && static_cast<uint64_t>(file_size) < size) size = static_cast<size_t>(file_size);
    Reader r{data, static_cast<uint64_t>(size), 0, name, file_size, out};
    // The magic first: anything that is not a GGUF is said so before "need more".
    const size_t seen = size < 4 ? size : 4;
    if (seen > 0 && std::memcmp(data, "GGUF", seen) != 0) {
        std::string shown;
        for (size_t k = 0; k < seen; ++k) {
            const unsigned char c = data[k];
            if (c >= 0x20 && c < 0x7f) {
                shown += static_cast<char>(c);
            } else {
                char buf[8];
                std::snprintf(buf, sizeof buf, "\\x%02x", c);
                shown += buf;
            }
        }
        r.fail("not_gguf", note("gguf_not_gguf", {{"file", name}, {"magic", shown}}));
        return out;
    }
    if (r.header(out.header)) {
        out.status = GgufParse::Status::Ok;
    } else {
        out.header = GgufHeader{};
    }
    return out;
}

}  // namespace kvb
