// A local stand-in for the Hugging Face Hub: serves the fixture configs under
// their ids and answers the failure cases the page must explain.
//   gated/*   401 (200 with "Authorization: Bearer test-token")    missing/*  404
//   busy/*    429        broken/*  500        slow/*  never answers
//   html/*    200 with an HTML page            huge/*  200 with a 10 MB body
//   gguf/*    no config.json, GGUF files only   xss/*   config whose strings are markup
//   params/*  the Llama-3.1-8B config, and a safetensors total of 9e9 BF16 parameters in the API
//   nosuch/*  401 with X-Error-Code: RepoNotFound (what the Hub says for a missing repo)
//   any id in `refuse` (an option): 401 without a token, as the Hub answers for a gated
//   repo such as meta-llama/Llama-3.1-70B whose config the page also bundles
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';

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
  const xssConfig = JSON.stringify({ ...JSON.parse(llama), architectures: [XSS + 'ForCausalLM'], _name_or_path: XSS });
  const requests = [];
  const hanging = new Set();

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const p = decodeURIComponent(url.pathname);
    requests.push({ method: req.method, path: p, auth: req.headers.authorization || '' });
    const cors = { 'access-control-allow-origin': '*', 'access-control-allow-headers': 'authorization', 'access-control-expose-headers': 'content-length, x-error-code' };
    if (req.method === 'OPTIONS') {
      res.writeHead(204, { ...cors, 'access-control-allow-methods': 'GET' }).end();
      return;
    }
    const send = (status, body, type = 'application/json') => {
      res.writeHead(status, { ...cors, 'content-type': type });
      res.end(body);
    };
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
      return send(200, JSON.stringify({ id, gated: false, library_name: 'transformers', pipeline_tag: 'text-generation', safetensors, siblings: [{ rfilename: 'config.json' }] }));
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
        close: () => {
          for (const r of hanging) r.destroy();
          server.closeAllConnections?.();
          return new Promise((r) => server.close(r));
        },
      });
    });
  });
}
