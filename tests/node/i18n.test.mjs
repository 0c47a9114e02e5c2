// The message catalogs (issue 5): the real tree passes scripts/check-i18n.mjs, and
// the check really fails on each kind of gap (shown on small synthetic trees).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { checkI18n } from '../../scripts/check-i18n.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function tree({ en, zh, files = {}, html = '<!doctype html><html><head><title>kvbudget</title></head><body><div id="app"></div></body></html>' }) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kvb-i18n-'));
  fs.mkdirSync(path.join(dir, 'web/i18n'), { recursive: true });
  fs.mkdirSync(path.join(dir, 'web/src'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'web/i18n/en.json'), JSON.stringify(en));
  fs.writeFileSync(path.join(dir, 'web/i18n/zh-CN.json'), JSON.stringify(zh));
  fs.writeFileSync(path.join(dir, 'web/index.html'), html);
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, 'web/src', name), text);
  return dir;
}

const EN = { 'a.title': 'Title', 'a.count': '{n} items', 'bar.kv': 'KV cache', 'bar.weights': 'Weights' };
const ZH = { 'a.title': '标题', 'a.count': '{n} 项', 'bar.kv': 'KV Cache', 'bar.weights': '权重' };
const GOOD_JS = "import { t } from './i18n.js';\nel.textContent = t('a.title');\nh('p', null, t('a.count', { n: 3 }));\nconst k = t('bar.' + part);\nh('span', null, ' — ');\n";

test('the real catalogs and sources pass', () => {
  const r = checkI18n(root);
  assert.deepEqual(r.errors, []);
  assert.deepEqual(r.languages.sort(), ['en', 'zh-CN']);
  assert.ok(r.keys > 150, `only ${r.keys} keys`);
});

test('zh-CN uses the seed articles\' terms', () => {
  const zh = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/zh-CN.json'), 'utf8'));
  const all = Object.values(zh).join('\n');
  for (const term of ['KV Cache', '显存', '上下文长度', '并发', '分组查询注意力 GQA', '量化']) assert.ok(all.includes(term), term);
  assert.equal(zh['bar.kv'], 'KV Cache');
  assert.equal(zh['results.heading'], '显存预算');
});

test('a synthetic tree that is complete passes', () => {
  assert.deepEqual(checkI18n(tree({ en: EN, zh: ZH, files: { 'a.js': GOOD_JS } })).errors, []);
});

test('a key missing in zh-CN fails, naming the key', () => {
  const { 'a.count': _, ...zh } = ZH;
  const r = checkI18n(tree({ en: EN, zh, files: { 'a.js': GOOD_JS } }));
  assert.deepEqual(r.errors, ['web/i18n/zh-CN.json: missing key "a.count" (present in en.json)', "web/src/a.js:3: t('a.count') is not in zh-CN.json"]);
});

test('a key missing in en fails, naming the key', () => {
  const r = checkI18n(tree({ en: EN, zh: { ...ZH, 'only.zh': '只有中文' }, files: { 'a.js': GOOD_JS } }));
  assert.deepEqual(r.errors, ['web/i18n/en.json: missing key "only.zh" (present in zh-CN.json)']);
});

test('different placeholders fail', () => {
  const r = checkI18n(tree({ en: EN, zh: { ...ZH, 'a.count': '{count} 项' }, files: { 'a.js': GOOD_JS } }));
  assert.deepEqual(r.errors, ['web/i18n/zh-CN.json: "a.count" has placeholders {count} but en.json has {n}']);
});

test('t() with a key in no catalog fails, with file and line', () => {
  const r = checkI18n(tree({ en: EN, zh: ZH, files: { 'a.js': GOOD_JS + "h('p', null, t('nope.key'));\n" } }));
  assert.deepEqual(r.errors, ["web/src/a.js:6: t('nope.key') is not in en.json", "web/src/a.js:6: t('nope.key') is not in zh-CN.json"]);
});

test('a dynamic prefix with no key fails', () => {
  const r = checkI18n(tree({ en: EN, zh: ZH, files: { 'a.js': "t('gone.' + x);\n" } }));
  assert.deepEqual(r.errors, ['web/src/a.js:1: no key starting with "gone." in en.json', 'web/src/a.js:1: no key starting with "gone." in zh-CN.json']);
});

test('hard-coded text in textContent, attributes and h() children fails', () => {
  const js = [
    "el.textContent = 'Loading…';",
    "h('button', { title: 'Copy this' }, t('a.title'));",
    "h('div', { 'aria-label': \"Chart\" });",
    "h('p', null, 'Hello there');",
    "h('input', { placeholder: 'org/name' });", // allowed: a format, not prose
    "el.textContent = ' — ';", // no letters
  ].join('\n');
  const r = checkI18n(tree({ en: EN, zh: ZH, files: { 'a.js': js } }));
  assert.deepEqual(r.errors, [
    'web/src/a.js:1: hard-coded user-visible text "Loading…": put it in web/i18n/*.json and use t()',
    'web/src/a.js:2: hard-coded user-visible text "Copy this": put it in web/i18n/*.json and use t()',
    'web/src/a.js:3: hard-coded user-visible text "Chart": put it in web/i18n/*.json and use t()',
    'web/src/a.js:4: hard-coded user-visible text "Hello there": put it in web/i18n/*.json and use t()',
  ]);
});

test('hard-coded text in index.html fails', () => {
  const html = '<!doctype html><html><head><title>kvbudget</title></head><body><p>Loading the calculator</p><button aria-label="Menu"></button></body></html>';
  const r = checkI18n(tree({ en: EN, zh: ZH, html }));
  assert.deepEqual(r.errors, [
    'web/index.html:1: hard-coded text "Loading the calculator": the page must set it from the catalogs',
    'web/index.html:1: hard-coded attribute text "Menu"',
  ]);
});
