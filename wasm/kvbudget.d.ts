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
  catalog(): { gpus: GpuInfo[]; weightFormats: { id: string; label: string }[] };
}
