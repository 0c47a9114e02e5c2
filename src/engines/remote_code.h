// Whether an engine needs a repository's own code (config.json's auto_map) to load a model kvbudget sizes: the
// flag the printed command or snippet must carry to run at all.
#pragma once

#include "model/model.h"

namespace kvb {

// `vllm serve --trust-remote-code`.
bool vllm_needs_remote_code(const ModelSpec& m);
// transformers' `from_pretrained(..., trust_remote_code=True)`: a config whose model_type transformers does not have.
bool transformers_needs_remote_code(const ModelSpec& m);

}  // namespace kvb
