// Minimal static file server for site/ (tests, benchmarks, scripts/serve.sh).
// Serves gzip when the client accepts it, so the benchmark measures real bytes.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { withHubCsp } from '../../scripts/csp.mjs';

const TYPES = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8', '.json': 'application/json; charset=utf-8', '.wasm': 'application/wasm',
  '.csv': 'text/csv; charset=utf-8', '.png': 'image/png', '.svg': 'image/svg+xml', '.txt': 'text/plain; charset=utf-8',
};

// Compressed once per file content, as a real static host does (gzip_static, a CDN):
// compressing a .wasm at level 9 on every request made the server, not the page, the
// slow part of a cold load (the benchmarks measure the page).
const gzipCache = new Map();
function gzipped(file, data) {
  const hit = gzipCache.get(file);
  if (hit && hit.raw.equals(data)) return hit.gz;
  const gz = zlib.gzipSync(data, { level: 9 });
  gzipCache.set(file, { raw: data, gz });
  return gz;
}

// root: folder to serve; extra: {'/kvbudget.config.json': '{...}'} served from memory;
// hubUrl: serve HTML pages with the CSP a build with KVB_HUB_URL=hubUrl writes (the fake hub);
// hold(path): a promise to wait for before answering that path, or null (tests that need a
// file late: the calculator module arriving after the first answer).
export function startStaticServer({ root, port = 0, host = '127.0.0.1', extra = {}, hubUrl = null, log = null, hold = null } = {}) {
  const base = path.resolve(root);
  const server = http.createServer(async (req, res) => {
    const url = new URL(req.url, 'http://x');
    let p = decodeURIComponent(url.pathname);
    log?.(req.method, p);
    await hold?.(p);
    if (extra[p] !== undefined) {
      res.writeHead(200, { 'content-type': TYPES[path.extname(p)] || 'application/octet-stream', 'cache-control': 'no-store' });
      res.end(extra[p]);
      return;
    }
    if (p.endsWith('/')) p += 'index.html';
    const file = path.resolve(base, '.' + p);
    if (!file.startsWith(base + path.sep) && file !== base) {
      res.writeHead(403).end();
      return;
    }
    fs.readFile(file, (err, data) => {
      if (err) {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
        return;
      }
      const type = TYPES[path.extname(file)] || 'application/octet-stream';
      if (hubUrl && path.extname(file) === '.html') data = Buffer.from(withHubCsp(data.toString('utf8'), hubUrl));
      const headers = { 'content-type': type, 'cache-control': 'no-cache' };
      if (/\bgzip\b/.test(req.headers['accept-encoding'] || '') && !type.startsWith('image/png')) {
        data = gzipped(file, data);
        headers['content-encoding'] = 'gzip';
      }
      headers['content-length'] = data.length;
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : data);
    });
  });
  return new Promise((resolve) => {
    server.listen(port, host, () => {
      const a = server.address();
      resolve({ server, url: `http://${host}:${a.port}/`, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const root = process.argv[2] || 'site';
  const port = Number(process.argv[3] || 8080);
  const s = await startStaticServer({ root, port });
  console.log(`serving ${root} at ${s.url} (Ctrl-C to stop)`);
}
