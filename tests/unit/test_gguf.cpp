// GGUF header reader: every value type, tensor infos and alignment, and refusals of
// truncated, hostile and foreign inputs (each names what is wrong; none crashes or
// allocates from an untrusted count).
#include <doctest/doctest.h>

#include <cstring>

#include "fixtures.h"
#include "gguf_builder.h"
#include "model/gguf.h"
#include "model/gguf_spec.h"

using namespace kvb;
using kvb::test::GgufBuilder;
namespace gt = kvb::test::ggml;

namespace {

GgufParse parse(const std::vector<uint8_t>& b, int64_t file_size = -1) {
    return parse_gguf(b.data(), b.size(), "t.gguf", file_size);
}

GgufBuilder small() {
    GgufBuilder b;
    b.str("general.architecture", "llama")
        .u32("llama.block_count", 2)
        .u32("llama.context_length", 4096)
        .u32("llama.embedding_length", 256)
        .u32("llama.attention.head_count", 4)
        .u32("llama.attention.head_count_kv", 2)
        .str_array("tokenizer.ggml.tokens", 3)
        .tensor("token_embd.weight", {256, 3}, gt::F16)
        .tensor("blk.0.attn_q.weight", {256, 256}, gt::Q4_K)
        .tensor("blk.0.attn_norm.weight", {256}, gt::F32);
    return b;
}

std::vector<uint8_t> header_only(uint32_t version, uint64_t n_tensors, uint64_t n_kv) {
    std::vector<uint8_t> b = {'G', 'G', 'U', 'F'};
    b.reserve(64);  // GCC 12's -Warray-bounds misreads the first insert's reallocation of a 4-byte vector
    auto put = [&](const void* p, size_t n) { b.insert(b.end(), (const uint8_t*)p, (const uint8_t*)p + n); };
    put(&version, 4);
    put(&n_tensors, 8);
    put(&n_kv, 8);
    return b;
}

}  // namespace

TEST_CASE("GGUF: every metadata value type, nested arrays, tensor infos") {
    GgufBuilder b;
    b.u32("a.u32", 7)
        .i32("a.i32", -7)
        .u16("a.u16", 65535)
        .u64("a.u64", uint64_t(1) << 40)
        .f32("a.f32", 0.5f)
        .f64("a.f64", 1e-6)
        .boolean("a.bool", true)
        .str("a.str", "hello")
        .num_array("a.arr_i32", GgufType::I32, 4, {1, -2, 3, -4})
        .num_array("a.arr_bool", GgufType::Bool, 3, {1, 0, 1})
        .num_array("a.arr_u8", GgufType::U8, 2, {200, 1})
        .str_array("a.strs", 5);
    // A nested array: arr[arr[i16, 2], 2]
    std::vector<uint8_t> nested;
    auto put = [&](const void* p, size_t n) { nested.insert(nested.end(), (const uint8_t*)p, (const uint8_t*)p + n); };
    const std::string key = "a.nested";
    uint64_t klen = key.size();
    put(&klen, 8);
    put(key.data(), key.size());
    uint32_t t_arr = 9, t_i16 = 3;
    uint64_t two = 2;
    put(&t_arr, 4);
    put(&t_arr, 4);
    put(&two, 8);
    for (int k = 0; k < 2; ++k) {
        put(&t_i16, 4);
        put(&two, 8);
        int16_t v[2] = {static_cast<int16_t>(-k), static_cast<int16_t>(k + 10)};
        put(v, 4);
    }
    b.raw_kv(nested);
    b.tensor("x", {64, 3}, gt::Q8_0).tensor("y", {10}, gt::F32).tensor("z", {256, 2, 2}, gt::Q4_K);
    auto p = parse(b.bytes(), static_cast<int64_t>(b.file_size()));
    REQUIRE_MESSAGE(p.ok(), p.error.message);
    const GgufHeader& h = p.header;
    CHECK(h.version == 3);
    CHECK(h.kv.size() == 13);
    CHECK(h.find("a.u32")->as_int() == 7);
    CHECK(h.find("a.i32")->as_int() == -7);
    CHECK(h.find("a.u16")->as_int() == 65535);
    CHECK(h.find("a.u64")->as_int() == (int64_t(1) << 40));
    CHECK(h.find("a.f32")->f == 0.5);
    CHECK(h.find("a.f64")->f == doctest::Approx(1e-6));
    CHECK(h.find("a.bool")->as_int() == 1);
    CHECK(h.find("a.str")->str == "hello");
    const GgufValue* ai = h.find("a.arr_i32");
    REQUIRE(ai->items_kept);
    CHECK(ai->items[1].as_int() == -2);
    CHECK(h.find("a.arr_bool")->items[2].as_int() == 1);
    CHECK(h.find("a.arr_u8")->items[0].as_int() == 200);
    CHECK(h.find("a.strs")->count == 5);
    CHECK(h.find("a.strs")->items[4].str == "t4");
    const GgufValue* n = h.find("a.nested");
    REQUIRE(n->items.size() == 2);
    CHECK(n->items[1].elem_type == GgufType::I16);
    CHECK(n->items[1].items[1].as_int() == 11);
    CHECK(n->items[0].items[0].as_int() == 0);
    REQUIRE(h.tensors.size() == 3);
    CHECK(h.tensors[0].bytes == 3 * 2 * 34);  // 64 values = 2 q8_0 blocks of 34 bytes per row
    CHECK(h.tensors[1].offset == 224);        // 204 bytes padded to 32
    CHECK(h.tensors[2].offset == 224 + 64);   // 40 bytes padded
    CHECK(h.tensors[2].bytes == 4 * 144);
    CHECK(h.tensor_bytes == 204 + 40 + 576);
    CHECK(h.tensor_elements == 192 + 10 + 1024);
    CHECK(h.data_offset % 32 == 0);
    CHECK(h.data_offset >= h.header_bytes);
    CHECK(std::string(gguf_type_name(GgufType::String)) == "str");
}

