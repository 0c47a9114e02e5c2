// GGUF headers for the fake hub, built in memory (no binary in the repo), like
// tests/unit/gguf_builder.h: metadata and the tensor list llama.cpp's loader creates,
// tensor offsets as gguf.cpp lays them out. Only the header is materialised; the file's
// size is the header padded to 32 bytes plus every tensor's bytes.

const T = { u32: 4, f32: 6, bool: 7, str: 8, arr: 9, u64: 10 };
// ggml type id -> [block values, block bytes] (ggml.c type_traits)
const GGML = { f32: [0, 1, 4], f16: [1, 1, 2], q8_0: [8, 32, 34], q4_K: [12, 256, 144], q6_K: [14, 256, 210] };

class Writer {
  constructor() {
    this.parts = [];
    this.length = 0;
  }
  bytes(b) {
    this.parts.push(b);
    this.length += b.byteLength;
  }
  u32(v) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.bytes(b);
  }
  u64(v) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.bytes(b);
  }
  f32(v) {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.bytes(b);
  }
  str(s) {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.byteLength);
    this.bytes(b);
  }
  buffer() {
    return Buffer.concat(this.parts);
  }
}

// kv: [key, type, value]; type 'strs' = string array of n synthetic tokens, 'f32s' / 'i32s' arrays.
export function buildGguf(kv, tensors) {
  const w = new Writer();
  w.bytes(Buffer.from('GGUF'));
  w.u32(3);
  w.u64(tensors.length);
  w.u64(kv.length);
  for (const [key, type, value] of kv) {
    w.str(key);
    if (type === 'strs') {
      w.u32(T.arr);
      w.u32(T.str);
      w.u64(value);
      for (let i = 0; i < value; i++) w.str('t' + i);
    } else if (type === 'f32s' || type === 'i32s') {
      w.u32(T.arr);
      w.u32(type === 'f32s' ? T.f32 : 5);
      w.u64(value);
      const b = Buffer.alloc(4 * value); // zeros: scores and token types
      w.bytes(b);
    } else {
      w.u32(T[type]);
      if (type === 'u32') w.u32(value);
      else if (type === 'u64') w.u64(value);
      else if (type === 'f32') w.f32(value);
      else if (type === 'bool') w.bytes(Buffer.from([value ? 1 : 0]));
      else if (type === 'str') w.str(value);
    }
  }
  let offset = 0;
  let dataBytes = 0;
  for (const [name, type, ne] of tensors) {
    const [id, block, size] = GGML[type];
    w.str(name);
    w.u32(ne.length);
    for (const n of ne) w.u64(n);
    w.u32(id);
    w.u64(offset);
    const rows = ne.slice(1).reduce((a, b) => a * b, 1);
    const nbytes = (ne[0] / block) * size * rows;
    offset += Math.ceil(nbytes / 32) * 32;
    dataBytes = offset;
  }
  const header = w.buffer();
  const dataStart = Math.ceil(header.byteLength / 32) * 32;
  return { header, size: dataStart + dataBytes };
}

// Qwen3-8B Q4_K_M as Qwen/Qwen3-8B-GGUF publishes it: 36 blocks, GQA 32/8 heads of 128,
// vocabulary 151,936, q4_K with q6_K for the output, for attn_v and ffn_down of the layers
// llama.cpp's use_more_bits() picks (the first and last eighth, and every third between).
export function qwen3_8b_q4km() {
  const n = 36;
  const vocab = 151936;
  const kv = [
    ['general.architecture', 'str', 'qwen3'],
    ['general.name', 'str', 'Qwen3 8B'],
    ['general.file_type', 'u32', 15],
    ['qwen3.block_count', 'u32', n],
    ['qwen3.context_length', 'u32', 40960],
    ['qwen3.embedding_length', 'u32', 4096],
    ['qwen3.feed_forward_length', 'u32', 12288],
    ['qwen3.attention.head_count', 'u32', 32],
    ['qwen3.attention.head_count_kv', 'u32', 8],
    ['qwen3.rope.freq_base', 'f32', 1000000],
    ['qwen3.attention.layer_norm_rms_epsilon', 'f32', 1e-6],
    ['qwen3.attention.key_length', 'u32', 128],
    ['qwen3.attention.value_length', 'u32', 128],
    ['tokenizer.ggml.model', 'str', 'gpt2'],
    ['tokenizer.ggml.pre', 'str', 'qwen2'],
    ['tokenizer.ggml.tokens', 'strs', vocab],
    ['tokenizer.ggml.token_type', 'i32s', vocab],
    ['tokenizer.ggml.eos_token_id', 'u32', 151645],
    ['general.quantization_version', 'u32', 2],
  ];
  const more = (i) => i < n / 8 || i >= (7 * n) / 8 || (i - Math.floor(n / 8)) % 3 === 2;
  const t = [['token_embd.weight', 'q4_K', [4096, vocab]]];
  for (let i = 0; i < n; i++) {
    const b = `blk.${i}.`;
    t.push([b + 'attn_norm.weight', 'f32', [4096]]);
    t.push([b + 'attn_q.weight', 'q4_K', [4096, 4096]]);
    t.push([b + 'attn_k.weight', 'q4_K', [4096, 1024]]);
    t.push([b + 'attn_v.weight', more(i) ? 'q6_K' : 'q4_K', [4096, 1024]]);
    t.push([b + 'attn_output.weight', 'q4_K', [4096, 4096]]);
    t.push([b + 'attn_q_norm.weight', 'f32', [128]]);
    t.push([b + 'attn_k_norm.weight', 'f32', [128]]);
    t.push([b + 'ffn_norm.weight', 'f32', [4096]]);
    t.push([b + 'ffn_gate.weight', 'q4_K', [4096, 12288]]);
    t.push([b + 'ffn_up.weight', 'q4_K', [4096, 12288]]);
    t.push([b + 'ffn_down.weight', more(i) ? 'q6_K' : 'q4_K', [12288, 4096]]);
  }
  t.push(['output_norm.weight', 'f32', [4096]]);
  t.push(['output.weight', 'q6_K', [4096, vocab]]);
  return buildGguf(kv, t);
}
