// Every user-visible string goes through t(): the catalogs live in web/i18n/*.json
// (English is bundled; other languages can be fetched on demand later).
import en from '../i18n/en.json';

const catalogs = { en };
let lang = 'en';
let messages = en;

export function setCatalog(code, catalog) {
  catalogs[code] = catalog;
}

export function setLanguage(code) {
  if (catalogs[code]) {
    lang = code;
    messages = catalogs[code];
  }
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
  if (params) s = s.replace(/\{(\w+)\}/g, (m, k) => (params[k] === undefined ? m : String(params[k])));
  return s;
}

export function has(key) {
  return key in messages || key in en;
}
