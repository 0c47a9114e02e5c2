// libFuzzer target: any bytes through the config parser and, when they parse,
// through the KV arithmetic. Crashes, sanitizer reports, uncaught exceptions and
// refusals without a code or message are all failures.
#include <cstdint>
#include <cstdlib>
#include <string>

#include "kv.h"
#include "model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    auto m = kvb::parse_config(text, "fuzz");
    if (!m) {
        if (m.error().code.empty() || m.error().message.empty()) std::abort();
        return 0;
    }
    if (m->layers.empty()) std::abort();
    for (const char* t : {"auto", "fp8"}) {
        auto kt = kvb::vllm_kv_type(t, m->dtype);
        if (!kt) std::abort();
        kvb::KvDtypes d = kvb::uniform_kv_dtypes(m.value(), kt.value());
        kvb::IdealKv kv = kvb::ideal_kv(m.value(), d);
        if (kv.bytes_per_token < 0 || kv.state_bytes_per_seq < 0) std::abort();
        for (int64_t ctx : {int64_t(0), int64_t(1), int64_t(4096), int64_t(1) << 20}) {
            auto b = kvb::kv_bytes_at(m.value(), d, ctx, 10000);
            if (b && b.value() < 0) std::abort();
        }
        (void)kvb::ideal_kv(kvb::with_kv_heads(m.value(), 0), d);
    }
    return 0;
}
