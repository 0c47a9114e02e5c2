#!/usr/bin/env bash
# The sustainable request rate of docs/paging.md (the paper's Fig. 12 / 14 knee):
# the highest Poisson rate at which the normalized latency (mean latency per output
# token) stays under 1 s, for OPT-13B on an A100-40GB with 12 GiB of KV cache.
# The latency at a rate is the mean over ten workloads (seeds 5 to 14) lasting
# DURATION seconds (at least 200 requests); geometric bisection, 12 halvings of
# [0.2, 80] req/s. Prints the rate in req/s. The same measurement, with the same
# numbers, as tests/unit/test_sim_published.cpp. Ten, not one or three: one Poisson
# draw of a few thousand requests moves a ShareGPT rate ratio by up to +-0.07, and
# the ratio is compared with a published floor it clears by a few hundredths.
#
#   scripts/sim-sustainable-rate.sh WORKLOAD POLICY DURATION [simulate flags...]
#   scripts/sim-sustainable-rate.sh sharegpt paged 600
#   scripts/sim-sustainable-rate.sh alpaca oracle 600 --beam 6
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
kvb=${KVB_CLI:-$here/build/kvbudget}
workload=$1 policy=$2 duration=$3
shift 3
config=$(jq '._name_or_path="facebook/opt-13b" | .hidden_size=5120 | .ffn_dim=20480
  | .num_attention_heads=40 | .num_hidden_layers=40 | .word_embed_proj_dim=5120' \
  "$here/tests/fixtures/configs/facebook--opt-1.3b.json")
latency() {  # rate -> mean normalized latency over the ten workloads
  local rate=$1 n
  shift
  n=$(awk -v r="$rate" -v d="$duration" 'BEGIN { n = int(r * d); print (n < 200 ? 200 : n) }')
  for seed in $(seq 5 14); do
    printf '%s' "$config" | "$kvb" simulate - --kv-cache-memory 12GiB --gpu a100-40gb --json \
      --workload "$workload" --policy "$policy" --rate "$rate" --requests "$n" --seed "$seed" "$@" |
      jq '.policies[0].normalized_latency_s'
  done | awk '{ s += $1 } END { printf "%.9f\n", s / NR }'
}
lo=0.2 hi=80
for _ in $(seq 12); do
  mid=$(awk -v a="$lo" -v b="$hi" 'BEGIN { printf "%.12g", sqrt(a * b) }')
  if awk -v x="$(latency "$mid" "$@")" 'BEGIN { exit !(x < 1.0) }'; then lo=$mid; else hi=$mid; fi
done
awk -v a="$lo" -v b="$hi" 'BEGIN { printf "%.3f\n", sqrt(a * b) }'
