#!/usr/bin/env node
// Bundled model catalog for the page: every real config in tests/fixtures/configs
// (<org>--<name>.json, the published files, never written by hand) copied byte for
// byte into <out>/catalog/, plus index.json naming each by its Hub id org/name.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export function generateCatalog(outDir, srcDir = path.join(root, 'tests/fixtures/configs')) {
  const dest = path.join(outDir, 'catalog');
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  const models = [];
  for (const file of fs.readdirSync(srcDir).sort()) {
    if (!file.endsWith('.json')) continue;
    const base = file.slice(0, -'.json'.length);
    const sep = base.indexOf('--');
    if (sep <= 0) throw new Error(`catalog: ${file} is not named <org>--<name>.json`);
    const id = base.slice(0, sep) + '/' + base.slice(sep + 2);
    const text = fs.readFileSync(path.join(srcDir, file));
    JSON.parse(text.toString('utf8').replace(/\bNaN\b|-?\bInfinity\b/g, 'null')); // must be a JSON object
    fs.writeFileSync(path.join(dest, file), text);
    models.push({ id, file, bytes: text.length });
  }
  fs.writeFileSync(path.join(dest, 'index.json'), JSON.stringify({ models }) + '\n');
  return models;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const out = process.argv[2] || path.join(root, 'site');
  const models = generateCatalog(out);
  console.log(`catalog: ${models.length} configs -> ${path.join(out, 'catalog')}`);
}
