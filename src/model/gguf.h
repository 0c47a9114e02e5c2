// GGUF header reader: bytes in, header out. No I/O and no Emscripten: the caller
// (CLI file reads, the page's range requests) hands over a prefix of the file and
// is told either the parsed header, how many bytes the header needs in total, or
// why the file is refused. Every count in the file is untrusted: nothing is
// allocated from a count before the bytes behind it have been seen.
// Format: ggml/docs/gguf.md and ggml/src/gguf.cpp (gguf_init_from_file_impl).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"

namespace kvb {

// GGUF metadata value types (gguf.h enum gguf_type).
enum class GgufType : uint32_t {
    U8 = 0,
    I8 = 1,
    U16 = 2,
    I16 = 3,
    U32 = 4,
    I32 = 5,
    F32 = 6,
    Bool = 7,
    String = 8,
    Array = 9,
    U64 = 10,
    I64 = 11,
    F64 = 12,
};
const char* gguf_type_name(GgufType t);  // as llama.cpp's loader prints it: u32, f32, str, arr, ...

// One metadata value: a tagged scalar, a string, or an array. Arrays always know
// their element type and count; their items are kept only while the reader's item
// budget lasts (a 150k-entry vocabulary is counted, not stored), see `items_kept`.
struct GgufValue {
    GgufType type = GgufType::U8;
    uint64_t u = 0;                     // U8 U16 U32 U64 Bool
    int64_t i = 0;                      // I8 I16 I32 I64
    double f = 0;                       // F32 F64
    std::string str;                    // String
    GgufType elem_type = GgufType::U8;  // Array
    uint64_t count = 0;                 // Array
    bool items_kept = false;
    std::vector<GgufValue> items;

    bool is_int() const;
    bool is_array() const { return type == GgufType::Array; }
    // Any integer (or bool) value that fits int64; nullopt otherwise.
    std::optional<int64_t> as_int() const;
    // Integers and floats as a double.
    std::optional<double> as_number() const;
};

struct GgufKv {
    std::string key;
    GgufValue value;
};

// ggml's type table (ggml/src/ggml.c type_traits[]: blck_size, type_size).
struct GgmlTypeInfo {
    const char* name;       // "q4_K", "f16", ... as llama.cpp prints it (ggml_type_name)
    int64_t block = 0;      // values per block; 0 = not a type a GGUF may hold
    int64_t type_size = 0;  // bytes per block
};
const GgmlTypeInfo* ggml_type_info(uint32_t id);  // nullptr for unknown / removed ids

struct GgufTensorInfo {
    std::string name;
    std::vector<int64_t> ne;  // ggml order: ne[0] is the row length
    uint32_t type = 0;
    uint64_t offset = 0;  // from the start of the data section
    int64_t elements = 0;
    int64_t bytes = 0;  // ggml_nbytes: ne[0]/block*type_size * rows
};

struct GgufHeader {
    uint32_t version = 0;
    std::vector<GgufKv> kv;
    std::vector<GgufTensorInfo> tensors;
    uint64_t alignment = 32;    // general.alignment (GGUF_DEFAULT_ALIGNMENT)
    uint64_t header_bytes = 0;  // through the last tensor info
    uint64_t data_offset = 0;   // header padded to the alignment: where tensor data starts
    uint64_t data_bytes = 0;    // data section through the end of the last tensor (padded like gguf.cpp)
    int64_t tensor_bytes = 0;   // sum of ggml_nbytes over all tensors (llama.cpp's "file size")
    int64_t tensor_elements = 0;

    const GgufValue* find(const std::string& key) const;
};

// The outcome of one parse attempt.
struct GgufParse {
    enum class Status { Ok, NeedMore, Error };
    Status status = Status::Error;
    GgufHeader header;        // Ok
    uint64_t need_total = 0;  // NeedMore: the prefix must be at least this long (a lower bound; ask again)
    Error error;              // Error: code "bad_gguf" / "truncated_gguf" / "not_gguf" / "unsupported_gguf"
    bool ok() const { return status == Status::Ok; }
};

// Parses the GGUF header at the start of `data`. `name` is used in messages.
// `file_size` (when >= 0) is the whole file's size: a header that would need more
// than the file holds, or tensor data past its end, is refused instead of asked for.
GgufParse parse_gguf(const uint8_t* data, size_t size, const std::string& name = "model.gguf", int64_t file_size = -1);

// True when the bytes start with the GGUF magic.
bool is_gguf(const uint8_t* data, size_t size);

}  // namespace kvb
