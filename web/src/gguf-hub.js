// GGUF repos on the Hub: the repo's .gguf files as a quant picker, and the chosen file's
// header read with HTTP Range requests that grow until the core has all of it. The core
// parses (kvbudget.readGguf says how many bytes in total it needs); this file only moves
// bytes. Like @huggingface/gguf, a first range of a few hundred KiB is asked for and grown
// on demand: tokenizer arrays make some headers several MiB long.
import { HubError, statusError } from './hub.js';
import { validFile } from './hubid.js';

export const FIRST_RANGE = 512 * 1024;
export const MAX_HEADER_BYTES = 64 * 1024 * 1024; // far above any real header (a 256k vocabulary is ~10 MiB)

const SHARD = /-(\d{5})-of-(\d{5})\.gguf$/i;
// The quant tag at the end of a file name, as llama-server -hf / ollama match it.
const QUANT_TAG = /(?:^|[-._])((?:UD-)?(?:I?Q\d(?:_[A-Z0-9]+)*|BF16|F16|F32|MXFP4(?:_MOE)?|TQ\d_\d))$/i;

// "Qwen3-8B-Q4_K_M.gguf" -> "Q4_K_M"; "Q4_K_M/x-Q4_K_M-00001-of-00002.gguf" -> "Q4_K_M".
export function quantOf(path) {
  const base = String(path).split('/').pop().replace(SHARD, '.gguf').replace(/\.gguf$/i, '');
  const m = base.match(QUANT_TAG);
  return m ? m[1].toUpperCase() : base;
}

// The repo's GGUF files from /api/models/{id}?blobs=true siblings ({rfilename, size, lfs}),
// split files grouped as one choice: [{quant, path, shards: [path...], size}] by size.
// Projector files (mmproj) are llama.cpp's --mmproj, not a model.
export function ggufChoices(info) {
  const groups = new Map();
  for (const s of Array.isArray(info?.siblings) ? info.siblings : []) {
    const path = String(s?.rfilename || '');
    if (!/\.gguf$/i.test(path) || !validFile(path)) continue;
    if (/(^|\/)mmproj/i.test(path)) continue;
    const size = Number.isFinite(s.size) ? s.size : Number.isFinite(s.lfs?.size) ? s.lfs.size : 0;
    const shard = path.match(SHARD);
    const key = shard ? path.replace(SHARD, '') : path;
    let g = groups.get(key);
    if (!g) {
      g = { quant: quantOf(path), path: '', shards: [], size: 0, count: shard ? Number(shard[2]) : 1 };
      groups.set(key, g);
    }
    g.shards.push(path);
    g.size += size;
  }
  const out = [];
  for (const g of groups.values()) {
    g.shards.sort();
    g.path = g.shards[0];
    // A split file missing shards is not offered (llama.cpp could not load it either).
    if (g.shards.length !== g.count) continue;
    out.push(g);
  }
  out.sort((a, b) => a.size - b.size || a.path.localeCompare(b.path));
  return out;
}

// The tag asked for (case-insensitive), else the file linked, else Q4_K_M (llama-server's
// own default for -hf without a tag), else the smallest file.
export function pickChoice(choices, { quant = '', file = '' } = {}) {
  if (!choices.length) return null;
  if (file) {
    const f = choices.find((c) => c.shards.includes(file));
    if (f) return f;
  }
  const want = (quant || 'Q4_K_M').toUpperCase();
  return choices.find((c) => c.quant === want) || (quant ? null : choices[0]);
}

