// kvbudget lab: the measured-vs-formula table. The worked example's answer is computed
// by hand below (least squares over four contexts spaced 4,096 apart); the Mac case is
// RSS that falls between two runs (llama.cpp's mmapped weights); bad pastes get their
// own messages.
#include <doctest/doctest.h>

#include <cmath>

#include "base/units.h"
#include "check/lab.h"
#include "fixtures.h"
#include "report/lab_json.h"

using namespace kvb;
using kvb::test::fixture;

namespace {

LabInput read_ok(const std::string& text, const std::string& measure = "") {
    auto r = read_lab_paste(text, measure);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

std::string refusal(const std::string& text, const std::string& measure = "") {
    auto r = read_lab_paste(text, measure);
    REQUIRE_FALSE(r.ok());
    return r.error().message;
}

LabReport lab(const std::string& text, const LabSettings& s = {}) {
    const ModelSpec m = fixture("meta-llama/Llama-3.1-8B-Instruct");
    auto r = lab_table(read_ok(text), m, s);
    REQUIRE_MESSAGE(r.ok(), (r.ok() ? "" : r.error().message));
    return r.value();
}

// Llama-3.1-8B, llama.cpp f16 K and V: 32 layers x 8 KV heads x 128 x (K + V) x 2 bytes.
constexpr int64_t kF16PerToken = 32 * 8 * 128 * 2 * 2;  // 131,072

}  // namespace

TEST_CASE("worked example: slope, intercept and deviation by hand") {
    // x = 4096, 8192, 12288, 16384 (mean 10,240; x - mean = -6144, -2048, 2048, 6144; Sxx = 83,886,080)
    // y = 5000, 5530, 6060, 6620 MiB (mean 5802.5; Sxy = 6144 x 1620 + 2048 x 530 = 11,038,720 MiB)
    // slope = 11,038,720 / 83,886,080 MiB = 137,984 B/token; formula 131,072: +6,912 = +5.2734375 %
    // intercept = 5802.5 MiB - 137,984 x 10,240 = 4,671,406,080 B = 4455 MiB; weights 4352 MiB -> runtime 103 MiB
    const LabReport r =
        lab("measure: rss\n"
            "weights 4352 MiB\n"
            "4096 5000 MiB\n"
            "8192 5530 MiB\n"
            "12288 6060 MiB\n"
            "16384 6620 MiB\n");
    CHECK(kF16PerToken == 131072);
    CHECK(r.measure == "rss");
    CHECK(r.slope == doctest::Approx(137984.0).epsilon(1e-12));
    CHECK(r.formula_slope == doctest::Approx(131072.0).epsilon(1e-12));
    REQUIRE(r.deviation_percent);
    CHECK(*r.deviation_percent == doctest::Approx(5.2734375).epsilon(1e-12));
    CHECK(std::llround(r.intercept) == 4671406080);
    CHECK(*r.weights == int64_t(4352) * MiB);
    CHECK(*r.runtime == int64_t(103) * MiB);
    REQUIRE(r.rows.size() == 4);
    CHECK(r.rows[0].formula_kv == int64_t(512) * MiB);  // llama_kv_cache: size = 512.00 MiB at -c 4096
    CHECK(r.rows[3].formula_kv == int64_t(2048) * MiB);
    CHECK_FALSE(r.rows[0].increment);
    CHECK(*r.rows[1].increment == int64_t(530) * MiB);
    CHECK(*r.rows[1].formula_increment == int64_t(512) * MiB);
    CHECK(*r.rows[1].deviation_percent == doctest::Approx(3.515625));  // 18 / 512
    CHECK(*r.rows[3].deviation_percent == doctest::Approx(9.375));     // 48 / 512
    CHECK(r.notes.empty());
    CHECK(
        to_json_text(r) ==
        R"({"baseline_bytes":null,"engine":"llamacpp","fit":{"deviation_percent":5.27,"formula_bytes_per_token":131072.0,)"
        R"("intercept_bytes":4671406080,"slope_bytes_per_token":137984.0},"measure":"rss",)"
        R"("model":"meta-llama/Llama-3.1-8B-Instruct","notes":[],"rows":[{"context":4096,"deviation_percent":null,)"
        R"("formula_increment_bytes":null,"formula_kv_bytes":536870912,"increment_bytes":null,"line":3,)"
        R"("measured_bytes":5242880000},{"context":8192,"deviation_percent":3.52,"formula_increment_bytes":536870912,)"
        R"("formula_kv_bytes":1073741824,"increment_bytes":555745280,"line":4,"measured_bytes":5798625280},)"
        R"({"context":12288,"deviation_percent":3.52,"formula_increment_bytes":536870912,"formula_kv_bytes":1610612736,)"
        R"("increment_bytes":555745280,"line":5,"measured_bytes":6354370560},{"context":16384,"deviation_percent":9.38,)"
        R"("formula_increment_bytes":536870912,"formula_kv_bytes":2147483648,"increment_bytes":587202560,"line":6,)"
        R"("measured_bytes":6941573120}],"runtime_bytes":108003328,"settings":{"type_k":"f16","type_v":"f16"},)"
        R"("weights_bytes":4563402752})");
}

TEST_CASE("q8_0 K and V: the formula per token follows the KV type") {
    LabSettings s;
    s.llama.type_k = s.llama.type_v = "q8_0";
    const LabReport r = lab("4096 5000 MiB rss\n8192 5530 MiB rss\n", s);
    // q8_0: 34 bytes per 32 values -> 131,072 x 34 / 64 = 69,632 B/token
    CHECK(r.formula_slope == doctest::Approx(69632.0));
    CHECK(r.slope == doctest::Approx(530.0 * 1048576 / 4096));  // 135,680
}

TEST_CASE("the paste forms people have") {
    SUBCASE("units: GiB, MB (decimal), G (binary), a Markdown table with its header") {
        const LabInput in =
            read_ok("| context | RSS |\n|---|---|\n| 4096 | 5.2 GiB |\n| 8192 | 5600 MB |\n| 16384 | 6.5G |\n");
        CHECK(in.measure == "rss");
        REQUIRE(in.points.size() == 3);
        CHECK(in.points[0].measured == 5583457484);  // floor(5.2 x 2^30)
        CHECK(in.points[1].measured == 5600000000);
        CHECK(in.points[2].measured == 6979321856);  // 6.5 x 2^30
    }
    SUBCASE("macOS /usr/bin/time -l: bytes, the context from each command line, -n 0 the baseline") {
        const LabInput in = read_ok(
            "$ /usr/bin/time -l llama-completion -m Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 4096 -n 0 -p hi\n"
            "        2.10 real         0.91 user         1.02 sys\n"
            "          4923056128  maximum resident set size\n"
            "          5012000000  peak memory footprint\n"
            "$ /usr/bin/time -l llama-completion -m Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 4096 -n 64 -p hi\n"
            "          5469007872  maximum resident set size\n"
            "          5601000000  peak memory footprint\n"
            "$ /usr/bin/time -l llama-completion -m Llama-3.1-8B-Instruct-Q4_K_M.gguf -c 8192 -n 64 -p hi\n"
            "          6011543552  maximum resident set size\n"
            "          6140000000  peak memory footprint\n");
        CHECK(in.measure == "rss");  // /usr/bin/time -l prints both: RSS unless --measure footprint
        CHECK(*in.baseline == 4923056128);
        REQUIRE(in.points.size() == 2);
        CHECK(in.points[0].context == 4096);
        CHECK(in.points[0].measured == 5469007872);
        CHECK(in.points[1].measured == 6011543552);
        const LabInput fp = read_ok(
            "llama-completion -c 4096\n 5601000000  peak memory footprint\n 1 maximum resident set size\n"
            "llama-completion -c 8192\n 6140000000  peak memory footprint\n 2 maximum resident set size\n",
            "footprint");
        CHECK(fp.points[1].measured == 6140000000);
    }
    SUBCASE("GNU /usr/bin/time -v: kbytes, the command in \"Command being timed\"") {
        const LabInput in = read_ok(
            "\tCommand being timed: \"llama-completion -m m.gguf --ctx-size 4096 -n 32\"\n"
            "\tUser time (seconds): 12.40\n"
            "\tMaximum resident set size (kbytes): 5340160\n"
            "\tCommand being timed: \"llama-completion -m m.gguf --ctx-size 32k -n 32\"\n"
            "\tMaximum resident set size (kbytes): 9534464\n");
        REQUIRE(in.points.size() == 2);
        CHECK(in.points[0].measured == int64_t(5340160) * 1024);
        CHECK(in.points[1].context == 32768);
    }
}

TEST_CASE("Mac: RSS falls between two runs, flagged with the mmap explanation") {
    const LabReport r = lab("measure: rss\n4096 5.31 GiB\n8192 5.12 GiB\n16384 6.02 GiB\nweights 4.58 GiB\n");
    REQUIRE(r.rows.size() == 3);
    CHECK(*r.rows[1].increment == 5497558138 - 5701569085);  // floor(5.12 x 2^30) - floor(5.31 x 2^30)
    CHECK(*r.rows[1].deviation_percent == doctest::Approx(-138.01).epsilon(1e-4));
    REQUIRE(r.notes.size() == 1);
    CHECK(r.notes[0].code == "lab_not_increasing");
    CHECK(render_english(r.notes[0]) ==
          "memory did not grow from context 4,096 to 8,192 (-194.56 MiB): llama.cpp maps the weight file (mmap, "
          "always on a Mac), and resident set size counts only the weight pages touched, so it can leave weights out "
          "and differ from run to run; cross-check with another measure (peak memory footprint, nvidia-smi), never "
          "mixed in one table");
    CHECK(r.deviation_percent);  // the slope over all three is still positive
    const LabReport down = lab("measure: rss\n4096 5.31 GiB\n8192 5.12 GiB\n");
    CHECK_FALSE(down.deviation_percent);
    REQUIRE(down.notes.size() == 2);
    CHECK(down.notes[1].code == "lab_slope_not_positive");
    const LabReport low = lab("measure: rss\nweights 4.58 GiB\n4096 2.1 GiB\n8192 2.7 GiB\n");
    CHECK(low.notes.back().code == "lab_intercept_below_weights");
}

TEST_CASE("one measure per table") {
    CHECK(refusal("4096 5.31 GiB rss\n8192 7.2 GiB nvidia-smi\n") ==
          "one table takes one measure, and this one holds both maximum resident set size (RSS) and nvidia-smi "
          "memory.used: they count different memory, so measure every run the same way or make two tables");
    CHECK(refusal("measure: max_memory_reserved\n4096 5 GiB\n8192 6 GiB memory_allocated\n") ==
          "one table takes one measure, and this one holds both torch.cuda.max_memory_reserved and "
          "torch.cuda.memory_allocated: they count different memory, so measure every run the same way or make two "
          "tables");
    CHECK(refusal("4096 5 GiB rss\n8192 6 GiB\n", "nvidia-smi")
              .find("both nvidia-smi memory.used and maximum "
                    "resident set size (RSS)") != std::string::npos);
    CHECK(refusal("llama -c 4096\n 5 maximum resident set size\nllama -c 8192\n 6 maximum resident set size\n",
                  "nvidia-smi")
              .find("both nvidia-smi memory.used and maximum resident set size (RSS)") != std::string::npos);
    CHECK(read_ok("4096 5 GiB torch.cuda.max_memory_reserved\n8192 6 GiB\n").measure == "torch_max_reserved");
}

TEST_CASE("bad pastes, each with its own message") {
    CHECK(refusal("") ==
          "the paste holds no runs: write one line per run, the context and the measured peak (\"4096 5.31 GiB\")");
    CHECK(refusal("measure: rss\n4096 5.31 GiB\n") ==
          "only one run (context 4,096): a slope needs runs at two contexts or more");
    CHECK(refusal("measure: rss\n4096 5.31 GiB\n4096 5.40 GiB\n") ==
          "context 4,096 is measured twice (lines 2 and 3): keep one run per context");
    CHECK(refusal("measure: rss\n4096 5.31\n") ==
          "line 2: 5.31 has no unit: write GiB, MiB, GB, MB or G (5.31 GiB, 5300 MB, 5.2G)");
    CHECK(refusal("measure: rss\n4096 lots\n") ==
          "line 2: \"lots\" is not a size: write a number with its unit (5.31 GiB, 5300 MB, 5.2G)");
    CHECK(refusal("measure: rss\n4096 5.3 parsecs\n") ==
          "line 2: \"5.3 parsecs\" is not a size: write a number with its unit (5.31 GiB, 5300 MB, 5.2G)");
    CHECK(refusal("measure: rss\n4096 5.3 GiB rss extra\n") ==
          "line 2: \"4096 5.3 GiB rss extra\" is not a run: write the context and the measured peak (\"4096 5.31 "
          "GiB\")");
    CHECK(refusal("measure: rss\nfour thousand, five gigs\n") ==
          "line 2: \"four thousand, five gigs\" is not a run: write the context and the measured peak (\"4096 5.31 "
          "GiB\")");
    CHECK(refusal("measure: rss\n4096.5 5 GiB\n") ==
          "line 2: \"4096.5\" is not a context length: a whole number of tokens (4096, 32k)");
    CHECK(refusal("measure: rss\n4096\n") ==
          "line 2: a context with no measured size after it: write \"4096 5.31 GiB\"");
    CHECK(refusal("4096 5 GiB\n8192 6 GiB\n") ==
          "the paste does not say what was measured: name it (a line \"measure: rss\", or rss, nvidia-smi, "
          "max_memory_reserved ... after each size)");
    CHECK(refusal("4096 5 GiB\n8192 6 GiB\n", "vram") ==
          "\"vram\" is not a measure kvbudget knows: rss, footprint, nvidia-smi, memory_allocated, "
          "max_memory_allocated, memory_reserved or max_memory_reserved");
    CHECK(refusal("      5469007872  maximum resident set size\n") ==
          "line 1: the memory of a run whose context is not given: paste the command line (with -c N) before "
          "/usr/bin/time's output");
    CHECK(refusal(std::string(size_t(kMaxLabBytes) + 1, '1')) ==
          "the paste is larger than 1.00 MiB: a lab table is one line per run");
    CHECK(refusal("measure: rss\n<script>alert(1)</script>\n").rfind("line 2: \"<script>", 0) == 0);
}

TEST_CASE("engines: transformers' DynamicCache, vLLM refused") {
    LabSettings s;
    s.engine = "transformers";
    const LabReport r = lab("measure: max_memory_allocated\n1024 16.5 GiB\n2048 16.7 GiB\n", s);
    CHECK(r.formula_slope == doctest::Approx(131072.0));  // bfloat16, same shape as llama.cpp's f16
    CHECK(r.measure == "torch_max_allocated");
    s.engine = "vllm";
    const ModelSpec m = fixture("meta-llama/Llama-3.1-8B-Instruct");
    auto v = lab_table(read_ok("measure: nvidia-smi\n1024 70 GiB\n2048 70 GiB\n"), m, s);
    REQUIRE_FALSE(v.ok());
    CHECK(v.error().detail.code == "lab_vllm_preallocates");
}

TEST_CASE("the page's settings JSON") {
    auto q = lab_request_from_json(R"({"engine":"llamacpp","measure":"rss","type_k":"q8_0","n_seq_max":2})");
    REQUIRE(q.ok());
    CHECK(q->settings.llama.type_k == "q8_0");
    CHECK(q->settings.llama.n_seq_max == 2);
    CHECK(q->measure == "rss");
    CHECK(lab_request_from_json(R"({"ctk":"q8_0"})").error().message == "lab settings: unknown key ctk");
    CHECK(lab_request_from_json(R"({"n_seq_max":0})").error().message ==
          "lab settings: n_seq_max must be a whole number from 1 to 4096");
}

TEST_CASE("sizes near the int64 limit give no NaN and no undefined rounding") {
    const LabReport r = lab("measure: rss\n1 8000000 TB\n2 1 B\n");
    CHECK(std::isfinite(r.slope));
    CHECK(r.notes.back().code == "lab_slope_not_positive");
    const LabReport far = lab("measure: rss\n1000000 1 B\n1000001 8000000 TB\n");
    CHECK(to_json_text(far).find("\"intercept_bytes\":null") != std::string::npos);
}
