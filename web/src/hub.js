// Talks to the Hugging Face Hub (or the hub named by the same-origin
// kvbudget.config.json). Every failure becomes a HubError with a stable code;
// the UI maps codes to messages in one place (messages.js).

// The CLI's cap too (src/cli/args.cpp): a real config.json is kilobytes, and 8 MiB
// parses well within a second, so no config of any size stalls the page.
export const MAX_CONFIG_BYTES = 8 * 1024 * 1024;
export const DEFAULT_HUB = 'https://huggingface.co';
export const DEFAULT_TIMEOUT_MS = 15000;

export class HubError extends Error {
  constructor(code, detail = {}) {
    super(code);
    this.name = 'HubError';
    this.code = code; // noGguf | noQuant | gated | notFound | rateLimited | server | network | timeout | notJson | tooLarge | gguf | noConfig | cancelled
    this.detail = detail; // {status, url, ...}
  }
}

// Reads a body as text while counting bytes, giving up past `limit` (a 10 MB
// answer must not be buffered whole) and reporting progress.
async function readLimited(res, limit, onProgress) {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) throw new HubError('tooLarge', { bytes: declared });
  if (!res.body || !res.body.getReader) {
    const text = await res.text();
    if (text.length > limit) throw new HubError('tooLarge', { bytes: text.length });
    return text;
  }
  const reader = res.body.getReader();
  const chunks = [];
  let received = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > limit) {
      reader.cancel().catch(() => {});
      throw new HubError('tooLarge', { bytes: received });
    }
    chunks.push(value);
    onProgress?.(received, declared || 0);
  }
  const all = new Uint8Array(received);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.byteLength;
  }
  return new TextDecoder('utf-8').decode(all);
}

export function statusError(status, url, headers) {
  // The Hub answers 401 both for gated repos and, to hide private ones, for repos that
  // do not exist; its X-Error-Code header tells them apart when CORS exposes it.
  const code = headers?.get?.('x-error-code') || '';
  if (code === 'RepoNotFound' || code === 'RevisionNotFound' || code === 'EntryNotFound') return new HubError('notFound', { status, url });
  if (status === 401 || status === 403) return new HubError('gated', { status, url });
  if (status === 404) return new HubError('notFound', { status, url });
  if (status === 429) return new HubError('rateLimited', { status, url });
  if (status >= 500) return new HubError('server', { status, url });
  return new HubError('server', { status, url });
}

