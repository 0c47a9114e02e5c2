// Temporary: weak fallbacks for subcommands whose files have not landed yet, so the
// CLI links while they are written in parallel. Removed once all exist.
#include "args.h"
#include "commands.h"

namespace kvb::cli {
#define KVB_PENDING(fn)                                                                                  \
    __attribute__((weak)) int fn(const std::vector<std::string>&, std::ostream&, std::ostream& err) {   \
        err << "kvbudget: error: " #fn " is not built yet\n";                                            \
        return kUsage;                                                                                   \
    }
KVB_PENDING(cmd_vllm)
KVB_PENDING(cmd_llamacpp)
KVB_PENDING(cmd_budget)
KVB_PENDING(cmd_simulate)
}  // namespace kvb::cli
