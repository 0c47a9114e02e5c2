// Contract of wasm/kvbudget.js, the ES-module wrapper over the embind module built
// from wasm/bindings.cpp. Every number is computed by the C++ core; bytes are
// integers (exact below 2^53, which any real memory size is).

/** Thrown for every error value of the core ({ok:false, code, message}). */
export class KvbudgetError extends Error {
  readonly name: 'KvbudgetError';
  /** Stable code: not_json, missing_field, bad_value, unsupported_architecture, bad_handle, load_failed, internal, ... */
  readonly code: string;
}

export interface LoadOptions {
  /** Node: the .wasm bytes (build-wasm-web/kvbudget.wasm). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Page: where kvbudget.wasm is served. */
  wasmUrl?: string;
}

/** Loads the module once; later calls return the same promise (options are ignored then). */
export function loadKvbudget(options?: LoadOptions): Promise<Kvbudget>;

export type LayerKind = 'full' | 'sliding' | 'chunked' | 'mla' | 'linear' | 'mamba' | 'none';
export type Engine = 'vllm' | 'llamacpp' | 'transformers';

export interface LayerGroup {
  kind: LayerKind;
  /** Layers in this group of identical geometry, and the first one's index. */
  layers: number;
  firstLayer: number;
  kvHeads?: number;
  kHeadDim?: number;
  vHeadDim?: number;
  window?: number;
  kvLoraRank?: number;
  qkRopeHeadDim?: number;
  convKernel?: number;
  dInner?: number;
  nGroups?: number;
  dState?: number;
  heads?: number;
  convElems?: number;
  ssmElems?: number;
}

export interface FormulaGroup extends LayerGroup {
  bytesPerTokenPerLayer: number;
  bytesPerToken: number;
  stateBytesPerLayer: number;
  stateBytes: number;
}

export interface ModelSpecSummary {
  name: string;
  modelType: string;
  architecture: string;
  family: string;
  generic: boolean;
  multimodal: boolean;
  dtype: string;
  maxPositionEmbeddings: number;
  numLayers: number;
  notes: string[];
  quantization: { method: string; bits: number; groupSize: number };
  hiddenSize: number;
  numAttentionHeads: number;
  vocabSize: number;
  numExperts: number;
  expertsPerToken: number;
  /** Layer count per kind, only kinds present. */
  layerCounts: Partial<Record<LayerKind, number>>;
  layerGroups: LayerGroup[];
}

export interface ComputeInput {
  engine?: Engine;                 // default vllm
  context?: number;                // tokens per sequence (vLLM --max-model-len), default 32768
  seqs?: number;                   // concurrent sequences (--max-num-seqs / -np), default 1
  kvDtype?: string;                // vLLM / transformers spelling, default auto
  cacheTypeK?: string;             // llama.cpp -ctk, default f16
  cacheTypeV?: string;             // llama.cpp -ctv, default f16
  gpu?: string;                    // GPU catalog id; '' = gpuMemoryBytes
  gpuMemoryBytes?: number;
  gpuCount?: number;
  gpuMemoryUtilization?: number | null;  // null/absent = the engine's default
  weightsFormat?: string;          // auto | bf16 | fp8 | awq | Q4_K_M | ... (catalog().weightFormats)
  tensorParallel?: number;         // 0/absent = gpuCount
  hubParameters?: number;          // exact parameter count from the Hub (safetensors total); 0 = count
}

export interface KvTypeInfo { name: string; blockValues: number; blockBytes: number }

export interface Budget {
  engine: string;
  gpuId: string;
  gpuName: string;
  gpuCount: number;
  tp: number;
  pp: number;
  gpuMemoryUtilization: number;
  /** Per GPU from here on. */
  capacityBytes: number;
  usableBytes: number;
  weightsBytes: number;            // whole model
  weightsPerGpuBytes: number;
  weightsFormat: string;
  params: number;
  kvBytes: number;                 // engine KV for context x seqs (blocks / cells rounded)
  kvPoolBytes: number;
  activationsBytes: number;
  overheadBytes: number;           // runtime overhead + CUDA graphs
  totalBytes: number;              // weights + kv + activations + overhead
  freeBytes: number;               // capacity - total (negative: over)
  fits: boolean;                   // one request of `context` fits
  allSeqsFit: boolean;             // `seqs` of them fit at once
  maxContext: number;
  maxContextCapped: boolean;
  maxConcurrency: number;
  vllmConcurrency: number;
  maxModelLen: number;
  maxNumSeqs: number;
  kvCacheDtype: string;
}

