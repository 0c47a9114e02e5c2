// web/src/format.js writes numbers by hand for English and Chinese (no Intl on the way to
// the first answer, issue 13); the text must be exactly what Intl.NumberFormat writes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import fs from 'node:fs';
import os from 'node:os';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

async function loadFormat() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-format-'));
  const out = path.join(dir, 'format.mjs');
  await esbuild.build({
    stdin: { contents: "export * from './web/src/format.js'; export { setLanguage, setCatalog } from './web/src/i18n.js';", resolveDir: root },
    bundle: true, format: 'esm', platform: 'node', outfile: out, loader: { '.json': 'json' }, logLevel: 'silent',
  });
  return import(pathToFileURL(out).href);
}

// Ties on the shortest decimal (578.05, 0.125, 2.5), carries (999.995, 9.95), signs,
// -0, grouping at every length, and a deterministic spread over 12 decades.
function values() {
  const v = [0, -0, 0.5, 1.5, 2.5, -2.5, 0.125, 1.005, 578.05, 301.15, 999.995, 9.95, 99.95, 0.045, -0.004, -0.0001,
    1023.999, 1234567.891, -1234.5, 1e15, 9007199254740991, 1e-7, 123456789012345680000];
  let x = 0.6180339887;
  for (let i = 0; i < 20000; i++) {
    x = (x * 9301 + 0.49297) % 1;
    const e = (i % 14) - 3;
    v.push((x - 0.3) * 10 ** e, Math.round(x * 1e6) / 1000, Math.round(x * 1e5) / 100 + 0.005);
  }
  return v;
}

test('numbers are written as Intl.NumberFormat writes them, in English and Chinese', async () => {
  const f = await loadFormat();
  f.setCatalog('zh-CN', JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/zh-CN.json'), 'utf8')));
  const vals = values();
  for (const lang of ['en', 'zh-CN']) {
    f.setLanguage(lang);
    for (const digits of [0, 1, 2, 3]) {
      const nf = new Intl.NumberFormat(lang, { minimumFractionDigits: digits, maximumFractionDigits: digits });
      for (const v of vals) assert.equal(f.fixed(v, digits), nf.format(v), `${lang} ${digits} digits of ${v}`);
    }
  }
  f.setLanguage('en');
  assert.equal(f.bytes(1536 * 1024 ** 3), '1.50 TiB');
  assert.equal(f.int(16384), '16,384');
  assert.equal(f.percent(0.0615), '6.2 %');
});
