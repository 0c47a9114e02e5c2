// Replays the libFuzzer corpus (fuzz/corpus, kept from the fuzzing runs) through
// exactly what the fuzz targets run, so an input that once broke something stays
// a regression test.
#include <doctest/doctest.h>

#include <dirent.h>

#include <string>
#include <vector>

#include "../../fuzz/exercise.h"
#include "fixtures.h"

namespace {
std::vector<std::string> corpus_files(const char* dir) {
    std::vector<std::string> files;
    if (DIR* d = opendir(dir)) {
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] != '.') files.push_back(std::string(dir) + "/" + e->d_name);
        }
        closedir(d);
    }
    return files;
}
}  // namespace

TEST_CASE("GGUF fuzz corpus replays through the reader, ModelSpec and llama.cpp's layout") {
    auto files = corpus_files(KVB_FUZZ_GGUF_CORPUS);
    REQUIRE(files.size() >= 10);
    for (const auto& f : files) {
        CAPTURE(f);
        std::string bytes = kvb::test::read_file(f);
        CHECK(kvb::fuzz::exercise_gguf(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
    }
}

TEST_CASE("fuzz corpus replays through the parser, the engines and the budget") {
    std::vector<std::string> files;
    if (DIR* d = opendir(KVB_FUZZ_CORPUS)) {
        while (dirent* e = readdir(d)) {
            if (e->d_name[0] != '.') files.push_back(std::string(KVB_FUZZ_CORPUS) + "/" + e->d_name);
        }
        closedir(d);
    }
    REQUIRE(files.size() >= 1000);
    for (const auto& f : files) {
        CAPTURE(f);
        std::string text = kvb::test::read_file(f);
        CHECK(kvb::fuzz::exercise_config(text));
        CHECK(kvb::fuzz::exercise_engines(text));
    }
}
