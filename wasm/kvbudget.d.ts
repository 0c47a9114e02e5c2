// Contract of wasm/kvbudget.js, the ES-module wrapper over the embind module built
// from wasm/bindings.cpp, and of wasm/kvbudget-calc.js: the same wrapper over the
// calculator-only module the page loads first (kvbudget-calc.wasm, no simulate()). Every value is the C++ core's own JSON (src/report/json.cpp),
// the same text `kvbudget inspect|budget --json` prints: field names are the C++
// member names, snake_case. Bytes are integers (exact below 2^53, which any real
// memory size is). tests/node/answer-vs-cli.test.mjs keeps this true byte for byte.

/** A note, warning or refusal: a stable code with named parameters (src/base/message.h). */
export interface Message {
  code: string;
  /** Already formatted as the English page shows them (42,656; 4.50 GiB). */
  params: Record<string, string>;
  /** The core's English (the CLI's wording); web/i18n/<lang>.json "msg.<code>" words it for the page. */
  text: string;
}

/** Thrown for every error value of the core ({ok:false, code, message, detail}). */
export class KvbudgetError extends Error {
  readonly name: 'KvbudgetError';
  /** Stable category: not_json, missing_field, bad_value, unsupported_architecture, bad_handle, load_failed, internal, ... */
  readonly code: string;
  /** The same refusal as a Message, for other languages; null for the wrapper's own errors. */
  readonly detail: Message | null;
}

export interface LoadOptions {
  /** Node: the .wasm bytes. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Page: where kvbudget.wasm (kvbudget-calc.wasm) is served. */
  wasmUrl?: string;
  /** Page: the .wasm already compiled (or being compiled) by WebAssembly.compileStreaming. */
  wasmModule?: Promise<WebAssembly.Module> | WebAssembly.Module;
}

/** Loads the module once; later calls return the same promise (options are ignored then). */
export function loadKvbudget(options?: LoadOptions): Promise<Kvbudget>;

export type LayerKind = 'full' | 'sliding' | 'chunked' | 'mla' | 'linear' | 'mamba' | 'none';
export type Engine = 'vllm' | 'llamacpp' | 'transformers';

/** One layer's geometry; which fields are present depends on `kind`. */
export interface Layer {
  kind: LayerKind;
  kv_heads?: number; k_head_dim?: number; v_head_dim?: number;
  /** sliding: window tokens; chunked: chunk tokens. */
  window?: number;
  kv_lora_rank?: number; qk_rope_head_dim?: number;
  conv_kernel?: number; d_inner?: number; n_groups?: number; d_state?: number; heads?: number;
  conv_elems?: number; ssm_elems?: number;
}

export interface LayerGroup extends Layer {
  layers: number;
  first_layer: number;
}

/** RoPE scaling (model/rope.h); `text` is what --rope-scaling / BudgetInputs.rope_scaling take ("yarn:4:32768"). */
export interface RopeScaling {
  type: string; factor: number; original_max_position_embeddings: number;
  /** "config", "gguf", "user" or "model_card". */
  source: string; text: string;
  /** The longest context it gives (vLLM's derived length); 0 when not worked out (a config's own). */
  max_len: number;
}

/** `kvbudget inspect --json`. */
export interface ModelSpec {
  name: string; model_type: string; architecture: string; family: string;
  generic: boolean; multimodal: boolean; dtype: string; ssm_dtype: string;
  max_position_embeddings: number; original_max_position_embeddings: number; rope_scaling: RopeScaling | null;
  num_layers: number;
  layer_counts: Partial<Record<LayerKind, number>>;
  layer_groups: LayerGroup[];
  layers: Layer[];
  hidden_size: number; num_attention_heads: number; vocab_size: number; num_experts: number; experts_per_token: number;
  quantization: { method: string; bits: number; group_size: number };
  /** "config" or "gguf". */
  source: string;
  gguf: null | {
    tensor_bytes: number; params: number; tensors: number; shards: number; file_type: number;
    nextn_layers: number; split_mla: boolean; type_counts: Record<string, number>;
  };
  notes: Message[];
}