export interface View {
  model: { name: string; maxPositionEmbeddings: number };
  engine: Engine;
  kvTypes: { k: KvTypeInfo; v: KvTypeInfo; convStateBytes: number; ssmStateBytes: number };
  kv: {
    bytesPerToken: number;          // context-proportional part, one sequence, all layers, no TP split
    windowedBytesPerToken: number;
    stateBytesPerSeq: number;
    bytesPerSeq: number;
    bytesTotal: number;             // context x seqs (windows capped, state added) = `kvbudget kv` bytes_at_context
    context: number;
    seqs: number;
    kinds: { kind: LayerKind; layers: number; bytesPerToken: number; window: number; stateBytes: number }[];
  };
  formula: FormulaGroup[];
  contextTable: { context: number; isModelMax: boolean; beyondModelMax: boolean; bytesPerSeq: number; bytesTotal: number; vsWeights?: number }[];
  comparison: { variant: 'MHA' | 'actual' | 'MQA'; kvHeads: number; bytesPerToken: number; bytesTotal: number | null }[];
  chart: { contexts: number[]; kvBytes: number[]; weightsBytes: number; capacityBytes: number; crossoverContext: number };
  ladder: { step: 'mha' | 'model' | 'fp8' | 'q8_0' | 'q4_0' | 'contiguous' | 'mla'; detail: string; bytesPerToken: number | null; kvBytes: number; saving: number }[];
  budget: Budget | null;
  /** The engine refused the settings (e.g. context past the model's limit); KV numbers still valid. */
  budgetError: { code: string; message: string } | null;
  engineView: { logLines: string[]; command: string; error: string; notes: string[] } | null;
  decode: {
    context: number; weightBytesPerToken: number; kvBytesPerToken: number; tokensPerSecondSingle: number;
    batch: number; tokensPerSecondBatch: number; bandwidthBytesPerS: number;
  } | null;
  notes: string[];
}

export interface Model {
  readonly handle: number;
  readonly spec: ModelSpecSummary;
  /** Everything the page shows for these settings. Throws KvbudgetError on bad input. */
  compute(input?: ComputeInput): View;
  /** Frees the parsed model in the module. */
  release(): void;
}

export interface GpuInfo {
  id: string; name: string; vendor: string; memoryBytes: number; totalBytes: number;
  bandwidthBytesPerS: number; unifiedMemory: boolean;
}

export interface Kvbudget {
  /** Parses config.json text; `name` (the Hub id) appears in error messages. */
  parseConfig(text: string, name?: string): Model;
  kvTypeNames(engine: Engine): string[];
  /** "24GiB", "80GB", "512MiB", bytes; as the CLI parses sizes. */
  parseSize(text: string): number;
  formatBytes(n: number): string;
  catalog(): { gpus: GpuInfo[]; weightFormats: { id: string; label: string }[]; sim_limits: Record<string, { min: number; max: number; flag: string }> };
  /** Prepares a paging simulation of `model` (one run per policy); throws KvbudgetError on bad input. */
  simulate(model: Model, input?: SimInputs): Simulation;
}

// ---------- paging simulator (issue 4) ----------
// The core's own types and JSON (src/sim/session.h, src/report/sim_json.cpp): the
// same member names as `kvbudget simulate --json`.

export type SimPolicy = 'paged' | 'max' | 'pow2' | 'oracle';

/**
 * SimInputs: the settings of `kvbudget simulate`, same defaults and same refusals
 * (validate() in the core; ranges in catalog().sim_limits). Unknown keys and wrong
 * types are refused by name. The KV pool is what vLLM would get on the GPU (as
 * compute()'s budget), unless kv_cache_memory is given.
 */
export interface SimInputs {
  policies?: 'all' | SimPolicy | (SimPolicy | 'all')[];  // default ['paged']
  kv_cache_memory?: number | null;  // bytes: the KV pool given directly (the GPU then only sets the time model)
  gpu?: string;                    // catalog id, default a100-80gb; '' = gpu_memory_bytes (time model: a100-80gb)
  gpu_memory_bytes?: number;
  gpu_memory_utilization?: number; // default 0.9
  kv_cache_dtype?: string;         // vLLM spelling, default auto
  weights?: string;                // weight format, default auto
  params?: number;                 // exact parameter count (the hub's), 0 = count from the config
  block_size?: number;             // default 16
  max_model_len?: number | null;   // default the model's max_position_embeddings
  max_num_seqs?: number | null;    // default vLLM's for the GPU (256 with kv_cache_memory)
  max_num_batched_tokens?: number | null;  // default vLLM's for the GPU (8192 with kv_cache_memory)
  preemption?: 'v0' | 'recompute' | 'swap';  // default v0
  swap_space_bytes?: number;       // default 4 GiB
  sample_lengths?: 'independent' | 'same';
  n?: number;                      // parallel samples
  beam?: number;                   // beam width
  prefix_caching?: boolean;        // paged only
  workload?: 'sharegpt' | 'alpaca' | 'azure-conv' | 'azure-code' | 'csv';  // default sharegpt
  /** CSV text for azure-conv / azure-code / csv (the module has no file system). */
  trace?: string;
  trace_name?: string;             // for error messages ("line 12 of NAME: ...")
  requests?: number | null;        // default 1000 for presets, the whole trace otherwise
  rate?: number | null;            // Poisson arrivals (requests/s); default batch / trace timestamps
  seed?: number;                   // default 0
  shared_prefix?: number | null;   // tokens of a common system prompt ...
  shared_fraction?: number | null; // ... on this fraction of requests (default 1; needs shared_prefix)
  snapshots?: number;              // block-map snapshots kept per policy (default 0 = none)
  series_points?: number;          // time series length target (default 200)
}