TEST_CASE("GGUF: version 2 reads; general.alignment moves the offsets") {
    GgufBuilder b(2);
    b.u32("general.alignment", 64).alignment(64).tensor("a", {10}, gt::F32).tensor("b", {10}, gt::F32);
    auto p = parse(b.bytes());
    REQUIRE_MESSAGE(p.ok(), p.error.message);
    CHECK(p.header.version == 2);
    CHECK(p.header.alignment == 64);
    CHECK(p.header.tensors[1].offset == 64);
    CHECK(p.header.data_offset % 64 == 0);
}

TEST_CASE("GGUF: ggml's type table") {
    CHECK(ggml_type_info(12)->type_size == 144);  // q4_K: 256 values in 144 bytes
    CHECK(ggml_type_info(14)->type_size == 210);  // q6_K
    CHECK(ggml_type_info(39)->block == 32);       // mxfp4: 32 values in 17 bytes
    CHECK(ggml_type_info(39)->type_size == 17);
    CHECK(ggml_type_info(30)->type_size == 2);  // bf16
    CHECK(ggml_type_info(4) == nullptr);        // Q4_2: removed
    CHECK(ggml_type_info(31) == nullptr);       // Q4_0_4_4: removed from GGUF files
    CHECK(ggml_type_info(43) == nullptr);
    CHECK(ggml_type_info(0xFFFFFFFFu) == nullptr);
}