/** BudgetInputs (src/budget/budget.h) by name; every field optional, 0 / "" = the engine's default. */
export interface BudgetInputs {
  engine?: Engine;
  gpu?: string; gpu_memory_bytes?: number; gpu_count?: number;
  /** 0 = engine default (vLLM: the release's, 0.92 from 0.20.0 and 0.9 before; others 1.0). */
  gpu_memory_utilization?: number;
  weights?: string; params?: number;
  /** params is the Hub's safetensors total: set aside with a note when far from the config's count, not refused. */
  params_from_hub?: boolean;
  /** Tokens per request; 0 = the model's limit. */
  context?: number;
  /** Requests served at once. */
  seqs?: number;
  /** vLLM --max-num-seqs; 0 = vLLM's default for the GPU, raised to `seqs`. */
  max_num_seqs?: number;
  /** vLLM --kv-cache-dtype, or llama.cpp -ctk. */
  kv_cache_dtype?: string;
  /** llama.cpp -ctv ("" = -ctk). */
  kv_cache_dtype_v?: string;
  /** RoPE scaling to serve with, "TYPE:FACTOR[:ORIGINAL]" ("" = as config.json says). */
  rope_scaling?: string;
  tensor_parallel_size?: number; pipeline_parallel_size?: number;
  /** vLLM --enable-expert-parallel: a MoE's routed experts whole per tensor-parallel GPU (refused for llama.cpp / transformers). */
  expert_parallel?: boolean;
  /** vLLM VLLM_PP_LAYER_PARTITION: layers per pipeline stage ("15,17"; "" = vLLM's even split). */
  pp_layer_partition?: string;
  /** vLLM --speculative-config JSON: the drafter's attention layers share the KV pool ("" = none). */
  speculative_config?: string;
  /** The engine's release ("0.20.1", "vllm=0.20.1"; llama.cpp "b6500"); "" = the newest. */
  engine_version?: string;
  /** llama.cpp --spec-type: draft-simple | draft-eagle3 (need the draft's config) | draft-mtp (the model's MTP block) | ngram-* ("" = none). */
  spec_type?: string;
  /** llama.cpp --spec-draft-n-max (3): MTP / EAGLE-3 keep as many recurrent rollback snapshots per sequence. */
  spec_draft_n_max?: number;
  /** llama.cpp -ctkd / -ctvd: the draft context's cache types ("" = f16). */
  spec_draft_type_k?: string; spec_draft_type_v?: string;
  max_num_batched_tokens?: number; block_size?: number; enforce_eager?: boolean;
  activation_bytes?: number; overhead_bytes?: number; cudagraph_bytes?: number; n_ubatch?: number;
  /** llama.cpp -ngl: the last N layers on the GPU; -1 = all (the default). */
  n_gpu_layers?: number;
  /** llama.cpp: system RAM for what stays on the CPU; 0 = not checked. */
  ram_bytes?: number;
  /** llama.cpp --no-kv-offload. */
  no_kv_offload?: boolean;
  /** Mac: iogpu.wired_limit_mb in force; 0 = macOS's default (2/3 of RAM up to 32 GiB, 3/4 above). */
  wired_limit_mb?: number;
  /** llama.cpp: "org/repo:QUANT"; the command then says -hf with it. */
  hf_ref?: string;
  /** llama.cpp -fitt: MiB --fit keeps free on the device (default 1024). */
  fit_target_mb?: number;
  /** llama.cpp -fitc: the smallest context --fit shrinks to (default 4096). */
  fit_ctx?: number;
  /** GPUs that differ: each one's total memory (gpu_count of them); [] = gpu_count alike. */
  gpu_memory_each?: number[];
  /** System RAM bandwidth in bytes/s for layers on the CPU; 0 = 89.6e9 assumed (dual-channel DDR5-5600). */
  ram_bandwidth_bytes_per_s?: number;
}

export interface KvType { name: string; block_values: number; block_bytes: number }

