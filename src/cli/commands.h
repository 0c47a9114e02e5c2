// One function per subcommand, each in its own cmd_<name>.cpp.
#pragma once
#include <ostream>
#include <string>
#include <vector>

namespace kvb::cli {

using Command = int (*)(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

int cmd_inspect(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int cmd_kv(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int cmd_vllm(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int cmd_llamacpp(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int cmd_budget(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int cmd_check(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int cmd_lab(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);
int cmd_simulate(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err);

// The bundled catalog's config file for a Hub id ("org/name"); "" when it has none (cmd_check.cpp).
std::string catalog_file(const std::string& id);

}  // namespace kvb::cli
