#!/usr/bin/env node
// Checks the message catalogs (issue 5): every language has exactly the keys of
// en.json with the same {placeholders}; every t('key') in web/src exists; and no
// user-visible string is hard-coded outside the catalogs. The last check is
// deliberately pragmatic, not a JS parser: it looks at text in web/index.html and
// at string literals given to textContent / innerText / title / aria-label /
// placeholder / alt, and at literal children of h(tag, attrs, '...').
//   node scripts/check-i18n.mjs [root]     exit 1 and one line per problem
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// Literals that are the same in every language (formats, brand), with the reason.
export const ALLOWED_LITERALS = new Map([
  ['org/name', 'placeholder showing the Hub id format, not prose'],
  ['kvbudget', 'product name'],
]);

const LETTER = /[A-Za-z\u00C0-\u024F\u3040-\u30FF\u3400-\u9FFF]/;

function listJs(dir) {
  const out = [];
  if (!fs.existsSync(dir)) return out;
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...listJs(p));
    else if (/\.(m?js)$/.test(e.name)) out.push(p);
  }
  return out.sort();
}

function placeholders(s) {
  return [...String(s).matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',');
}

function lineOf(text, index) {
  return text.slice(0, index).split('\n').length;
}

// Comments would otherwise produce false hits (e.g. "t('key')" in a comment).
function stripComments(src) {
  return src.replace(/\/\*[\s\S]*?\*\//g, (m) => m.replace(/[^\n]/g, ' ')).replace(/(^|[^:'"`\\])\/\/[^\n]*/g, (m, p) => p + ' '.repeat(m.length - p.length));
}

export function checkI18n(root) {
  const errors = [];
  const i18nDir = path.join(root, 'web/i18n');
  const catalogs = {};
  for (const f of fs.readdirSync(i18nDir).filter((x) => x.endsWith('.json')).sort()) {
    try {
      catalogs[f.slice(0, -5)] = JSON.parse(fs.readFileSync(path.join(i18nDir, f), 'utf8'));
    } catch (e) {
      errors.push(`web/i18n/${f}: not valid JSON (${e.message})`);
    }
  }
  const en = catalogs.en;
  if (!en) return { errors: [...errors, 'web/i18n/en.json is missing'], keys: 0 };
  const langs = Object.keys(catalogs);
  if (langs.length < 2) errors.push('web/i18n: only one language');

  for (const [lang, cat] of Object.entries(catalogs)) {
    for (const [k, v] of Object.entries(cat)) {
      if (typeof v !== 'string' || v.trim() === '') errors.push(`web/i18n/${lang}.json: "${k}" is empty or not a string`);
    }
    if (lang === 'en') continue;
    for (const k of Object.keys(en)) {
      if (!(k in cat)) errors.push(`web/i18n/${lang}.json: missing key "${k}" (present in en.json)`);
      else if (placeholders(en[k]) !== placeholders(cat[k])) {
        errors.push(`web/i18n/${lang}.json: "${k}" has placeholders {${placeholders(cat[k])}} but en.json has {${placeholders(en[k])}}`);
      }
    }
    for (const k of Object.keys(cat)) {
      if (!(k in en)) errors.push(`web/i18n/en.json: missing key "${k}" (present in ${lang}.json)`);
    }
  }

  const srcDir = path.join(root, 'web/src');
  for (const file of listJs(srcDir)) {
    const rel = path.relative(root, file);
    const src = stripComments(fs.readFileSync(file, 'utf8'));
    const where = (i) => `${rel}:${lineOf(src, i)}`;
    for (const m of src.matchAll(/\bt\(\s*(['"])([^'"\n]+)\1\s*([,)+])/g)) {
      const key = m[2];
      if (m[3] === '+') {
        for (const lang of langs) {
          if (!Object.keys(catalogs[lang]).some((k) => k.startsWith(key))) errors.push(`${where(m.index)}: no key starting with "${key}" in ${lang}.json`);
        }
      } else {
        for (const lang of langs) {
          if (!(key in catalogs[lang])) errors.push(`${where(m.index)}: t('${key}') is not in ${lang}.json`);
        }
      }
    }
    for (const m of src.matchAll(/\bt\(\s*`/g)) errors.push(`${where(m.index)}: t() with a template literal cannot be checked; use 'prefix.' + name`);

    const literal = String.raw`(['"\x60])((?:\\.|(?!\1)[^\\\n])*)\1`;
    const patterns = [
      new RegExp(String.raw`\.(?:textContent|innerText|title|placeholder|alt)\s*=\s*` + literal, 'g'),
      new RegExp(String.raw`setAttribute\(\s*['"](?:title|aria-label|placeholder|alt)['"]\s*,\s*` + literal, 'g'),
      new RegExp(String.raw`(?:\btitle|'aria-label'|"aria-label"|\bplaceholder|\balt|\btext)\s*:\s*` + literal, 'g'),
      new RegExp(String.raw`\bh\(\s*['"][\w-]+['"]\s*,\s*(?:null|\{[^{}]*\})\s*,\s*` + literal, 'g'),
    ];
    for (const re of patterns) {
      for (const m of src.matchAll(re)) {
        const text = m[2].replace(/\$\{[^}]*\}/g, '');
        if (!LETTER.test(text) || ALLOWED_LITERALS.has(text.trim())) continue;
        errors.push(`${where(m.index)}: hard-coded user-visible text "${m[2]}": put it in web/i18n/*.json and use t()`);
      }
    }
  }

  const htmlPath = path.join(root, 'web/index.html');
  if (fs.existsSync(htmlPath)) {
    const html = fs.readFileSync(htmlPath, 'utf8');
    const body = html.replace(/<!--[\s\S]*?-->/g, '').replace(/<(script|style)\b[\s\S]*?<\/\1>/gi, '');
    for (const m of body.matchAll(/>([^<]+)</g)) {
      const text = m[1].trim();
      if (!text || !LETTER.test(text) || ALLOWED_LITERALS.has(text)) continue;
      errors.push(`web/index.html:${lineOf(body, m.index)}: hard-coded text "${text}": the page must set it from the catalogs`);
    }
    for (const m of body.matchAll(/\s(?:title|aria-label|placeholder|alt)\s*=\s*"([^"]*)"/g)) {
      if (LETTER.test(m[1]) && !ALLOWED_LITERALS.has(m[1].trim())) errors.push(`web/index.html:${lineOf(body, m.index)}: hard-coded attribute text "${m[1]}"`);
    }
  }
  return { errors, keys: Object.keys(en).length, languages: langs };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = path.resolve(process.argv[2] || path.join(path.dirname(fileURLToPath(import.meta.url)), '..'));
  const { errors, keys, languages } = checkI18n(root);
  for (const e of errors) console.error(e);
  if (errors.length) {
    console.error(`check-i18n: ${errors.length} problem(s)`);
    process.exit(1);
  }
  console.log(`check-i18n: ${keys} keys in ${languages.join(', ')}; all t() keys present; no hard-coded text found`);
}
