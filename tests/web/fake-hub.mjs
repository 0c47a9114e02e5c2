// A local stand-in for the Hugging Face Hub: serves the fixture configs under
// their ids and answers the failure cases the page must explain.
//   gated/*   401 (200 with "Authorization: Bearer test-token")    missing/*  404
//   busy/*    429        broken/*  500        slow/*  never answers
//   html/*    200 with an HTML page            huge/*  200 with a 10 MB body
//   gguf/*    no config.json, GGUF files only   xss/*   config whose strings are markup
//   params/*  the Llama-3.1-8B config, and a safetensors total of 9e9 BF16 parameters in the API
//   nosuch/*  401 with X-Error-Code: RepoNotFound (what the Hub says for a missing repo)
//   modelopt/*  Llama-3.1-8B-Instruct's config.json (no quantization_config) with an
//              hf_quant_config.json beside it (ModelOpt FP8 weights and KV), listed in the API
//   any id in `refuse` (an option): 401 without a token, as the Hub answers for a gated
//   repo such as meta-llama/Llama-3.1-70B whose config the page also bundles
// GGUF repos (GGUF_REPOS): model info with .gguf siblings and sizes (?blobs=true), the files
// under /resolve/ with HTTP Range (206), except norange/* which ignores Range and streams the
// whole multi-GB file with 200 (the page must stop reading); `ggufSent` counts the bytes sent
// and the 200 answers whose client went away before their end (`stopped`).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import { qwen3_8b_q4km } from './gguf-fixture.mjs';

// The seed article's file: Qwen/Qwen3-8B-GGUF Q4_K_M, and the same header under other names.
let qwenGguf = null;
function qwen() {
  qwenGguf ??= qwen3_8b_q4km();
  return qwenGguf;
}
export const GGUF_REPOS = {
  'Qwen/Qwen3-8B-GGUF': () => ({ 'Qwen3-8B-Q4_K_M.gguf': qwen(), 'Qwen3-8B-Q8_0.gguf': { ...qwen(), size: 8709518624 } }),
  'unsloth/Qwen3-8B-GGUF': () => ({ 'Qwen3-8B-Q4_K_M.gguf': qwen(), 'Qwen3-8B-UD-Q4_K_XL.gguf': { ...qwen(), size: 5135668544 }, 'mmproj-F16.gguf': qwen() }),
  'norange/Qwen3-8B-GGUF': () => ({ 'Qwen3-8B-Q4_K_M.gguf': qwen() }),
  'empty/Nothing-GGUF': () => ({}),
  // A header cut short: the file ends inside the vocabulary.
  'trunc/Qwen3-8B-GGUF': () => ({ 'Qwen3-8B-Q4_K_M.gguf': { header: qwen().header.subarray(0, 300000), size: 300000 } }),
  'notgguf/Fake-GGUF': () => ({ 'model-Q4_K_M.gguf': { header: Buffer.from('<!doctype html><html>not a model</html>'.padEnd(4096, ' ')), size: 4096 } }),
  'ggated/Qwen3-8B-GGUF': () => ({ 'Qwen3-8B-Q4_K_M.gguf': qwen() }),
  // Listed with its size, but every read of the file fails (500): the page falls back to the
  // card's base model (Qwen/Qwen3-8B).
  'nofile/Qwen3-8B-GGUF': () => ({ 'Qwen3-8B-Q4_K_M.gguf': qwen() }),
};

export const GOOD_TOKEN = 'test-token';
export const XSS = '<img src=x onerror="window.__xss=1">';

