// Minimal, strict argument parsing shared by every command: unknown flags and
// missing values are usage errors (exit 2), bad values are refused input (exit 1).
#pragma once
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "model/model.h"

// Set by CMake for the CLI (install prefix and source tree); empty when built otherwise.
#ifndef KVB_INSTALL_CATALOG_DIR
#define KVB_INSTALL_CATALOG_DIR ""
#endif
#ifndef KVB_SOURCE_CATALOG_DIR
#define KVB_SOURCE_CATALOG_DIR ""
#endif
#ifndef KVB_INSTALL_TRACES_DIR
#define KVB_INSTALL_TRACES_DIR ""
#endif
#ifndef KVB_SOURCE_TRACES_DIR
#define KVB_SOURCE_TRACES_DIR ""
#endif

namespace kvb::cli {

constexpr int kOk = 0;
constexpr int kRefused = 1;
constexpr int kUsage = 2;

struct ArgSpec {
    std::set<std::string> with_value;  // e.g. "--context", "-c"
    std::set<std::string> switches;    // e.g. "--json", "--kv-unified"
};

struct Args {
    std::vector<std::string> positional;
    std::map<std::string, std::string> values;
    std::set<std::string> switches;
    bool has(const std::string& k) const { return values.count(k) || switches.count(k); }
    std::string get(const std::string& k, const std::string& def = "") const {
        auto it = values.find(k);
        return it == values.end() ? def : it->second;
    }
};

// Parses argv after the command name. On a usage error writes to err and returns nullopt.
// "--json" and "--help" are always accepted.
std::optional<Args> parse_args(const std::vector<std::string>& argv, const ArgSpec& spec, std::ostream& err);

// The common prologue of every subcommand that takes one CONFIG: parses argv,
// answers --help, and insists on exactly one positional argument. When the command
// should stop here it returns nullopt and sets `exit_code` (0 after --help, 2 on a
// usage error).
std::optional<Args> parse_command(const std::string& name, const std::vector<std::string>& argv, const ArgSpec& spec,
                                  const char* help, std::ostream& out, std::ostream& err, int& exit_code);

// Reads and parses CONFIG (a path to config.json, or "-" for stdin). On failure
// prints "kvbudget: error: <message>" to err and returns nullopt.
std::optional<ModelSpec> load_model(const std::string& path, std::ostream& err);

// Typed option readers: print the error and return nullopt on a bad value.
std::optional<int64_t> get_count(const Args& a, const std::string& key, int64_t def, std::ostream& err);
// A context length: what get_count takes, plus 128K (131,072) and 1M (1,048,576).
std::optional<int64_t> get_context(const Args& a, const std::string& key, int64_t def, std::ostream& err);
std::optional<int64_t> get_size(const Args& a, const std::string& key, int64_t def, std::ostream& err);
std::optional<double> get_fraction(const Args& a, const std::string& key, double def, std::ostream& err);

// Folders a bundled data set may live in, first found wins: $env; beside the executable
// (an installed bin/ -> ../share/kvbudget/<share>, moved with its prefix; a build folder
// one or two levels below the repository -> ../<repo>, ../../<repo>); then `configured`
// (the install prefix and source tree this binary was built for; empty entries skipped).
std::vector<std::string> data_dirs(const char* env, const std::string& share, const std::string& repo,
                                   std::initializer_list<const char*> configured);

// Escapes for JSON output without pulling nlohmann into every command.
std::string json_string(const std::string& s);

}  // namespace kvb::cli
