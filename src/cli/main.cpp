// kvbudget: the native face of the core. Each subcommand lives in cmd_<name>.cpp.
#include <iostream>
#include <string>
#include <vector>

#include "args.h"
#include "commands.h"

namespace {

const char* kHelpText = R"(kvbudget: where does GPU memory go when you serve an LLM, and what fits?

Usage: kvbudget COMMAND CONFIG [options]      (CONFIG: a Hugging Face config.json, a .gguf file, or - for stdin)

Commands:
  inspect   the normalized per-layer model spec
  kv        KV cache per token, per sequence state, bytes at a context, MHA/MQA comparison
  vllm      the lines vLLM prints at start-up for a given KV cache memory
  llamacpp  the llama_kv_cache lines llama.cpp prints for -c / -np / -ctk / -ctv
  budget    the whole GPU budget: weights + KV + activations + overhead; what fits
  simulate  replay a workload through paged and contiguous KV allocation
  check     an engine's start-up log (vLLM, llama.cpp), line by line against the prediction
  lab       memory measured at several contexts: fitted bytes per token vs the formula's KV

Every command takes --json and --help. Sizes take bytes or units (8GiB, 24GB, 512MiB).
Exit status: 0 success, 1 the input was refused (stderr says why), 2 usage error.
Run 'kvbudget COMMAND --help' for the options of a command.
)";

}  // namespace

int main(int argc, char** argv) {
    using namespace kvb::cli;
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
        (args.empty() ? std::cerr : std::cout) << kHelpText;
        return args.empty() ? kUsage : kOk;
    }
    if (args[0] == "--version") {
        std::cout << "kvbudget 0.1.0\n";
        return kOk;
    }
    struct Entry {
        const char* name;
        Command fn;
    };
    const Entry commands[] = {
        {"inspect", cmd_inspect},   {"kv", cmd_kv},         {"vllm", cmd_vllm},
        {"llamacpp", cmd_llamacpp}, {"budget", cmd_budget}, {"simulate", cmd_simulate},
        {"check", cmd_check},       {"lab", cmd_lab},
    };
    for (const auto& c : commands) {
        if (args[0] == c.name) {
            std::vector<std::string> rest(args.begin() + 1, args.end());
            return c.fn(rest, std::cout, std::cerr);
        }
    }
    std::cerr << "kvbudget: error: unknown command '" << args[0] << "'\n\n" << kHelpText;
    return kUsage;
}