function resolveUrl(hub, id, revision, path) {
  const encId = id.split('/').map(encodeURIComponent).join('/');
  return `${hub.baseUrl}/${encId}/resolve/${encodeURIComponent(revision || 'main')}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

// Fetch with the hub's deadline; `signal` cancels.
async function timedFetch(hub, url, headers, signal) {
  const ctrl = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    ctrl.abort();
  }, hub.timeoutMs);
  const onAbort = () => ctrl.abort();
  signal?.addEventListener('abort', onAbort);
  const done = () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  };
  const fail = () => {
    done();
    if (timedOut) return new HubError('timeout', { url, ms: hub.timeoutMs });
    if (signal?.aborted) return new HubError('cancelled', { url });
    return new HubError('network', { url });
  };
  try {
    const res = await hub.fetch(url, { headers, signal: ctrl.signal, credentials: 'omit', redirect: 'follow' });
    return { res, done, fail };
  } catch {
    throw fail();
  }
}

// The bytes read so far, in a buffer that doubles (a 10 MiB header arrives in many chunks).
class Bytes {
  constructor() {
    this.buf = new Uint8Array(64 * 1024);
    this.byteLength = 0;
  }
  push(chunk) {
    if (this.byteLength + chunk.byteLength > this.buf.byteLength) {
      let cap = this.buf.byteLength;
      while (cap < this.byteLength + chunk.byteLength) cap *= 2;
      const next = new Uint8Array(cap);
      next.set(this.buf.subarray(0, this.byteLength));
      this.buf = next;
    }
    this.buf.set(chunk, this.byteLength);
    this.byteLength += chunk.byteLength;
  }
  view() {
    return this.buf.subarray(0, this.byteLength);
  }
}

// Reads one file's header: asks for FIRST_RANGE bytes, then for as many as the core says it
// needs, until it parses. A server that ignores Range (200 with the whole file) is read as a
// stream only as far as needed and then cancelled. Returns readGguf's {status: 'ok', header, ...}.
export async function readGgufHeader(hub, core, { id, revision, path, size = 0, signal, onProgress } = {}) {
  const url = resolveUrl(hub, id, revision, path);
  const name = path.split('/').pop();
  const buf = new Bytes();
  let want = size > 0 ? Math.min(FIRST_RANGE, size) : FIRST_RANGE;
  let stream = null; // {reader, done, fail} of a 200 answer, kept while the header grows
  let ended = false; // the file (or the stream) has no more bytes
  const requests = { count: 0, ignoredRange: false };
  try {
    for (;;) {
      while (buf.byteLength < want && !ended) {
        if (!stream) {
          requests.count++;
          const headers = { ...hub.headers(), Range: `bytes=${buf.byteLength}-${want - 1}` };
          const { res, done, fail } = await timedFetch(hub, url, headers, signal);
          if (res.status === 416) {
            done();
            ended = true;
            break;
          }
          if (!res.ok) {
            done();
            throw statusError(res.status, url, res.headers);
          }
          const reader = res.body?.getReader?.();
          if (res.status === 200) {
            // Range ignored: the body is the whole file from byte 0.
            requests.ignoredRange = true;
            if (!reader) {
              done();
              throw new HubError('network', { url });
            }
            stream = { reader, done, fail, skip: buf.byteLength };
          } else {
            // 206: exactly the asked slice (a longer body is cut off).
            const limit = want - buf.byteLength;
            let got = 0;
            try {
              if (reader) {
                while (got < limit) {
                  const { done: end, value } = await reader.read();
                  if (end) break;
                  const part = value.subarray(0, limit - got);
                  buf.push(part);
                  got += part.byteLength;
                }
                reader.cancel().catch(() => {});
              } else {
                const all = new Uint8Array(await res.arrayBuffer()).subarray(0, limit);
                buf.push(all);
                got = all.byteLength;
              }
            } catch {
              throw fail();
            }
            done();
            if (got < limit) ended = true;
            onProgress?.(buf.byteLength);
            continue;
          }
        }
        let chunk;
        try {
          chunk = await stream.reader.read();
        } catch {
          throw stream.fail();
        }
        if (chunk.done) {
          ended = true;
          break;
        }
        let v = chunk.value;
        if (stream.skip > 0) {
          const drop = Math.min(stream.skip, v.byteLength);
          stream.skip -= drop;
          v = v.subarray(drop);
        }
        buf.push(v);
        onProgress?.(buf.byteLength);
      }
      // The core refuses a header that would run past the file's end, so a short read ends here.
      const fileSize = ended ? buf.byteLength : size > 0 ? size : -1;
      const r = (await core).readGguf(buf.view(), name, fileSize);
      // The header's own bytes are kept: the simulator's worker reads them again in its own
      // copy of the core (sim-worker.js), so both answer from the same file.
      if (r.status === 'ok') return { ...r, requests, bytes: buf.view().slice(0, r.header_bytes), name, fileSize };
      if (r.need_total > MAX_HEADER_BYTES) throw new HubError('tooLarge', { url, bytes: r.need_total });
      if (ended) {
        // Should not happen (the core was told the file's size); say the file is short.
        throw new HubError('network', { url });
      }
      want = Math.max(r.need_total, Math.min(buf.byteLength * 2, MAX_HEADER_BYTES));
      if (size > 0) want = Math.min(want, size);
    }
  } finally {
    if (stream) {
      stream.reader.cancel().catch(() => {});
      stream.done();
    }
  }
}

// The model a GGUF repo was converted from, as its card names it (cardData.base_model: a
// string or a list; the first that is an org/name other than the repo itself), or ''.
export function baseModelOf(info, id) {
  const b = info?.cardData?.base_model;
  const list = Array.isArray(b) ? b : b ? [b] : [];
  return list.map(String).find((x) => /^[\w.-]+\/[\w.-]+$/.test(x) && x !== id) || '';
}

// The repo's model info with file sizes.
export async function fetchGgufInfo(hub, id, revision, { signal } = {}) {
  const encId = id.split('/').map(encodeURIComponent).join('/');
  const path = `/api/models/${encId}` + (revision ? `/revision/${encodeURIComponent(revision)}` : '') + '?blobs=true';
  const { json } = await hub.getJson(path, { signal, limit: 8 * 1024 * 1024 });
  return json;
}

// One GGUF model from a repo: the choices, the chosen one, and the core's Model built from
// its header(s). `want`: {quant, file} from the reference the user gave. `core` may be a
// promise of it: the whole module loads while the listing and the header are fetched.
export async function loadGgufModel(hub, core, id, revision, want, { signal, onProgress } = {}) {
  const info = await fetchGgufInfo(hub, id, revision, { signal });
  const choices = ggufChoices(info);
  if (!choices.length) throw new HubError('noGguf', {});
  const choice = pickChoice(choices, want);
  if (!choice) throw new HubError('noQuant', { quant: want.quant, quants: choices.map((c) => c.quant).join(', ') });
  const ids = [];
  const headers = [];
  let requests = 0;
  let ignoredRange = false;
  for (const path of choice.shards) {
    let r;
    try {
      r = await readGgufHeader(hub, core, {
        id,
        revision,
        path,
        size: choice.shards.length === 1 ? choice.size : 0,
        signal,
        onProgress: (n) => onProgress?.(n, path),
      });
    } catch (e) {
      // The repo holds GGUF files but this one's header cannot be had: say that, not a bare 404.
      // The page can still answer from the base model the card names (baseModelOf), with the
      // file's size beside it: main.js loadGguf.
      if (e instanceof HubError && ['notFound', 'network', 'server', 'notJson', 'timeout'].includes(e.code)) {
        throw new HubError('gguf', { ...e.detail, file: path, cause: e.code, base: baseModelOf(info, id), choices, choice });
      }
      throw e;
    }
    ids.push(r.header);
    headers.push({ bytes: r.bytes, name: r.name, fileSize: r.fileSize });
    requests += r.requests.count;
    ignoredRange = ignoredRange || r.requests.ignoredRange;
  }
  // Named as the CLI names a local file: without .gguf and the first shard's -00001-of-0000N.
  const modelName = choice.path.split('/').pop().replace(/\.gguf$/i, '').replace(/-00001-of-\d{5}$/, '');
  const model = (await core).ggufModel(ids, modelName);
  return { model, choices, choice, requests, ignoredRange, headers, modelName };
}
