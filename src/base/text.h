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

// Without leading and trailing white space (std::isspace in the C locale).
inline std::string trim(const std::string& s) {
    size_t a = 0, b = s.size();
    while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
    while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
    return s.substr(a, b - a);
}

}  // namespace kvb
