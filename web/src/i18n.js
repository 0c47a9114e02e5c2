// Every user-visible string goes through t(): the catalogs live in web/i18n/*.json.
// English is in the page's first bundle; the others are chunks of the same build
// (no other host, work offline), loaded by loadLanguage() before they are used: a
// visitor reading English does not download Chinese before the first answer.
import en from '../i18n/en.json';
import { renderMessage, fillTemplate, CONTROL_PARAMS } from './message.js';

export const LANGUAGES = ['en', 'zh-CN'];
const catalogs = { en };
const loaders = { 'zh-CN': () => import('../i18n/zh-CN.json') };

// ?lang= wins; otherwise the browser's first language we have (any zh-* reads
// Simplified Chinese: the only Chinese catalog), else English.
export function detectLanguage(param, browserLangs = []) {
  if (param && LANGUAGES.includes(param)) return param;
  for (const l of browserLangs) {
    const low = String(l).toLowerCase();
    if (low === 'en' || low.startsWith('en-')) return 'en';
    if (low === 'zh' || low.startsWith('zh-')) return 'zh-CN';
  }
  return 'en';
}
let lang = 'en';
let messages = en;

export function setCatalog(code, catalog) {
  catalogs[code] = catalog;
}

// More strings for a loaded catalog: the page's bundle carries the English the first
// answer needs, and views.js brings the rest with the views that use it.
export function addStrings(code, strings) {
  if (catalogs[code]) Object.assign(catalogs[code], strings);
}

// Resolves to `code` once its catalog is here (English when it cannot be loaded).
export async function loadLanguage(code) {
  if (catalogs[code]) return code;
  if (!loaders[code]) return 'en';
  try {
    catalogs[code] = (await loaders[code]()).default;
    return code;
  } catch {
    return 'en';
  }
}

export function hasLanguage(code) {
  return !!catalogs[code];
}

export function setLanguage(code) {
  if (catalogs[code]) {
    lang = code;
    messages = catalogs[code];
  }
  // Screen readers and CJK font selection follow <html lang>.
  if (typeof document !== 'undefined') document.documentElement.lang = lang;
  return lang;
}

export function language() {
  return lang;
}

// t('hub.notFound', {id}) -> text with {placeholders} filled. A missing key shows
// the key itself so a gap is visible instead of silently empty.
export function t(key, params) {
  let s = messages[key] ?? en[key];
  if (s === undefined) return key;
  if (params) s = fillTemplate(s, params);
  return s;
}

export function has(key) {
  return key in messages || key in en;
}

// A core note or refusal ({code, params, text}) in the page's language. An input the
// core names ({field}, and the CLI {flag} that sets it) is shown as that control's label.
export function tMsg(message) {
  const field = message?.params?.field;
  if (field && has('field.' + field)) {
    const label = t('field.' + field);
    message = { ...message, params: { ...message.params, ...Object.fromEntries(CONTROL_PARAMS.map((k) => [k, label])) } };
  }
  return renderMessage(message, messages);
}
