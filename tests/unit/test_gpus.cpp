// GPU catalog: ids, aliases, and spec-sheet values that other modules (budget,
// simulator, web page) rely on.
#include <doctest/doctest.h>

#include <cctype>
#include <set>

#include "base/units.h"
#include "budget/gpus.h"

TEST_CASE("catalog ids are unique lowercase slugs with positive specs") {
    std::set<std::string> seen;
    for (const kvb::Gpu& g : kvb::gpu_catalog()) {
        CAPTURE(g.id);
        CHECK(seen.insert(g.id).second);
        for (char c : g.id)
            CHECK((std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) ||
                   c == '-'));
        CHECK(!g.name.empty());
        CHECK((g.vendor == "nvidia" || g.vendor == "amd" || g.vendor == "apple"));
        CHECK(g.memory_bytes > 0);
        CHECK(g.memory_bytes % kvb::GiB == 0);  // marketed capacity in binary units
        CHECK(g.bandwidth_bytes_per_s > 0);
        CHECK(g.bf16_flops > 0);
        CHECK(g.total_bytes() > 0);
        CHECK(g.total_bytes() <= g.memory_bytes);
        CHECK(kvb::find_gpu(g.id) == &g);
        for (const std::string& a : g.aliases) CHECK(kvb::find_gpu(a) == &g);
    }
}

TEST_CASE("the ids the page and the simulator use exist") {
    for (const char* id :
         {"rtx-4090", "rtx-3090", "a100-40gb", "a100-80gb", "h100-80gb", "h100-sxm", "h200", "l4", "l40s", "a10g", "t4",
          "mi300x", "mi250", "rx-7900-xtx", "m2-ultra-192gb", "m3-max-128gb", "m4-max-128gb"}) {
        CAPTURE(id);
        CHECK(kvb::find_gpu(id) != nullptr);
    }
}

TEST_CASE("spec values") {
    const kvb::Gpu* g = kvb::find_gpu("rtx-4090");
    REQUIRE(g);
    CHECK(g->memory_bytes == 24 * kvb::GiB);
    CHECK(g->bandwidth_bytes_per_s == doctest::Approx(1.008e12));
    CHECK_FALSE(g->unified_memory);
    // PyTorch's "total capacity of 23.64 GiB" on a 4090, rounded to the MiB.
    CHECK(g->reported_bytes == 24207 * kvb::MiB);
    CHECK(g->total_bytes() == g->reported_bytes);
    const kvb::Gpu* h = kvb::find_gpu("h100");
    REQUIRE(h);
    CHECK(h->id == "h100-sxm");
    CHECK(h->memory_bytes == 80 * kvb::GiB);
    CHECK(h->bandwidth_bytes_per_s == doctest::Approx(3.35e12));
    CHECK(h->total_bytes() == 81121 * kvb::MiB);  // vLLM's "total_gpu_memory 79.22GiB"
    const kvb::Gpu* l4 = kvb::find_gpu("l4");
    REQUIRE(l4);
    CHECK(l4->total_bytes() == 24 * kvb::GiB);  // no public measurement: the marketed size
    const kvb::Gpu* mac = kvb::find_gpu("m4-max-128gb");
    REQUIRE(mac);
    CHECK(mac->unified_memory);
    CHECK(mac->total_bytes() == 96 * kvb::GiB);  // 75% wired limit
    const kvb::Gpu* mi = kvb::find_gpu("mi300x");
    REQUIRE(mi);
    CHECK(mi->memory_bytes == 192 * kvb::GiB);
    CHECK(mi->vendor == "amd");
}

TEST_CASE("lookup is case-insensitive and accepts obvious spellings") {
    CHECK(kvb::find_gpu("RTX 4090") == kvb::find_gpu("rtx-4090"));
    CHECK(kvb::find_gpu("NVIDIA GeForce RTX 4090") == kvb::find_gpu("rtx-4090"));
    CHECK(kvb::find_gpu("rtx4090") == kvb::find_gpu("rtx-4090"));
    CHECK(kvb::find_gpu("4090") == kvb::find_gpu("rtx-4090"));
    CHECK(kvb::find_gpu("A100") == kvb::find_gpu("a100-80gb"));
    CHECK(kvb::find_gpu("H100_SXM") == kvb::find_gpu("h100-sxm"));
    CHECK(kvb::find_gpu("7900-xtx") == kvb::find_gpu("rx-7900-xtx"));
    CHECK(kvb::find_gpu("") == nullptr);
    CHECK(kvb::find_gpu("rtx-9999") == nullptr);
}

TEST_CASE("compute capability: every NVIDIA entry has one, AMD and Apple none") {
    for (const kvb::Gpu& g : kvb::gpu_catalog()) {
        if (g.vendor == "nvidia")
            CHECK_MESSAGE(g.compute_capability >= 70, g.id);
        else
            CHECK_MESSAGE(g.compute_capability == 0, g.id);
    }
    CHECK(kvb::find_gpu("h100")->compute_capability == 90);
    CHECK(kvb::find_gpu("b200")->compute_capability == 100);
    CHECK(kvb::find_gpu("rtx-5090")->compute_capability == 120);
    CHECK(kvb::find_gpu("a100")->compute_capability == 80);
    CHECK(kvb::find_gpu("4090")->compute_capability == 89);
    CHECK(kvb::find_gpu("gb10")->compute_capability == 121);
}

// The export models a reader in China serves on, found by the names people write ("NVIDIA H20", "H800", "A800"), Hopper
// or Ampere as their silicon is.
TEST_CASE("H20, H800 and A800") {
    const kvb::Gpu* h20 = kvb::find_gpu("NVIDIA H20");
    REQUIRE(h20);
    CHECK(h20->id == "h20");
    CHECK(h20->memory_bytes == 96 * kvb::GiB);
    CHECK(h20->bandwidth_bytes_per_s == doctest::Approx(4.0e12));
    CHECK(h20->compute_capability == 90);
    CHECK(h20->total_bytes() == 96 * kvb::GiB);  // no public PyTorch total: the marketed size
    const kvb::Gpu* h800 = kvb::find_gpu("H800");
    REQUIRE(h800);
    CHECK(h800->memory_bytes == 80 * kvb::GiB);
    CHECK(h800->bf16_flops == kvb::find_gpu("h100-sxm")->bf16_flops);
    CHECK(h800->compute_capability == 90);
    const kvb::Gpu* a800 = kvb::find_gpu("A800");
    REQUIRE(a800);
    CHECK(a800->id == "a800-80gb");
    CHECK(a800->bandwidth_bytes_per_s == kvb::find_gpu("a100-80gb")->bandwidth_bytes_per_s);
    CHECK(a800->compute_capability == 80);
}