export class Hub {
  constructor({ baseUrl = DEFAULT_HUB, timeoutMs = DEFAULT_TIMEOUT_MS, fetchImpl } = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, '');
    this.timeoutMs = timeoutMs;
    this.fetch = fetchImpl || globalThis.fetch.bind(globalThis);
    this.token = ''; // memory only, for this tab; never stored, never in the URL
  }

  headers() {
    return this.token ? { Authorization: 'Bearer ' + this.token } : {};
  }

  // GET with one shared deadline for headers and body. `signal` lets the UI cancel.
  async getText(path, { signal, onProgress, limit = MAX_CONFIG_BYTES } = {}) {
    const url = this.baseUrl + path;
    const ctrl = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      ctrl.abort();
    }, this.timeoutMs);
    const onAbort = () => ctrl.abort();
    signal?.addEventListener('abort', onAbort);
    try {
      let res;
      try {
        res = await this.fetch(url, { headers: this.headers(), signal: ctrl.signal, credentials: 'omit', redirect: 'follow' });
      } catch (e) {
        if (timedOut) throw new HubError('timeout', { url, ms: this.timeoutMs });
        if (signal?.aborted) throw new HubError('cancelled', { url });
        throw new HubError('network', { url });
      }
      if (!res.ok) throw statusError(res.status, url, res.headers);
      try {
        return await readLimited(res, limit, onProgress);
      } catch (e) {
        if (e instanceof HubError) throw e;
        if (timedOut) throw new HubError('timeout', { url, ms: this.timeoutMs });
        if (signal?.aborted) throw new HubError('cancelled', { url });
        throw new HubError('network', { url });
      }
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async getJson(path, opts) {
    const text = await this.getText(path, opts);
    try {
      return { text, json: JSON.parse(text) };
    } catch {
      throw new HubError('notJson', { url: this.baseUrl + path });
    }
  }

  // config.json text plus the model-info hints. The info call is best effort:
  // its failure only matters to explain a missing config (gated, GGUF-only).
  async fetchModel(id, revision, { signal, onProgress } = {}) {
    const rev = revision || 'main';
    const encId = id.split('/').map(encodeURIComponent).join('/');
    const configPath = `/${encId}/resolve/${encodeURIComponent(rev)}/config.json`;
    const infoPath = `/api/models/${encId}` + (revision ? `/revision/${encodeURIComponent(rev)}` : '');
    const infoP = this.getJson(infoPath, { signal, limit: MAX_CONFIG_BYTES * 4 }).then(
      (r) => ({ ok: true, info: r.json }),
      (e) => ({ ok: false, error: e }),
    );
    let configText;
    try {
      configText = await this.getText(configPath, { signal, onProgress });
      // Only a coarse check here: real configs may hold Python's NaN / Infinity,
      // which JSON.parse rejects but the core reads; the core reports real syntax errors.
      if (!/^\s*\{/.test(configText)) throw new HubError('notJson', { url: this.baseUrl + configPath });
    } catch (e) {
      if (e instanceof HubError && e.code === 'notFound') {
        const info = await infoP;
        if (info.ok) {
          const files = (info.info.siblings || []).map((s) => String(s.rfilename || ''));
          const gguf = files.some((f) => f.toLowerCase().endsWith('.gguf')) ||
            info.info.library_name === 'gguf' || (info.info.tags || []).includes('gguf');
          throw new HubError(gguf ? 'gguf' : 'noConfig', { url: this.baseUrl + configPath });
        }
      }
      throw e;
    }
    // The hints must not hold the page hostage: wait briefly once the config is in.
    const info = await Promise.race([infoP, new Promise((r) => setTimeout(() => r({ ok: false }), 2000))]);
    const quantText = await this.fetchQuantConfig(encId, rev, info, signal);
    return { configText, quantText, info: info.ok ? summarizeInfo(info.info) : null };
  }

  // hf_quant_config.json, where ModelOpt 0.29 and before kept a checkpoint's quantization; vLLM reads it
  // when config.json has none, and so does the core (parse_config), which decides. Asked for only when the
  // repository lists it, or when its file list did not come (then a 404 means it has none): '' for none.
  async fetchQuantConfig(encId, rev, info, signal) {
    const listed = info.ok && (info.info.siblings || []).some((s) => s?.rfilename === 'hf_quant_config.json');
    if (info.ok && !listed) return '';
    try {
      return await this.getText(`/${encId}/resolve/${encodeURIComponent(rev)}/hf_quant_config.json`, { signal });
    } catch (e) {
      // Listed, it must come (the weights depend on it); unlisted, a failure is taken as its absence.
      if (listed || (e instanceof HubError && e.code === 'cancelled')) throw e;
      return '';
    }
  }
}

// Only the hints the page uses, as plain values (never rendered as HTML).
export function summarizeInfo(info) {
  if (!info || typeof info !== 'object') return null;
  const st = info.safetensors && typeof info.safetensors === 'object' ? info.safetensors : null;
  const byDtype = {};
  if (st && st.parameters && typeof st.parameters === 'object') {
    for (const [k, v] of Object.entries(st.parameters)) if (Number.isFinite(v)) byDtype[String(k)] = v;
  }
  return {
    gated: info.gated === true || info.gated === 'auto' || info.gated === 'manual' ? String(info.gated) : '',
    libraryName: typeof info.library_name === 'string' ? info.library_name : '',
    pipelineTag: typeof info.pipeline_tag === 'string' ? info.pipeline_tag : '',
    parameters: st && Number.isFinite(st.total) ? st.total : 0,
    parametersByDtype: byDtype,
    sha: typeof info.sha === 'string' ? info.sha : '',
  };
}

// The hub base URL comes only from the same-origin kvbudget.config.json, never
// from the page URL. A missing or broken file means the default hub.
export async function loadSiteConfig(fetchImpl = globalThis.fetch.bind(globalThis)) {
  const out = { hubUrl: DEFAULT_HUB, hubTimeoutMs: DEFAULT_TIMEOUT_MS };
  try {
    const res = await fetchImpl('kvbudget.config.json', { credentials: 'same-origin', cache: 'no-cache' });
    if (!res.ok) return out;
    const cfg = await res.json();
    if (cfg && typeof cfg.hubUrl === 'string') {
      const u = new URL(cfg.hubUrl);
      if (u.protocol === 'https:' || u.protocol === 'http:') out.hubUrl = u.origin + u.pathname.replace(/\/+$/, '');
    }
    if (cfg && Number.isFinite(cfg.hubTimeoutMs) && cfg.hubTimeoutMs > 0) out.hubTimeoutMs = cfg.hubTimeoutMs;
  } catch {
    // keep the defaults
  }
  return out;
}