/** `kvbudget kv --json`. */
export interface KvReport {
  model: string; engine: Engine;
  k_type: KvType; v_type: KvType; conv_state_bytes: number; ssm_state_bytes: number;
  context: number; seqs: number;
  bytes_per_token: number; windowed_bytes_per_token: number; state_bytes_per_seq: number;
  bytes_per_seq: number; bytes_total: number;
  kinds: { kind: LayerKind; layers: number; bytes_per_token: number; window: number; state_bytes: number }[];
  formula: (LayerGroup & { bytes_per_token_per_layer: number; bytes_per_token: number; state_bytes_per_layer: number; state_bytes: number })[];
  context_table: { context: number; is_model_max: boolean; bytes_per_seq: number; bytes_total: number; vs_weights: number }[];
  head_variants: { variant: 'MHA' | 'actual' | 'MQA'; kv_heads: number; bytes_per_token: number; bytes_total: number | null }[];
  ladder: { step: string; detail: string; bytes_per_token: number | null; kv_bytes: number; saving: number }[];
  curve: { contexts: number[]; bytes: number[] };
  weights_bytes: number; crossover_context: number;
  notes: Message[];
}

/** One GPU's memory as the bar shows it. */
export interface PerGpu {
  capacity_bytes: number; usable_bytes: number; weights_bytes: number; kv_bytes: number;
  activation_bytes: number; overhead_bytes: number; total_bytes: number; free_bytes: number; over_usable_bytes: number;
}

export interface Budget {
  engine: Engine;
  /** total_bytes: what the engine sees; on a Mac what Metal may wire of mac_ram_bytes (0 elsewhere). */
  gpu: { id: string; name: string; total_bytes: number; count: number; mac_ram_bytes: number };
  tensor_parallel_size: number; pipeline_parallel_size: number; gpu_memory_utilization: number;
  /** vLLM's expert-parallel group (1 = none, or asked where it does nothing) and the routed experts of a MoE layer on its fullest GPU (0 = none). */
  expert_parallel_size: number; ep_local_experts: number;
  /** The engine's default for the release (vLLM 0.92 from 0.20.0, 0.9 before; 1.0 for the others). */
  gpu_memory_utilization_default: number; requested_bytes: number;
  weights: { format: string; params: number; bytes: number; per_gpu_bytes: number; active_bytes: number; vision_bytes: number; bits_per_weight: number };
  activation_bytes: number; activation_estimated: boolean; overhead_bytes: number; overhead_estimated: boolean;
  cudagraph_bytes: number; cudagraph_estimated: boolean; kv_pool_bytes: number; kv_total_bytes: number;
  kv_cache_dtype: string; kv_cache_dtype_v: string;
  /** model_max_len: the model's longest context after RoPE scaling (vLLM's derived length); native_max_len:
   *  max_position_embeddings; n_ctx_train: llama.cpp's training context. */
  context: number; model_max_len: number; native_max_len: number; n_ctx_train: number; over_model_max: boolean;
  /** The engine stops at start-up whatever the memory (fits false; engine_error says why; the other numbers are what memory holds). */
  startup_refused: boolean;
  rope_scaling: RopeScaling | null;
  seqs: number;
  max_num_seqs: number; max_num_seqs_default: number; max_num_batched_tokens: number;
  per_gpu: PerGpu;
  fits: boolean; all_seqs_fit: boolean; max_context: number; max_context_capped: boolean;
  /** Where max_context stops: memory, the model's limit, the context asked past it, llama-server's slot cap. */
  max_context_stop: 'memory' | 'model' | 'asked' | 'slot';
  /** llama.cpp: fits only as --fit places it (no -ngl given): layers or a MoE's experts in system RAM (llamacpp.fit); fits, max_context and max_concurrency are that placement's. */
  fits_offload: boolean;
  /** Longest context memory holds for `seqs` sequences, past the model's limit (up to 2^24). */
  max_context_physical: number; max_concurrency: number;
  /** What the engine prints at start-up, exactly (none for transformers). */
  log_lines: string[];
  /** vllm serve / llama-server line, or the transformers snippet: only the flags the answer needs. */
  command: string;
  /** The engine's own refusal, verbatim (vLLM's ValueError); "" when it starts. */
  engine_error: string;
  /** Why it does not fit, in kvbudget's words. */
  verdict_reason: Message | null;
  decode: {
    context: number; weight_bytes_per_token: number; kv_bytes_per_token: number; bandwidth_bytes_per_s: number;
    tokens_per_s_single: number; batch: number; tokens_per_s_batch: number;
    /** llama.cpp with layers on the CPU: what each step reads from system RAM, and at what bandwidth (0: none). */
    cpu_weight_bytes_per_token: number; cpu_kv_bytes_per_token: number; ram_bandwidth_bytes_per_s: number;
    /** The RAM bandwidth is kvbudget's assumption, not the user's. */
    ram_bandwidth_assumed: boolean;
  };
  notes: Message[];
  /** block_size: tokens per attention block; mla_backend: the MLA backend vLLM picks for the GPU ("" = none picked). */
  vllm?: { num_blocks: number; block_size: number; mla_backend: string; tokens: number; max_concurrency: number;
    request_bytes: number; estimated_max_model_len: number;
    /** A speculative drafter's own weights (its shared embedding and lm_head left out); in weights.bytes. */
    drafter_params: number; drafter_weight_bytes: number;
    /** One GPU of each pipeline stage (one entry without pipeline parallelism), as its own worker profiles it. */
    stages: VllmStage[] };
  /** fit: with this answer's -c / -ngl; fit_default: with neither (`llama-server -m X` alone). */
  /** kv_bytes includes the speculative draft context's (draft.bytes); n_rs_seq: recurrent rollback snapshots per sequence. */
  /** slot_cap: llama-server's per-slot limit, the training context (from b6925; 0 = none); n_ctx_slot: what a
   *  request gets, min(n_ctx_seq, slot_cap); slot_capped: the cache holds more per sequence than that. */
  llamacpp?: { kv_bytes: number; n_ctx: number; n_seq_max: number; slot_cap: number; n_ctx_slot: number; slot_capped: boolean; n_rs_seq: number; draft: LlamaDraft; offload: LlamaOffload; fit: LlamaFit; fit_default: LlamaFit };
  transformers?: { cache_bytes: number; cache_transient_bytes: number };
}

