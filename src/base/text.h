// Small string helpers shared by the parser, the engines and the faces.
#pragma once
#include <cctype>
#include <string>

namespace kvb {

// ASCII lower case: config values and flag spellings are ASCII; locale must not matter.
inline std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

}  // namespace kvb