export function startFakeHub({ fixturesDir, port = 0, refuse = [] } = {}) {
  const configs = new Map();
  for (const f of fs.readdirSync(fixturesDir)) {
    if (!f.endsWith('.json')) continue;
    const base = f.slice(0, -5);
    const i = base.indexOf('--');
    configs.set(base.slice(0, i) + '/' + base.slice(i + 2), fs.readFileSync(path.join(fixturesDir, f)));
  }
  const llama = configs.get('meta-llama/Llama-3.1-8B');
  const hfQuant = fs.readFileSync(path.join(fixturesDir, '..', 'hf_quant_config', 'modelopt-fp8.json'));
  const xssConfig = JSON.stringify({ ...JSON.parse(llama), architectures: [XSS + 'ForCausalLM'], _name_or_path: XSS });
  const requests = [];
  const hanging = new Set();
  const ggufSent = { bytes: 0, ranges: 0, whole: 0, stopped: 0 };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const p = decodeURIComponent(url.pathname);
    requests.push({ method: req.method, path: p, auth: req.headers.authorization || '', range: req.headers.range || '' });
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization, range', 'access-control-expose-headers': 'content-length, content-range, x-error-code' };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET' }).end();
      return;
    }
    const send = (status, body, type = 'application/json') => {
      res.writeHead(status, { ...cors, 'content-type': type });
      res.end(body);
    };
    if (serveGguf(req, res, p, cors, ggufSent)) return;
    const quantFile = p.match(/^\/([^/]+)\/[^/]+\/resolve\/[^/]+\/hf_quant_config\.json$/);
    if (quantFile) return quantFile[1] === 'modelopt' ? send(200, hfQuant) : send(404, '{"error":"Entry not found"}');
    let m = p.match(/^\/api\/models\/([^/]+\/[^/]+)(?:\/revision\/.*)?$/);
    const isApi = !!m;
    if (!m) m = p.match(/^\/([^/]+\/[^/]+)\/resolve\/[^/]+\/config\.json$/);
    if (!m) return send(404, '{"error":"no route"}');
    const id = m[1];
    const org = id.split('/')[0];

    if (org === 'slow') {
      hanging.add(res); // keep the socket open until the page gives up
      return;
    }
    if ((org === 'gated' || refuse.includes(id)) && req.headers.authorization !== 'Bearer ' + GOOD_TOKEN) return send(401, '{"error":"Access to model is restricted."}');
    if (org === 'missing') return send(404, '{"error":"Repository not found"}');
    if (org === 'nosuch') {
      res.writeHead(401, { ...cors, 'content-type': 'application/json', 'x-error-code': 'RepoNotFound' });
      return res.end('{"error":"Repository Not Found"}');
    }
    if (org === 'busy') return send(429, '{"error":"Too many requests"}');
    if (org === 'broken') return send(500, 'Internal Server Error', 'text/plain');
    if (isApi) {
      if (org === 'gguf') {
        return send(200, JSON.stringify({ id, library_name: 'gguf', tags: ['gguf'], siblings: [{ rfilename: 'README.md' }, { rfilename: 'model-Q4_K_M.gguf' }] }));
      }
      const safetensors = org === 'params' ? { total: 9e9, parameters: { BF16: 9e9 } } : undefined;
      const siblings = [{ rfilename: 'config.json' }, ...(org === 'modelopt' ? [{ rfilename: 'hf_quant_config.json' }] : [])];
      return send(200, JSON.stringify({ id, gated: false, library_name: 'transformers', pipeline_tag: 'text-generation', safetensors, siblings }));
    }
    if (org === 'html') return send(200, '<!doctype html><html><body>Sign in</body></html>', 'text/html');
    if (org === 'huge') {
      res.writeHead(200, { ...cors, 'content-type': 'application/json' });
      const chunk = Buffer.alloc(1024 * 1024, 0x20);
      let n = 0;
      const write = () => {
        while (n < 10) {
          n++;
          if (!res.write(chunk)) return res.once('drain', write);
        }
        res.end();
      };
      res.on('error', () => {});
      write();
      return;
    }
    if (org === 'gguf') return send(404, '{"error":"Entry not found"}');
    if (org === 'xss') return send(200, xssConfig);
    if (org === 'gated' || org === 'params') return send(200, llama);
    if (org === 'modelopt') return send(200, configs.get('meta-llama/Llama-3.1-8B-Instruct'));
    const body = configs.get(id);
    if (!body) return send(404, '{"error":"Repository not found"}');
    return send(200, body);
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const a = server.address();
      resolve({
        url: `http://127.0.0.1:${a.port}`,
        requests,
        ggufSent,
        close: () => {
          for (const r of hanging) r.destroy();
          server.closeAllConnections?.();
          return new Promise((r) => server.close(r));
        },
      });
    });
  });
}