/** One pipeline stage's GPU in vLLM: every worker cuts its own KV memory (kv_available_bytes) into blocks
 *  (num_blocks) and the engine keeps the fewest over stages (limiting: this stage's); kv_bytes is what the
 *  stage then allocates, used_bytes weights + activation + overhead (non-torch and CUDA graphs) + kv_bytes. */
export interface VllmStage {
  layers: number; weights_bytes: number; activation_bytes: number; overhead_bytes: number;
  kv_available_bytes: number; num_blocks: number; kv_bytes: number; used_bytes: number; limiting: boolean;
}

/** llama.cpp --spec-type's draft context(s): "none" / "ngram" have none (contexts 0). n_ctx and n_seq_max are one
 *  context's, bytes all contexts' KV; layers: the draft model's (draft-mtp: the nextn layers it caches). The same form
 *  is `draft` in `kvbudget llamacpp --json`. */
export interface LlamaDraft {
  spec_type: string; contexts: number; layers: number; n_ctx: number; n_seq_max: number; bytes: number;
  /** The draft context's own "llama_kv_cache: size = ..." lines. */
  log_lines: string[];
}

/** llama.cpp -ngl: what sits on the GPU(s) and what in system RAM (all GPUs together). */
export interface LlamaOffload {
  /** -ngl, --ram or --no-kv-offload was asked for; otherwise every layer is on the GPU. */
  active: boolean;
  n_layer: number; n_gpu_layers: number; output_on_gpu: boolean; kv_offload: boolean;
  /** The slots -ngl counts (n_layer repeating layers + the output layer), and the repeating layers -ngl puts on the GPU. */
  n_slots: number; gpu_repeating_layers: number;
  /** Per-layer split estimated from parameter counts (a config, not a GGUF's tensors). */
  estimated: boolean;
  gpu_weights_bytes: number; cpu_weights_bytes: number; gpu_kv_bytes: number; cpu_kv_bytes: number;
  /** Of cpu_weights_bytes, what decode reads each step (not the input layer's embeddings). */
  cpu_read_weights_bytes: number;
  ram_bytes: number; ram_need_bytes: number; ram_fits: boolean;
  /** The largest -ngl whose share fits the GPU at this context; -1 when not even -ngl 0 does. */
  max_gpu_layers: number;
}