TEST_CASE("GGUF: a prefix asks for more; a truncated file is refused at every byte") {
    GgufBuilder b = small();
    const auto full = b.bytes();
    const int64_t fsize = static_cast<int64_t>(b.file_size());
    for (size_t cut = 0; cut < full.size(); ++cut) {
        CAPTURE(cut);
        std::vector<uint8_t> part(full.begin(), full.begin() + static_cast<long>(cut));
        auto p = parse(part);
        REQUIRE(p.status == GgufParse::Status::NeedMore);
        CHECK(p.need_total > cut);
        CHECK(p.need_total <= full.size());
        // The same prefix as a whole file: truncated, with the byte count.
        auto t = parse(part, static_cast<int64_t>(cut));
        REQUIRE(t.status == GgufParse::Status::Error);
        CHECK(t.error.code == "truncated_gguf");
        CHECK(t.error.detail.code == "gguf_truncated");
        CHECK(t.error.message.find("t.gguf is truncated: it ends at byte " + std::to_string(cut)) == 0);
    }
    // Growing the read by what the parser asks reaches the header in a few steps.
    size_t have = 0;
    int steps = 0;
    for (;;) {
        std::vector<uint8_t> part(full.begin(), full.begin() + static_cast<long>(have));
        auto p = parse(part);
        if (p.ok()) break;
        REQUIRE(p.status == GgufParse::Status::NeedMore);
        have = static_cast<size_t>(p.need_total);
        REQUIRE(++steps < 100);
    }
    CHECK(parse(full, fsize).ok());
    // Tensor data missing from the file.
    auto d = parse(full, fsize - 1);
    REQUIRE(d.status == GgufParse::Status::Error);
    CHECK(d.error.message == "t.gguf: tensor data runs to byte " + std::to_string(fsize) + " but the file has " +
                                 std::to_string(fsize - 1) + " bytes");
}

TEST_CASE("GGUF: foreign files, v1, other versions") {
    std::vector<uint8_t> json = {'{', '"', 'a', '"'};
    auto p = parse(json);
    REQUIRE(p.status == GgufParse::Status::Error);
    CHECK(p.error.code == "not_gguf");
    CHECK(p.error.message == "t.gguf is not a GGUF file (it starts with '{\"a\"', not 'GGUF')");
    std::vector<uint8_t> bin = {0x7f, 'E', 'L', 'F', 0};
    CHECK(parse(bin).error.message == "t.gguf is not a GGUF file (it starts with '\\x7fELF', not 'GGUF')");
    CHECK(parse({'G', 'X'}).error.code == "not_gguf");  // two bytes are enough to say no
    CHECK(parse({'G', 'G'}).status == GgufParse::Status::NeedMore);
    CHECK(parse(header_only(1, 0, 0)).error.message ==
          "t.gguf is a GGUF version 1 file, which llama.cpp no longer reads: convert it again");
    CHECK(parse(header_only(4, 0, 0)).error.message == "t.gguf has GGUF version 4; kvbudget reads versions 2 and 3");
    CHECK(parse(header_only(0x03000000, 0, 0)).error.detail.code == "gguf_big_endian");
    auto empty = parse(header_only(3, 0, 0));
    REQUIRE(empty.ok());
    CHECK(empty.header.tensors.empty());
}

TEST_CASE("GGUF: hostile counts are refused before anything is allocated") {
    // 2^60 metadata entries / tensors: no header could hold them.
    auto p = parse(header_only(3, 0, uint64_t(1) << 60));
    CHECK(p.error.message ==
          "t.gguf: the metadata count is 1152921504606846976, more than a header of 512 MiB could hold");
    CHECK(parse(header_only(3, uint64_t(1) << 60, 0)).error.detail.code == "gguf_count");
    // Plausible counts that the bytes do not back: "need more" with a bounded total, or truncated.
    auto q = parse(header_only(3, 1000, 1000));
    REQUIRE(q.status == GgufParse::Status::NeedMore);
    CHECK(q.need_total == 24 + 1000 * 13 + 1000 * 24);
    CHECK(parse(header_only(3, 1000, 1000), 24).error.code == "truncated_gguf");

    // A string claiming 2^62 bytes, an array claiming 2^61 strings.
    GgufBuilder s;
    s.raw_kv({1, 0, 0, 0, 0, 0, 0, 0, 'k', 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x40});
    CHECK(parse(s.bytes()).error.detail.code == "gguf_string_too_long");
    GgufBuilder a;
    a.raw_kv({1, 0, 0, 0, 0, 0, 0, 0, 'k', 9, 0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x20});
    CHECK(parse(a.bytes()).error.message ==
          "t.gguf: metadata k is 2305843009213693952, more than a header of 512 MiB could hold");
    // A long array is counted, not stored.
    GgufBuilder big;
    big.num_array("big", GgufType::U8, 100000);
    auto bp = parse(big.bytes());
    REQUIRE(bp.ok());
    CHECK(bp.header.find("big")->count == 100000);
    CHECK(!bp.header.find("big")->items_kept);
    CHECK(bp.header.find("big")->items.empty());
}