// GGUF repos: true when the request was theirs.
function serveGguf(req, res, p, cors, sent) {
  let m = p.match(/^\/api\/models\/([^/]+\/[^/]+)(?:\/revision\/.*)?$/);
  const api = !!m;
  if (!m) m = p.match(/^\/([^/]+\/[^/]+)\/resolve\/[^/]+\/(.+)$/);
  if (!m || !GGUF_REPOS[m[1]]) return false;
  const id = m[1];
  const send = (status, body, type = 'application/json') => {
    res.writeHead(status, { ...cors, 'content-type': type });
    res.end(body);
  };
  if (id.startsWith('ggated/') && req.headers.authorization !== 'Bearer test-token') {
    send(401, '{"error":"Access to model is restricted."}');
    return true;
  }
  const files = GGUF_REPOS[id]();
  if (api) {
    const siblings = [{ rfilename: '.gitattributes', size: 1570 }, { rfilename: 'README.md', size: 4200 }];
    for (const [name, f] of Object.entries(files)) siblings.push({ rfilename: name, size: f.size, lfs: { size: f.size, sha256: '0'.repeat(64), pointerSize: 135 } });
    send(200, JSON.stringify({ id, library_name: 'gguf', tags: ['gguf'], gguf: { architecture: 'qwen3' }, cardData: { base_model: 'Qwen/Qwen3-8B' }, siblings }));
    return true;
  }
  const f = files[m[2]];
  if (id.startsWith('nofile/') && f) {
    send(500, 'Internal Server Error', 'text/plain');
    return true;
  }
  if (!f) {
    if (m[2] === 'config.json') send(404, '{"error":"Entry not found"}');
    else send(404, '{"error":"Entry not found"}');
    return true;
  }
  // Bytes [a, b] of the virtual file: the header, then zeros.
  const slice = (a, b) => {
    const out = Buffer.alloc(b - a + 1);
    if (a < f.header.length) f.header.copy(out, 0, a, Math.min(b + 1, f.header.length));
    return out;
  };
  const range = /^bytes=(\d+)-(\d*)$/.exec(req.headers.range || '');
  if (range && !id.startsWith('norange/')) {
    const a = Number(range[1]);
    const b = Math.min(range[2] ? Number(range[2]) : f.size - 1, f.size - 1);
    if (a >= f.size) {
      res.writeHead(416, { ...cors, 'content-range': `bytes */${f.size}` }).end();
      return true;
    }
    const body = slice(a, b);
    sent.bytes += body.length;
    sent.ranges++;
    res.writeHead(206, { ...cors, 'content-type': 'application/octet-stream', 'content-length': body.length, 'content-range': `bytes ${a}-${b}/${f.size}` });
    res.end(body);
    return true;
  }
  // The whole file, streamed in 256 KiB chunks until the client goes away.
  sent.whole++;
  res.writeHead(200, { ...cors, 'content-type': 'application/octet-stream', 'content-length': f.size });
  let pos = 0;
  let closed = false;
  res.on('close', () => {
    closed = true;
    if (pos < f.size) sent.stopped++;
  });
  res.on('error', () => {});
  const write = () => {
    while (!closed && pos < f.size) {
      const end = Math.min(pos + 262144, f.size) - 1;
      const chunk = slice(pos, end);
      pos = end + 1;
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return res.once('drain', write);
    }
    if (!closed) res.end();
  };
  write();
  return true;
}