/** What llama.cpp's --fit (on by default) chooses by itself for one GPU (common/fit.cpp). */
export interface LlamaFit {
  /** "unchanged" | "context" (a smaller -c) | "layers" (-fitc and fewer layers; a MoE: its experts in system RAM, estimated from a config's sizes when there is no GGUF) | "failed" (-ngl given) | "not_predicted" (not reached by current inputs). */
  outcome: string;
  /** Free device memory at start (usable minus the runtime; several GPUs: summed, like used_bytes) and the -fitt margin (per device). */
  free_bytes: number; target_bytes: number;
  /** Device use with the asked (or default) -c and -ngl. */
  projected_bytes: number;
  /** Cells after fitting (all sequences), per sequence, and -ngl (n_layer + 1 = all). */
  n_ctx: number; context: number; n_gpu_layers: number;
  /** Of those, MoE slots --fit marks "overflowing" (FFN tensors in system RAM), the output slot (no experts) included as llama.cpp counts it. */
  overflow_layers: number;
  /** Several GPUs: slots per device after fitting (-ts), the last device holding the output layer; [] otherwise. */
  device_layers: number[];
  /** Several GPUs: of device_layers, the MoE slots with FFN tensors in system RAM or on the next GPU. */
  device_overflow_layers: number[];
  /** Several GPUs: each one's free memory at start and its use after fitting; [] otherwise. */
  device_free_bytes: number[]; device_used_bytes: number[];
  used_bytes: number;
  /** Server slots the cells serve, and whether they share one unified cache (fit_default from b6925: 4, true). */
  slots: number; kv_unified: boolean;
  /** "-c N -ngl M [-ot PATTERN=CPU]": the same choice made explicit. */
  flags: string;
  /** What llama-server prints while fitting. */
  log_lines: string[];
}

/** `kvbudget budget --json`: everything the page shows for these settings. */
export interface Answer {
  /** As asked. */
  inputs: Required<BudgetInputs>;
  /** The page's headline numbers by their data-metric names; null where the engine refused. */
  metrics: {
    'kv-bytes-per-token': number; 'kv-bytes-total': number;
    'weights-bytes': number | null; 'total-bytes': number | null; 'max-context': number | null;
    'max-context-physical': number | null; 'max-concurrency': number | null;
  };
  budget: Budget | null;
  /** The engine refusing this model at these settings (the KV numbers still stand). */
  refusal: { code: string; message: string; detail: Message | null } | null;
  /** All GPUs' memory, for the chart's line. */
  chart_capacity_bytes: number;
  /** The RoPE scaling the model card documents (Qwen3: YaRN x4 from 32,768), null when none. */
  rope_offer: RopeScaling | null;
  /** When the answer is no (or not all on the GPU) and other settings of the same GPUs would put it all there:
   *  an 8-bit KV cache, expert parallelism, fewer TP ranks times pipeline stages. */
  advice: Message | null;
  /** The inputs that advice was computed with (null without one): what taking it sets. */
  advice_inputs: BudgetInputs | null;
  kv: KvReport;
}

export interface Model {
  readonly handle: number;
  readonly spec: ModelSpec;
  /** Throws KvbudgetError when the inputs themselves are refused. */
  compute(input?: BudgetInputs): Answer;
  /** Frees the parsed model in the module. */
  release(): void;
}

export interface GpuInfo {
  id: string; name: string; vendor: string; memory_bytes: number; total_bytes: number;
  /** The maker's figure ("24 GB"), to label the card as it is sold; memory_bytes is its binary size. */
  marketed_gb: number;
  bandwidth_bytes_per_s: number; unified_memory: boolean;
}

/** What the page builds its controls from, constant for a module. */
export interface Catalog {
  /** budget_input_limits(): the same bounds validate() refuses with. */
  limits: Record<string, { min: number; max: number; flag: string }>;
  kv_types: Record<Engine, string[]>;
  gpus: GpuInfo[];
  weight_formats: string[];
  /** Every code the core can emit, with its English template. */
  messages: { code: string; english: string }[];
  /** sim_input_limits(): the simulator's bounds. */
  sim_limits: Record<string, { min: number; max: number; flag: string }>;
  /** The block sizes vLLM's --block-size takes (src/sim/session.cpp sim_block_sizes): the page's list. */
  sim_block_sizes: number[];
}

export type GgufRead =
  | { status: 'need_more'; need_total: number }
  | { status: 'ok'; header: number; header_bytes: number; tensor_bytes: number; split_count: number; split_no: number };

