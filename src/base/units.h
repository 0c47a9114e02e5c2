// Sizes as people and engines write them.
#pragma once
#include <cstdint>
#include <string>

#include "base/arith.h"
#include "base/result.h"

namespace kvb {

constexpr int64_t KiB = 1024;
constexpr int64_t MiB = 1024 * KiB;
constexpr int64_t GiB = 1024 * MiB;

// "8GiB", "24GB", "512MiB", "1.5 GiB", "123456" (bytes). GB/MB are decimal, GiB/MiB binary.
Result<int64_t> parse_size(const std::string& text);
// Human form with a binary unit and 2 decimals: "4.50 GiB", "144.00 MiB", "512 B".
std::string format_bytes(int64_t bytes);
// Thousands separators as Python's "{:,}" prints them: 42,656.
std::string with_commas(int64_t n);
// Strict non-negative integer parse for flags like --context; rejects "12abc", "-1", "1e3".
Result<int64_t> parse_count(const std::string& text, const std::string& what);
// A context length as people write it: "131072", "32,768", "128k" / "128K" (x 1,024, as
// "128K context" means 131,072 tokens in every model card and engine), "1M" (x 1,048,576).
// Spaces around the number and before the suffix are allowed; fractions are not.
Result<int64_t> parse_context(const std::string& text, const std::string& what);

}  // namespace kvb
