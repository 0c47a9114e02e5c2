// Replays the libFuzzer corpora (fuzz/corpus, fuzz/corpus-sim, kept from the fuzzing
// runs) through exactly what the fuzz targets run, so an input that once broke
// something stays a regression test.
#include <dirent.h>
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "../../fuzz/exercise.h"
#include "../../fuzz/exercise_sim.h"
#include "fixtures.h"

namespace {

std::vector<std::string> corpus_files(const std::string& dir) {
    std::vector<std::string> files;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] != '.') files.push_back(dir + "/" + e->d_name);
        }
        closedir(d);
    }
    return files;
}

}  // namespace

TEST_CASE("fuzz corpus replays through the parser, the engines and the budget") {
    const std::vector<std::string> files = corpus_files(KVB_FUZZ_CORPUS);
    REQUIRE(files.size() >= 1000);
    for (const auto& f : files) {
        CAPTURE(f);
        std::string text = kvb::test::read_file(f);
        CHECK(kvb::fuzz::exercise_config(text));
        CHECK(kvb::fuzz::exercise_engines(text));
    }
}

TEST_CASE("simulator fuzz corpus replays with every invariant holding") {
    const std::vector<std::string> files = corpus_files(KVB_FUZZ_CORPUS "-sim");
    REQUIRE(files.size() >= 100);
    for (const auto& f : files) {
        CAPTURE(f);
        const std::string why = kvb::fuzz::sim_check(kvb::test::read_file(f));
        CHECK_MESSAGE(why.empty(), why);
    }
}

TEST_CASE("GGUF fuzz corpus replays through the reader, ModelSpec and llama.cpp's layout") {
    const std::vector<std::string> files = corpus_files(KVB_FUZZ_GGUF_CORPUS);
    REQUIRE(files.size() >= 10);
    for (const auto& f : files) {
        CAPTURE(f);
        std::string bytes = kvb::test::read_file(f);
        CHECK(kvb::fuzz::exercise_gguf(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    }
}