export interface Kvbudget {
  /** Parses config.json text; `name` (the Hub id) appears in error messages. `quant`: the checkpoint's
   *  hf_quant_config.json text, read as vLLM reads it when config.json has no quantization_config. */
  parseConfig(text: string, name?: string, quant?: string): Model;
  /** A GGUF header from a prefix of the file; throws KvbudgetError (bad_gguf, truncated_gguf, not_gguf, ...).
   *  Only in the whole module (kvbudget.js): the calculator module (kvbudget-calc.js) has no GGUF reader. */
  readGguf(bytes: Uint8Array, name?: string, fileSize?: number): GgufRead;
  /** The model of one GGUF file or of every shard (header ids in order); the headers are released. */
  ggufModel(headerIds: number | number[], name?: string): Model;
  kvTypeNames(engine: Engine): string[];
  /** "24GiB", "80GB", "512MiB", bytes; as the CLI parses sizes. */
  parseSize(text: string): number;
  /** "131072", "32,768", "128K" (= 131,072), "1M" (= 1,048,576); as the CLI parses --max-model-len. */
  parseContext(text: string): number;
  formatBytes(n: number): string;
  /** The catalog id of a GPU named as `kvbudget budget --gpu` takes it ("h100" -> "h100-sxm",
   *  "RTX 4090" and "4090" -> "rtx-4090"); "" when the catalog has none by that name. */
  findGpu(name: string): string;
  catalog(): Catalog;
  /** Takes `catalog` (what catalog() returned from the same module bytes, e.g. the build's in the
   *  page, `messages` left out) as catalog()'s answer instead of asking the module. */
  useCatalog(catalog: Catalog | Omit<Catalog, 'messages'>): void;
  /** Prepares a paging simulation of `model` (one run per policy); throws KvbudgetError on bad input.
   *  Only in the whole module (kvbudget.js); the calculator module (kvbudget-calc.js) has no simulator. */
  /** traceReader: the trace CSV read in pieces instead of input.trace: (at, n) gives at most n bytes from byte `at` (empty at the end). */
  simulate(model: Model, input?: SimInputs, traceReader?: ((at: number, n: number) => Uint8Array | null) | null): Simulation;
  /** Which bundled config an engine log names: the model as the log names it, and the id among
   *  `catalogIds` it matches ("" for none). Only in the whole module (kvbudget.js). */
  checkLogModel(text: string, catalogIds: string[]): { model: string; catalog_id: string };
  /** `kvbudget check LOG --json` for the same log and config, byte for byte: the report, or
   *  {error} when the paste is not a log kvbudget can read. Only in the whole module. */
  checkLog(text: string, config?: CheckConfig | null): CheckReport | CheckRefusal;
  /** `kvbudget lab RUNS --config CONFIG --json` for the same runs, config and settings, byte for
   *  byte: the table, or {error} for runs or a config it refuses. Only in the whole module. */
  labTable(text: string, config: { text: string; name: string; quant?: string }, settings?: LabSettings): LabReport | CheckRefusal;
}

// ---------- kvbudget check (issue 12) ----------
// src/check/check.h, JSON by src/report/check_json.cpp.

export interface CheckConfig {
  /** config.json text. */
  text: string;
  /** Its name: the catalog id ("org/name") or a file name. */
  name: string;
  /** The checkpoint's hf_quant_config.json text, when it has one. */
  quant?: string;
  /** Where it came from: "catalog" (the page's bundled copy), "page" (the model the page shows), "argument". */
  source: string;
}

export interface CheckLine {
  /** 1-based line in the paste. */
  number: number;
  /** vllm_tokens, vllm_concurrency, vllm_gpu_blocks, vllm_not_enough, ..., llama_kv_size, llama_iswa_create, llama_recurrent_size. */
  kind: string;
  /** As the engine printed it (timestamps and prefixes cut). */
  printed: string;
  /** kvbudget's line for the same settings; "" when none. */
  predicted: string;
  match: boolean;
  /** Why they differ, or which wording/assumption made them agree; null when identical. */
  cause: Message | null;
  /** Further causes needed together with `cause`. */
  more_causes: Message[];
  /** (printed - predicted) / predicted of the first differing number, two decimals; null when none. */
  deviation_percent: number | null;
}