TEST_CASE("GGUF: bad types, names, shapes and offsets name what is wrong") {
    GgufBuilder t;
    t.raw_kv({1, 0, 0, 0, 0, 0, 0, 0, 'k', 13, 0, 0, 0});
    CHECK(parse(t.bytes()).error.message == "t.gguf: metadata k has value type 13, which is not a GGUF type (0..12)");
    GgufBuilder ae;
    ae.raw_kv({1, 0, 0, 0, 0, 0, 0, 0, 'k', 9, 0, 0, 0, 99, 0, 0, 0});
    CHECK(parse(ae.bytes()).error.detail.code == "gguf_bad_value_type");
    GgufBuilder bb;
    bb.raw_kv({1, 0, 0, 0, 0, 0, 0, 0, 'k', 7, 0, 0, 0, 2});
    CHECK(parse(bb.bytes()).error.message == "t.gguf: metadata k is a bool stored as 2 (must be 0 or 1)");
    GgufBuilder dup;
    dup.u32("x", 1).u32("x", 2);
    CHECK(parse(dup.bytes()).error.message == "t.gguf: metadata key x appears twice");
    GgufBuilder al;
    al.u32("general.alignment", 48);
    CHECK(parse(al.bytes()).error.message == "t.gguf: general.alignment is 48; it must be a u32 power of two");
    GgufBuilder al2;
    al2.str("general.alignment", "32");
    CHECK(parse(al2.bytes()).error.detail.code == "gguf_alignment");

    // Nested arrays deeper than 8 levels.
    std::vector<uint8_t> deep = {1, 0, 0, 0, 0, 0, 0, 0, 'k', 9, 0, 0, 0};
    for (int k = 0; k < 20; ++k) {
        const uint8_t lvl[] = {9, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
        deep.insert(deep.end(), lvl, lvl + 12);
    }
    GgufBuilder dp;
    dp.raw_kv(deep);
    CHECK(parse(dp.bytes()).error.message == "t.gguf: metadata k nests arrays deeper than 8 levels");

    CHECK(parse(GgufBuilder().tensor("w", {10}, 4).bytes()).error.message ==
          "t.gguf: tensor w has ggml type 4, which is not a type GGUF files may hold");
    CHECK(parse(GgufBuilder().tensor("w", {10}, 1000).bytes()).error.detail.code == "gguf_tensor_type");
    CHECK(parse(GgufBuilder().tensor("w", {100, 2}, gt::Q4_K).bytes()).error.message ==
          "t.gguf: tensor w has rows of 100 values, not a multiple of the q4_K block (256)");
    CHECK(parse(GgufBuilder().tensor("w", {1, 1, 1, 1, 1}, gt::F32).bytes()).error.message ==
          "t.gguf: tensor w has 5 dimensions; ggml allows at most 4");
    CHECK(parse(GgufBuilder().tensor("w", {int64_t(1) << 40, int64_t(1) << 40}, gt::F32).bytes()).error.message ==
          "t.gguf: tensor w has more elements or bytes than fit in 64 bits");
    CHECK(parse(GgufBuilder().tensor("w", {int64_t(1) << 62, 1}, gt::F32).bytes()).error.detail.code ==
          "gguf_tensor_size");
    CHECK(parse(GgufBuilder().tensor("w", {1}, gt::F32).tensor("w", {1}, gt::F32).bytes()).error.message ==
          "t.gguf: tensor w appears twice");
    CHECK(parse(GgufBuilder().tensor(std::string(64, 'n'), {1}, gt::F32).bytes()).error.detail.code ==
          "gguf_tensor_name");
    CHECK(parse(GgufBuilder().tensor(std::string(63, 'n'), {1}, gt::F32).bytes()).ok());

    // An offset that is not where gguf.cpp expects the tensor.
    auto bytes = GgufBuilder().tensor("a", {8}, gt::F32).tensor("b", {8}, gt::F32).bytes();
    bytes[bytes.size() - 8] = 8;  // b's offset: 8 instead of 32
    CHECK(parse(bytes).error.message == "t.gguf: tensor b starts at data offset 8, expected 32");
}

TEST_CASE("GGUF: shard names and llama.cpp's printed sizes") {
    auto n = gguf_shard_names("/m/DeepSeek-R1-Q8_0-00001-of-00015.gguf");
    REQUIRE(n.size() == 15);
    CHECK(n[14] == "/m/DeepSeek-R1-Q8_0-00015-of-00015.gguf");
    CHECK(gguf_shard_names("model-00002-of-00003.gguf").empty());
    CHECK(gguf_shard_names("model.gguf").empty());
    CHECK(gguf_shard_names("x-00001-of-0000a.gguf").empty());
    CHECK(llamacpp_file_size(int64_t(900) << 20, 1000000000) == "900.00 MiB (7.55 BPW)");
    CHECK(llamacpp_model_params(8030261248) == "8.03 B");
    CHECK(llamacpp_model_params(671026419200) == "671.03 B");
    CHECK(llamacpp_model_params(int64_t(1026) * 1000000000) == "1.026 T");
    CHECK(llamacpp_model_params(751632384) == "751.63 M");
}

namespace {
// Writes the header and zero-filled tensor data, as a real (tiny) GGUF file.
std::string write_gguf(const GgufBuilder& b, const std::string& name, int64_t cut = -1) {
    const std::string path = "/tmp/kvb_test_" + name;
    auto bytes = b.bytes();
    bytes.resize(static_cast<size_t>(b.file_size()), 0);
    if (cut >= 0) bytes.resize(static_cast<size_t>(cut));
    FILE* f = std::fopen(path.c_str(), "wb");
    REQUIRE(f);
    std::fwrite(bytes.data(), 1, bytes.size(), f);
    std::fclose(f);
    return path;
}
GgufBuilder tiny_llama(int shard = -1, int count = 0) {
    GgufBuilder b;
    if (shard <= 0) {
        b.str("general.architecture", "llama")
            .u32("llama.block_count", 2)
            .u32("llama.context_length", 4096)
            .u32("llama.embedding_length", 256)
            .u32("llama.attention.head_count", 4)
            .u32("llama.attention.head_count_kv", 2)
            .u32("llama.feed_forward_length", 512)
            .str_array("tokenizer.ggml.tokens", 1000);
    }
    if (shard >= 0)
        b.u16("split.no", static_cast<uint16_t>(shard))
            .u16("split.count", static_cast<uint16_t>(count))
            .i32("split.tensors.count", 3);
    if (shard <= 0)
        b.tensor("token_embd.weight", {256, 1000}, gt::Q8_0).tensor("blk.0.attn_norm.weight", {256}, gt::F32);
    if (shard != 0) b.tensor("blk.0.attn_q.weight", {256, 256}, gt::Q4_K);
    return b;
}
}  // namespace

TEST_CASE("CLI: a .gguf path wherever a config is taken; split shards; refusals") {
    const std::string one = write_gguf(tiny_llama(), "tiny.gguf");
    auto r = kvb::test::run_cli("inspect " + one);
    REQUIRE_MESSAGE(r.status == 0, r.out);
    CHECK(r.out.find("kvb_test_tiny\n  model_type:   llama") == 0);
    CHECK(r.out.find("    llama_model_loader: - type  f32:    1 tensors\n") != std::string::npos);
    CHECK(r.out.find("print_info: model params     = 321.79 K") != std::string::npos);
    auto kv = kvb::test::run_cli("llamacpp " + one + " -c 4096");
    REQUIRE_MESSAGE(kv.status == 0, kv.out);
    CHECK(kv.out.find("llama_kv_cache: size =    4.00 MiB (  4096 cells,   2 layers,  1/1 seqs)") != std::string::npos);

    // Split: naming the first shard reads every shard's header.
    write_gguf(tiny_llama(0, 2), "split-00001-of-00002.gguf");
    write_gguf(tiny_llama(1, 2), "split-00002-of-00002.gguf");
    auto s = kvb::test::run_cli("inspect /tmp/kvb_test_split-00001-of-00002.gguf --json");
    REQUIRE_MESSAGE(s.status == 0, s.out);
    CHECK(s.out.find("\"name\":\"kvb_test_split\"") != std::string::npos);
    CHECK(s.out.find("\"shards\":2,") != std::string::npos);
    CHECK(s.out.find("\"tensors\":3") != std::string::npos);
    std::remove("/tmp/kvb_test_split-00002-of-00002.gguf");
    auto miss = kvb::test::run_cli("inspect /tmp/kvb_test_split-00001-of-00002.gguf");
    CHECK(miss.status == 1);
    CHECK(miss.out == "kvbudget: error: cannot read /tmp/kvb_test_split-00002-of-00002.gguf\n");

    // Truncated inside the header, and a file whose tensor data is cut short.
    GgufBuilder b = tiny_llama();
    const std::string cut = write_gguf(b, "cut.gguf", 100);
    auto c = kvb::test::run_cli("inspect " + cut);
    CHECK(c.status == 1);
    CHECK(c.out.find("kvbudget: error: kvb_test_cut.gguf is truncated: it ends at byte 100 inside") == 0);
    const std::string short_data = write_gguf(b, "short.gguf", static_cast<int64_t>(b.file_size()) - 10);
    auto sd = kvb::test::run_cli("kv " + short_data);
    CHECK(sd.status == 1);
    CHECK(sd.out.find("but the file has") != std::string::npos);
    // GGUF by magic, whatever the extension.
    const std::string noext = write_gguf(tiny_llama(), "model.bin");
    CHECK(kvb::test::run_cli("inspect " + noext).status == 0);
}

TEST_CASE("CLI: simulate from a .gguf header, as from a config") {
    // 2 layers x 2 KV heads x 64 dims x K,V x 2 bytes = 1,024 bytes of KV per token.
    const std::string one = write_gguf(tiny_llama(), "sim.gguf");
    auto r = kvb::test::run_cli("simulate " + one + " --kv-cache-memory 64MiB --requests 50 --seed 3 --json", false);
    REQUIRE_MESSAGE(r.status == 0, r.out);
    CHECK(r.out.find("\"kv_bytes_per_token\":1024") != std::string::npos);
    CHECK(r.out.find("\"model\":\"kvb_test_sim\"") != std::string::npos);
    auto human = kvb::test::run_cli("simulate " + one + " --kv-cache-memory 64MiB --requests 50 --seed 3");
    CHECK(human.status == 0);
}

namespace {
Result<ModelSpec> gguf_spec(GgufBuilder b) {
    b.tensor("output_norm.weight", {64}, gt::F32);
    auto bytes = b.bytes();
    auto p = parse_gguf(bytes.data(), bytes.size(), "m.gguf");
    REQUIRE_MESSAGE(p.ok(), p.error.message);
    return spec_from_gguf(p.header, "m");
}
GgufBuilder base(const std::string& arch, uint32_t layers, uint32_t heads = 8, uint32_t kv = 2) {
    GgufBuilder b;
    b.str("general.architecture", arch)
        .u32(arch + ".block_count", layers)
        .u32(arch + ".context_length", 8192)
        .u32(arch + ".embedding_length", 512)
        .u32(arch + ".attention.head_count", heads);
    if (kv > 0) b.u32(arch + ".attention.head_count_kv", kv);  // 0: the test writes a per-layer array
    return b;
}
std::string kinds(const ModelSpec& m) {
    std::string s;
    for (const auto& l : m.layers) s += to_string(l.kind)[0];
    return s;
}
}  // namespace

TEST_CASE("GGUF -> ModelSpec: llama.cpp's per-architecture layer patterns") {
    // Defaults as load_hparams applies them: head_count_kv = head_count, key_length = embd / heads.
    auto plain = gguf_spec(GgufBuilder()
                               .str("general.architecture", "gpt2")
                               .u32("gpt2.block_count", 2)
                               .u32("gpt2.embedding_length", 768)
                               .u32("gpt2.attention.head_count", 12));
    REQUIRE(plain.ok());
    CHECK(plain->layers[0].kv_heads == 12);
    CHECK(plain->layers[0].k_head_dim == 64);
    CHECK(plain->model_type == "gpt2");
    CHECK(plain->dims.tie_word_embeddings);  // no output.weight tensor

    // Gemma 3: set_swa_pattern(6), window from the file.
    auto g3 = gguf_spec(
        base("gemma3", 12, 8, 4).u32("gemma3.attention.key_length", 256).u32("gemma3.attention.sliding_window", 1024));
    REQUIRE(g3.ok());
    CHECK(kinds(*g3) == "sssssfsssssf");
    CHECK(g3->layers[0].window == 1024);
    CHECK(g3->model_type == "gemma3_text");
    // Gemma 2: every other layer; Cohere2: every 4th global.
    CHECK(kinds(*gguf_spec(base("gemma2", 4).u32("gemma2.attention.sliding_window", 4096))) == "sfsf");
    CHECK(kinds(*gguf_spec(base("cohere2", 8).u32("cohere2.attention.sliding_window", 4096))) == "sssfsssf");
    // Llama 4: 8192-token chunks, every 4th layer global.
    auto l4 = gguf_spec(base("llama4", 8));
    CHECK(kinds(*l4) == "cccfcccf");
    CHECK(l4->layers[0].window == 8192);
    // An explicit per-layer pattern in the file wins; a scalar is a period.
    auto pat = gguf_spec(base("olmo3", 4)
                             .u32("olmo3.attention.sliding_window", 4096)
                             .num_array("olmo3.attention.sliding_window_pattern", GgufType::Bool, 4, {1, 0, 0, 1}));
    CHECK(kinds(*pat) == "sffs");
    auto per = gguf_spec(base("exaone4", 4)
                             .u32("exaone4.attention.sliding_window", 4096)
                             .u32("exaone4.attention.sliding_window_pattern", 4));
    CHECK(kinds(*per) == "sssf");
    // Mistral-style "llama" with a window key keeps the whole context (no pattern).
    CHECK(kinds(*gguf_spec(base("llama", 2).u32("llama.attention.sliding_window", 4096))) == "ff");

    // Per-layer KV heads (Nemotron-NAS / deci): 0 = no attention in that layer.
    auto deci = gguf_spec(base("deci", 3, 8, 0).num_array("deci.attention.head_count_kv", GgufType::I32, 3, {8, 0, 2}));
    REQUIRE(deci.ok());
    CHECK(kinds(*deci) == "fnf");
    CHECK(deci->layers[2].kv_heads == 2);

    // Nemotron-H: kv == 0 and ff == 0 is Mamba-2, kv == 0 with an MLP is MLP-only.
    auto nh = gguf_spec(base("nemotron_h", 4, 8, 0)
                            .num_array("nemotron_h.attention.head_count_kv", GgufType::I32, 4, {0, 0, 2, 0})
                            .num_array("nemotron_h.feed_forward_length", GgufType::I32, 4, {0, 1024, 0, 0})
                            .u32("nemotron_h.attention.key_length", 128)
                            .u32("nemotron_h.ssm.conv_kernel", 4)
                            .u32("nemotron_h.ssm.state_size", 128)
                            .u32("nemotron_h.ssm.group_count", 8)
                            .u32("nemotron_h.ssm.time_step_rank", 64)
                            .u32("nemotron_h.ssm.inner_size", 4096));
    REQUIRE_MESSAGE(nh.ok(), (nh.ok() ? "" : nh.error().message));
    CHECK(kinds(*nh) == "mnfm");
    CHECK(nh->layers[0].state.conv_dim() == 4096 + 2 * 8 * 128);
    CHECK(nh->layers[0].state.heads == 64);

    // Falcon-H1: attention and Mamba-2 side by side in every layer.
    auto fh = gguf_spec(base("falcon-h1", 2)
                            .u32("falcon-h1.ssm.conv_kernel", 4)
                            .u32("falcon-h1.ssm.state_size", 16)
                            .u32("falcon-h1.ssm.group_count", 1)
                            .u32("falcon-h1.ssm.time_step_rank", 8)
                            .u32("falcon-h1.ssm.inner_size", 1024));
    CHECK(kinds(*fh) == "fmfm");
    // Mamba-1: no groups, no head axis.
    auto mb = gguf_spec(GgufBuilder()
                            .str("general.architecture", "mamba")
                            .u32("mamba.block_count", 2)
                            .u32("mamba.embedding_length", 768)
                            .u32("mamba.ssm.conv_kernel", 4)
                            .u32("mamba.ssm.state_size", 16)
                            .u32("mamba.ssm.inner_size", 1536)
                            .u32("mamba.ssm.time_step_rank", 48));
    REQUIRE_MESSAGE(mb.ok(), (mb.ok() ? "" : mb.error().message));
    CHECK(kinds(*mb) == "mm");
    CHECK(mb->layers[0].state.n_groups == 0);
    CHECK(mb->layers[0].state.heads == 0);
    // Gemma 3n: layers from 20 on reuse earlier layers' KV.
    auto g3n = gguf_spec(base("gemma3n", 30).u32("gemma3n.attention.sliding_window", 512));
    CHECK(g3n->count(LayerKind::None) == 10);
    // Unknown architectures are read from the generic keys and say so.
    auto unk = gguf_spec(base("newarch", 2));
    REQUIRE(unk.ok());
    CHECK(unk->generic);
    CHECK(render_english(unk->notes[0]) ==
          "model_type 'newarch' is not known to kvbudget: sized from the generic fields");
}

TEST_CASE("GGUF -> ModelSpec: refusals name the key") {
    CHECK(gguf_spec(GgufBuilder().u32("x", 1)).error().message ==
          "m: general.architecture is missing: not a llama.cpp model file");
    CHECK(gguf_spec(GgufBuilder().str("general.architecture", "llama")).error().message ==
          "m: llama.block_count is missing");
    CHECK(gguf_spec(GgufBuilder().u32("general.architecture", 3)).error().detail.code == "gguf_bad_key");
    CHECK(gguf_spec(base("llama", 0)).error().message == "m: llama.block_count must be an integer in 1..10000, got 0");
    CHECK(gguf_spec(base("llama", 2).str("llama.attention.key_length", "128")).error().message ==
          "m: llama.attention.key_length must be an integer in 1..65536, got '128'");
    CHECK(gguf_spec(base("llama", 3, 8, 0).num_array("llama.attention.head_count_kv", GgufType::I32, 2, {2}))
              .error()
              .message == "m: llama.attention.head_count_kv has 2 entries but llama.block_count is 3");
    CHECK(gguf_spec(base("llama", 2, 8, 3)).error().detail.code == "gguf_bad_key");  // 8 heads, 3 KV heads
    CHECK(gguf_spec(base("qwen35", 4)).error().message == "m: qwen35.ssm.conv_kernel is missing");
    auto mla = gguf_spec(base("deepseek2", 2, 16, 1)
                             .u32("deepseek2.attention.kv_lora_rank", 512)
                             .u32("deepseek2.attention.key_length", 500)
                             .u32("deepseek2.attention.value_length", 512)
                             .u32("deepseek2.attention.key_length_mla", 192)
                             .u32("deepseek2.attention.value_length_mla", 128)
                             .u32("deepseek2.rope.dimension_count", 64));
    CHECK(mla.error().message ==
          "m: deepseek2.attention.key_length must be 576 (kv_lora_rank + rope.dimension_count), got 500");
    // A vocabulary-only GGUF.
    auto vocab = base("llama", 2).bytes();
    auto p = parse_gguf(vocab.data(), vocab.size(), "v.gguf");
    REQUIRE(p.ok());
    CHECK(spec_from_gguf(p.header, "v").error().message ==
          "v has no tensor infos: a vocabulary-only GGUF holds no model");
}
