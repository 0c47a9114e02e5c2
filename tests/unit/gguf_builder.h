// Builds GGUF headers in memory for tests: a metadata list and a tensor list in, the
// bytes of a GGUF v3 (or v2) header out, tensor offsets laid out as gguf.cpp expects.
// Tensor data is not written (the reader only needs the header); `file_size()` says how
// long the whole file would be.
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "model/gguf.h"

namespace kvb::test {

class GgufBuilder {
public:
    explicit GgufBuilder(uint32_t version = 3) : version_(version) {}

    // ---- metadata ----
    GgufBuilder& u32(const std::string& key, uint32_t v) { return scalar(key, GgufType::U32, &v, 4); }
    GgufBuilder& i32(const std::string& key, int32_t v) { return scalar(key, GgufType::I32, &v, 4); }
    GgufBuilder& u16(const std::string& key, uint16_t v) { return scalar(key, GgufType::U16, &v, 2); }
    GgufBuilder& u64(const std::string& key, uint64_t v) { return scalar(key, GgufType::U64, &v, 8); }
    GgufBuilder& f32(const std::string& key, float v) { return scalar(key, GgufType::F32, &v, 4); }
    GgufBuilder& f64(const std::string& key, double v) { return scalar(key, GgufType::F64, &v, 8); }
    GgufBuilder& boolean(const std::string& key, bool v) {
        uint8_t b = v;
        return scalar(key, GgufType::Bool, &b, 1);
    }
    GgufBuilder& str(const std::string& key, const std::string& v) {
        key_(key, GgufType::String);
        string_(kv_, v);
        ++n_kv_;
        return *this;
    }
    // An array of `n` strings (content synthetic: "t0", "t1", ...), as a vocabulary.
    GgufBuilder& str_array(const std::string& key, uint64_t n) {
        key_(key, GgufType::Array);
        put(kv_, static_cast<uint32_t>(GgufType::String));
        put(kv_, n);
        for (uint64_t k = 0; k < n; ++k) string_(kv_, "t" + std::to_string(k));
        ++n_kv_;
        return *this;
    }
    // An array of `n` numbers of GGUF type `t` (values from `vals`, repeated / zero-filled).
    GgufBuilder& num_array(const std::string& key, GgufType t, uint64_t n, const std::vector<double>& vals = {}) {
        key_(key, GgufType::Array);
        put(kv_, static_cast<uint32_t>(t));
        put(kv_, n);
        for (uint64_t k = 0; k < n; ++k) {
            const double v = vals.empty() ? 0.0 : vals[k % vals.size()];
            switch (t) {
                case GgufType::U8: put(kv_, static_cast<uint8_t>(v)); break;
                case GgufType::I8: put(kv_, static_cast<int8_t>(v)); break;
                case GgufType::U16: put(kv_, static_cast<uint16_t>(v)); break;
                case GgufType::I16: put(kv_, static_cast<int16_t>(v)); break;
                case GgufType::U32: put(kv_, static_cast<uint32_t>(v)); break;
                case GgufType::I32: put(kv_, static_cast<int32_t>(v)); break;
                case GgufType::F32: put(kv_, static_cast<float>(v)); break;
                case GgufType::Bool: put(kv_, static_cast<uint8_t>(v != 0)); break;
                case GgufType::U64: put(kv_, static_cast<uint64_t>(v)); break;
                case GgufType::I64: put(kv_, static_cast<int64_t>(v)); break;
                case GgufType::F64: put(kv_, v); break;
                default: break;
            }
        }
        ++n_kv_;
        return *this;
    }
    // Raw bytes appended to the metadata section, counted as `count` entries (hostile inputs).
    GgufBuilder& raw_kv(const std::vector<uint8_t>& bytes, uint64_t count = 1) {
        kv_.insert(kv_.end(), bytes.begin(), bytes.end());
        n_kv_ += count;
        return *this;
    }

    // ---- tensors ----
    GgufBuilder& tensor(const std::string& name, std::vector<int64_t> ne, uint32_t type) {
        tensors_.push_back({name, std::move(ne), type});
        return *this;
    }
    GgufBuilder& alignment(uint64_t a) {
        align_ = a;
        return *this;
    }

    std::vector<uint8_t> bytes() const {
        std::vector<uint8_t> out = {'G', 'G', 'U', 'F'};
        put(out, version_);
        put(out, static_cast<uint64_t>(tensors_.size()));
        put(out, n_kv_);
        out.insert(out.end(), kv_.begin(), kv_.end());
        uint64_t offset = 0;
        for (const auto& t : tensors_) {
            string_(out, t.name);
            put(out, static_cast<uint32_t>(t.ne.size()));
            for (int64_t n : t.ne) put(out, static_cast<uint64_t>(n));
            put(out, t.type);
            put(out, offset);
            offset += padded(nbytes(t));
        }
        return out;
    }
    // Header, its padding, and every tensor's data (the last one unpadded).
    uint64_t file_size() const {
        const uint64_t h = bytes().size();
        uint64_t size = h + (align_ - h % align_) % align_;
        for (size_t k = 0; k < tensors_.size(); ++k)
            size += k + 1 < tensors_.size() ? padded(nbytes(tensors_[k])) : nbytes(tensors_[k]);
        return size;
    }
    size_t tensor_count() const { return tensors_.size(); }

private:
    struct T {
        std::string name;
        std::vector<int64_t> ne;
        uint32_t type;
    };
    template <class V>
    static void put(std::vector<uint8_t>& b, V v) {
        uint8_t tmp[sizeof(V)];
        std::memcpy(tmp, &v, sizeof(V));
        b.insert(b.end(), tmp, tmp + sizeof(V));
    }
    static void string_(std::vector<uint8_t>& b, const std::string& s) {
        put(b, static_cast<uint64_t>(s.size()));
        b.insert(b.end(), s.begin(), s.end());
    }
    void key_(const std::string& key, GgufType t) {
        string_(kv_, key);
        put(kv_, static_cast<uint32_t>(t));
    }
    GgufBuilder& scalar(const std::string& key, GgufType t, const void* v, size_t n) {
        key_(key, t);
        const uint8_t* p = static_cast<const uint8_t*>(v);
        kv_.insert(kv_.end(), p, p + n);
        ++n_kv_;
        return *this;
    }
    static uint64_t nbytes(const T& t) {
        const GgmlTypeInfo* ti = ggml_type_info(t.type);
        if (!ti) return 0;
        uint64_t n = 1;
        for (int64_t x : t.ne) n *= static_cast<uint64_t>(x);
        return n / static_cast<uint64_t>(ti->block) * static_cast<uint64_t>(ti->type_size);
    }
    uint64_t padded(uint64_t n) const { return n + (align_ - n % align_) % align_; }

    uint32_t version_;
    uint64_t n_kv_ = 0;
    std::vector<uint8_t> kv_;
    std::vector<T> tensors_;
    uint64_t align_ = 32;
};

// ggml type ids used by the fixtures (ggml/include/ggml.h enum ggml_type).
namespace ggml {
constexpr uint32_t F32 = 0, F16 = 1, Q4_0 = 2, Q8_0 = 8, Q4_K = 12, Q5_K = 13, Q6_K = 14, BF16 = 30, MXFP4 = 39;
}

}  // namespace kvb::test