export interface CheckReport {
  engine: 'vllm' | 'llamacpp';
  /** "0.10.1", "b6699"; "" when the log does not say. */
  version: string;
  /** The model as the log names it. */
  model: string;
  /** Which config was used: a catalog id, a file name, or "log" (llama.cpp print_info). */
  config: string;
  /** "argument", "catalog", "log", "page" (the page's own model), or "" (none found). */
  config_source: string;
  /** What the engine said about its settings, in its own words. */
  settings: Record<string, string>;
  lines: CheckLine[];
  notes: Message[];
  matched: number;
  explained: number;
  unexplained: number;
}

export interface CheckRefusal {
  /** check_empty, check_too_large, check_binary, check_markup_only, check_not_engine_log, check_truncated. */
  error: { code: string; message: string; detail: Message | null };
}

// ---------- kvbudget lab (issue 12) ----------
// src/check/lab.h, JSON by src/report/lab_json.cpp.

export interface LabSettings {
  /** llamacpp (default) or transformers; vllm is refused (its pool does not follow the context). */
  engine?: string;
  /** rss, footprint, nvidia-smi, memory_allocated, max_memory_allocated, memory_reserved, max_memory_reserved; "" = as the runs name it. */
  measure?: string;
  type_k?: string;
  type_v?: string;
  n_seq_max?: number;
  kv_unified?: boolean;
  swa_full?: boolean;
  /** transformers: the cache dtype ("" = the config's). */
  dtype?: string;
}

export interface LabRow {
  /** 1-based line of the paste. */
  line: number;
  context: number;
  measured_bytes: number;
  /** The engine's KV cache (and recurrent state) at this context. */
  formula_kv_bytes: number;
  /** Growth since the previous row; null on the first. */
  increment_bytes: number | null;
  formula_increment_bytes: number | null;
  /** (increment - formula increment) / formula increment, two decimals. */
  deviation_percent: number | null;
}