/** SimRunInfo: the run, resolved (simCreate's echo, and the head of every SimReport). */
export interface SimRunInfo {
  model: string; workload: string; requests: number; arrivals: 'batch' | 'poisson' | 'trace'; rate: number; seed: number;
  shared_prefix: number; shared_fraction: number;
  kv_cache_bytes: number; kv_bytes_per_token: number; kv_cache_dtype: string;
  from_gpu: boolean; gpu_name: string; gpu_memory_utilization: number; weights_bytes: number; runtime_bytes: number;
  time_model_gpu: string;
  block_size: number; max_model_len: number; max_num_seqs: number; max_num_batched_tokens: number;
  n: number; beam: number; independent_sample_lengths: boolean; preemption: string; swap_space_bytes: number;
  prefix_caching: boolean;
  /** Sliding-window / recurrent layers exist but only the context-proportional KV is simulated. */
  windowed_or_state_left_out: boolean;
  policy_names: SimPolicy[];
}

export interface SimProgress {
  done: boolean;
  progress: number;                // 0..1 over all policies
  policy_index: number;
  policy: SimPolicy | '';
  policy_progress: number;
  steps: number;
  time_s: number;
}

/** One policy's summary. Fractions are time-weighted shares of the KV capacity. */
export interface SimSummary {
  policy: SimPolicy;
  requests: number; finished: number; refused: number; truncated: number;
  preemptions: number; swapped_out: number; swap_fallbacks: number; recomputed_tokens: number; steps: number;
  makespan_s: number; capacity_tokens: number; num_blocks: number;
  token_states_fraction: number; reserved_fraction: number; internal_fragmentation_fraction: number;
  external_fragmentation_fraction: number; cached_fraction: number; free_fraction: number; null_block_fraction: number;
  token_states_of_used_fraction: number; reserved_of_used_fraction: number;
  internal_fragmentation_of_used_fraction: number; external_fragmentation_of_used_fraction: number;
  mean_running: number; max_running: number; mean_waiting: number; max_waiting: number;
  sharing_saved_fraction: number; max_blocks_saved: number; cow_copies: number;
  prefix_hit_tokens: number; prefix_query_tokens: number;
  prompt_tokens: number; generated_tokens: number; throughput_tokens_per_s: number; requests_per_s: number;
  ttft_mean_s: number; ttft_p50_s: number; ttft_p90_s: number; ttft_p99_s: number;
  tpot_mean_s: number; tpot_p50_s: number; tpot_p90_s: number; tpot_p99_s: number;
  e2e_mean_s: number; e2e_p50_s: number; e2e_p90_s: number; e2e_p99_s: number;
  normalized_latency_s: number;
}

/** SimReport: `kvbudget simulate --json`, byte for byte. */
export interface SimReport extends SimRunInfo {
  done: boolean;
  policies: SimSummary[];
}

/** Downsampled, time-weighted; columns of equal length (TimePoint's members). */
export interface SimSeries {
  time_s: number[]; duration_s: number[];
  token_states: number[]; reserved: number[]; internal_fragmentation: number[]; external_fragmentation: number[];
  cached: number[]; free: number[]; null_block: number[];
  running: number[]; waiting: number[]; sharing_saved: number[]; preemptions: number[]; finished: number[];
}

export interface SimSnapshot {
  step: number; time_s: number; block_size: number; capacity_tokens: number;
  /** Paged: blocks in the pool (incl. the null block 0); 0 for contiguous policies. */
  num_blocks: number;
  /** Paged: run-length owners [owner, run, ...]; owner = request id, -1 free, -2 free but cached, -3 null block. */
  owner?: number[];
  /** Paged: [block, refcount, ...] for blocks held by more than one sequence. */
  shared?: number[];
  /** Paged: [block, tokens, ...] for held blocks not full. */
  partial?: number[];
  /** Contiguous: [request, seq, offset, allocated, reserved, length, stored] per region, by offset. */
  regions?: number[][];
}

export interface SimResult {
  summary: SimReport;
  /** One per policy, in summary.policies' order (unless turned off). */
  series?: SimSeries[];
  snapshots?: SimSnapshot[][];
}

export interface Simulation {
  readonly id: number;
  readonly info: SimRunInfo;
  /** Runs at most maxSteps scheduler steps (default 20000), continuing with the next policy when one ends. */
  run(maxSteps?: number): SimProgress;
  /** Summary so far (final once done), series and snapshots unless turned off. */
  result(options?: { series?: boolean; snapshots?: boolean }): SimResult;
  release(): void;
}
