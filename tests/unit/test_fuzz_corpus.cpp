// Replays the libFuzzer corpus (fuzz/corpus, kept from the fuzzing runs) through
// exactly what the fuzz targets run, so an input that once broke something stays
// a regression test.
#include <doctest/doctest.h>

#include <dirent.h>

#include <string>
#include <vector>

#include "../../fuzz/exercise.h"
#include "fixtures.h"

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