export interface LabReport {
  engine: 'llamacpp' | 'transformers';
  model: string;
  /** A measure id: rss, footprint, nvidia_smi, torch_allocated, torch_max_allocated, torch_reserved, torch_max_reserved. */
  measure: string;
  settings: Record<string, string>;
  rows: LabRow[];
  fit: {
    /** Least squares over the rows, two decimals. */
    slope_bytes_per_token: number | null;
    /** The fixed part: weights and runtime. */
    intercept_bytes: number | null;
    formula_bytes_per_token: number | null;
    /** null when the fitted slope is not positive. */
    deviation_percent: number | null;
  };
  baseline_bytes: number | null;
  weights_bytes: number | null;
  /** intercept - weights. */
  runtime_bytes: number | null;
  notes: Message[];
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
  gpu_memory_utilization?: number; // default 0 = vLLM's (the newest release's 0.92)
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
  /** About the workload as read: sim_trace_unsorted (a trace out of time order, sorted). */
  notes: Message[];
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

/** A figure with no sample to measure it: null, never 0 (sim::kNotMeasured). */
export type SimMeasure = number | null;

/** One policy's summary. Fractions are time-weighted shares of the KV capacity. Null where nothing was
 *  measured: latencies and throughput when no request finished (TPOT: none with 2 output tokens), the
 *  *_of_used shares when no memory was ever in use, the time-weighted figures when no time passed. */
export interface SimSummary {
  policy: SimPolicy;
  requests: number; finished: number; refused: number; truncated: number;
  /** Of the refused: those that needed more KV slots than the pool holds under this policy's reservation. */
  refused_no_room: number;
  preemptions: number; swapped_out: number; swap_fallbacks: number; recomputed_tokens: number; steps: number;
  makespan_s: SimMeasure; capacity_tokens: number; num_blocks: number;
  token_states_fraction: SimMeasure; reserved_fraction: SimMeasure; internal_fragmentation_fraction: SimMeasure;
  external_fragmentation_fraction: SimMeasure; cached_fraction: SimMeasure; free_fraction: SimMeasure; null_block_fraction: SimMeasure;
  token_states_of_used_fraction: SimMeasure; reserved_of_used_fraction: SimMeasure;
  internal_fragmentation_of_used_fraction: SimMeasure; external_fragmentation_of_used_fraction: SimMeasure;
  mean_running: SimMeasure; max_running: number; mean_waiting: SimMeasure; max_waiting: number;
  sharing_saved_fraction: SimMeasure; max_blocks_saved: number; cow_copies: number;
  prefix_hit_tokens: number; prefix_query_tokens: number;
  prompt_tokens: number; generated_tokens: number; throughput_tokens_per_s: SimMeasure; requests_per_s: SimMeasure;
  ttft_mean_s: SimMeasure; ttft_p50_s: SimMeasure; ttft_p90_s: SimMeasure; ttft_p99_s: SimMeasure;
  tpot_mean_s: SimMeasure; tpot_p50_s: SimMeasure; tpot_p90_s: SimMeasure; tpot_p99_s: SimMeasure;
  e2e_mean_s: SimMeasure; e2e_p50_s: SimMeasure; e2e_p90_s: SimMeasure; e2e_p99_s: SimMeasure;
  normalized_latency_s: SimMeasure;
  /** The first and the last quarter of the requests by arrival (at least one each): how many finished,
   *  their mean arrival and mean time to first token (null when none of that quarter finished); requests
   *  waiting when the last one arrived (sim/conclusions.cpp reads an overload from these). */
  early_finished: number; late_finished: number; early_arrival_mean_s: SimMeasure; late_arrival_mean_s: SimMeasure;
  early_ttft_mean_s: SimMeasure; late_ttft_mean_s: SimMeasure; waiting_at_last_arrival: number;
}

/** SimReport: `kvbudget simulate --json`, byte for byte. */
export interface SimReport extends SimRunInfo {
  done: boolean;
  policies: SimSummary[];
  /** What the run found, once done (sim/conclusions.h): sim_most_served or sim_served_alike (none when no policy finished a request), per policy sim_policy_waste, or sim_served_none / sim_served_none_no_room, and sim_policy_refused, then sim_why, sim_overload. */
  conclusions: Message[];
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
  owner?: number[] | Int32Array;
  /** Paged: [block, refcount, ...] for blocks held by more than one sequence. */
  shared?: number[] | Int32Array;
  /** Paged: [block, tokens, ...] for held blocks not full. */
  partial?: number[] | Int32Array;
  /** Contiguous: [request, seq, offset, allocated, reserved, length, stored] per region, by offset. */
  regions?: number[][];
}

export interface SimResult {
  summary: SimReport;
  /** One per policy, in summary.policies' order (unless turned off). */
  series?: SimSeries[];
  snapshots?: SimSnapshot[][];
}

/**
 * The block maps in the packed form of src/report/sim_json.h (sim_snapshots_packed):
 * the numbers of SimResult.snapshots in three flat arrays that own their buffers, so a
 * Web Worker transfers them instead of copying millions of numbers.
 */
export interface SimPackedSnapshots {
  f64: Float64Array;
  i32: Int32Array;
  u16: Uint16Array;
}

/** A SimSnapshot read from the packed form: a paged map's owners as a table and an index per block instead of runs. */
export interface SimUnpackedSnapshot {
  step: number; time_s: number; block_size: number; capacity_tokens: number;
  num_blocks: number;
  /** Paged: each owner of the map once (request id, -1 free, -2 free but cached, -3 null block); every block's owner when owner_index is null. */
  owners?: Int32Array;
  /** Paged: each block's position in owners; null when the map has more owners than a Uint16 indexes. */
  owner_index?: Uint16Array | null;
  shared?: Int32Array;
  partial?: Int32Array;
  regions?: number[][];
}

/** SimPackedSnapshots read back, per policy, per snapshot; views of its arrays, no copies. */
export function unpackSnapshots(packed: SimPackedSnapshots): SimUnpackedSnapshot[][];
/** An unpacked paged map's owners as SimSnapshot.owner's runs [owner, run, ...]. */
export function ownerRuns(snapshot: SimUnpackedSnapshot): number[];

export interface Simulation {
  readonly id: number;
  readonly info: SimRunInfo;
  /** Runs at most maxSteps scheduler steps (default 20000), continuing with the next policy when one ends. */
  run(maxSteps?: number): SimProgress;
  /** Summary so far (final once done), series and snapshots unless turned off. */
  result(options?: { series?: boolean; snapshots?: boolean }): SimResult;
  /** The snapshots kept so far in the packed form (read them with unpackSnapshots). */
  packedSnapshots(): SimPackedSnapshots;
  release(): void;
}
