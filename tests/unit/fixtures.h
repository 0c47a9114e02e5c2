// Shared by the test files: read a real config from tests/fixtures/configs and parse it.
#pragma once
#include <fstream>
#include <sstream>
#include <string>

#include "model.h"

namespace kvb::test {

inline std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::string fixture_text(const std::string& id) {
    std::string file = id;
    if (auto slash = file.find('/'); slash != std::string::npos) file.replace(slash, 1, "--");
    return read_file(std::string(KVB_FIXTURES) + "/configs/" + file + ".json");
}

// Parses the fixture for a Hub id such as "Qwen/Qwen3-8B"; fails the test if it does not parse.
inline ModelSpec fixture(const std::string& id) {
    auto r = parse_config(fixture_text(id), id);
    if (!r) throw std::runtime_error(r.error().message);
    return r.value();
}

}  // namespace kvb::test
