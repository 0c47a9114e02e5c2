// Replays the libFuzzer corpus (fuzz/corpus, kept from the fuzzing runs) through
// the parser and the KV arithmetic: every input either parses into a spec whose
// numbers are non-negative or is refused with a code and a message.
#include <doctest/doctest.h>

#include <dirent.h>

#include <string>
#include <vector>

#include "fixtures.h"
#include "kv.h"
#include "model.h"

using namespace kvb;

TEST_CASE("fuzz corpus replays without a crash, a negative size or a silent refusal") {
    std::vector<std::string> files;
    if (DIR* d = opendir(KVB_FUZZ_CORPUS)) {
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] != '.') files.push_back(std::string(KVB_FUZZ_CORPUS) + "/" + e->d_name);
        }
        closedir(d);
    }
    REQUIRE(files.size() >= 100);
    size_t parsed = 0;
    for (const auto& f : files) {
        CAPTURE(f);
        auto m = parse_config(kvb::test::read_file(f), "fuzz");
        if (!m) {
            CHECK_FALSE(m.error().code.empty());
            CHECK(m.error().message.rfind("fuzz: ", 0) == 0);
            continue;
        }
        ++parsed;
        KvDtypes d = uniform_kv_dtypes(m.value(), vllm_kv_type("auto", m->dtype).value());
        IdealKv kv = ideal_kv(m.value(), d);
        CHECK(kv.bytes_per_token >= 0);
        CHECK(kv.state_bytes_per_seq >= 0);
        auto at = kv_bytes_at(m.value(), d, 1 << 20, 10000);
        if (at) CHECK(at.value() >= 0);
    }
    CHECK(parsed > 0);
}
