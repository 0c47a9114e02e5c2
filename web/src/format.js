// Presentation only: numbers come computed from the WASM core; this turns them
// into text for the current locale. No memory formula lives here.
import { language, t } from './i18n.js';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
const nfCache = new Map();

function nf(digits) {
  const key = language() + ':' + digits;
  if (!nfCache.has(key)) {
    nfCache.set(key, new Intl.NumberFormat(language(), { minimumFractionDigits: digits, maximumFractionDigits: digits }));
  }
  return nfCache.get(key);
}

// The page's languages group by threes with "," and use "." for decimals, as Intl does
// for them; formatting by hand spares the first answer Chromium's ICU start-up (the first
// Intl.NumberFormat took 60-170 ms of it, issue 13). Intl rounds the shortest decimal
// that reads back as the double, half away from zero (578.05 -> 578.1, where toFixed
// gives 578.0), so this does too; other languages, and numbers String() writes with an
// exponent, go to Intl.
const GROUPED = new Set(['en', 'zh-CN']);

function num(digits, v) {
  const s = String(Math.abs(v));
  if (!GROUPED.has(language()) || !Number.isFinite(v) || s.includes('e')) return nf(digits).format(v);
  const dot = s.indexOf('.');
  let whole = dot < 0 ? s : s.slice(0, dot);
  let frac = dot < 0 ? '' : s.slice(dot + 1);
  if (frac.length > digits) {
    const d = (whole + frac.slice(0, digits)).split('');
    if (frac[digits] >= '5') {
      let i = d.length - 1;
      while (i >= 0 && d[i] === '9') d[i--] = '0';
      if (i < 0) d.unshift('1');
      else d[i] = String(Number(d[i]) + 1);
    }
    whole = d.slice(0, d.length - digits).join('');
    frac = d.slice(d.length - digits).join('');
  } else {
    frac = frac.padEnd(digits, '0');
  }
  const neg = v < 0 || Object.is(v, -0);
  return (neg ? '-' : '') + whole.replace(/\B(?=(\d{3})+$)/g, ',') + (digits ? '.' + frac : '');
}

export function int(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return t('value.none');
  return num(0, n);
}

export function fixed(n, digits = 2) {
  if (n === null || n === undefined || !Number.isFinite(n)) return t('value.none');
  return num(digits, n);
}

// Binary units with 2 decimals, as the CLI prints them ("144.00 KiB").
export function bytes(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return t('value.none');
  const neg = n < 0;
  let v = Math.abs(n);
  if (v < 1024) return (neg ? '-' : '') + num(0, v) + ' B';
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  return (neg ? '-' : '') + num(2, v) + ' ' + UNITS[i];
}

// Token counts as people write contexts: 1K, 32K, 128K, or the exact number.
export function tokens(n) {
  if (!Number.isFinite(n)) return t('value.none');
  if (n >= 1024 && n % 1024 === 0) {
    const k = n / 1024;
    if (k >= 1024 && k % 1024 === 0) return num(0, k / 1024) + 'M';
    return num(0, k) + 'K';
  }
  return num(0, n);
}

export function percent(f, digits = 1) {
  if (!Number.isFinite(f)) return t('value.none');
  return t('format.percent', { n: num(digits, f * 100) });
}

export function format(kind, v) {
  // No sample (the core's null: a policy that served nothing has no latency): not 0, and
  // not "— s" either.
  if (v === null || v === undefined) return t('value.none');
  switch (kind) {
    case 'bytes': return bytes(v);
    case 'int': return int(v);
    case 'tokens': return tokens(v);
    case 'ratio': return fixed(v, 2) + '×';
    case 'percent': return percent(v);
    case 'fixed1': return fixed(v, 1);
    // A deviation the core gives in percent, signed (the lab's measured vs formula).
    case 'deviation': return v === null || v === undefined || !Number.isFinite(v) ? t('value.none') : (v > 0 ? '+' : '') + fixed(v, 2) + ' %';
    // Simulated latencies (seconds from the core; time per output token shown in ms).
    case 'seconds': return t('unit.seconds', { value: fixed(v, Math.abs(v) < 10 ? 3 : 1) });
    case 'millis': return t('unit.millis', { value: fixed(v * 1000, 1) });
    default: return v === null || v === undefined ? t('value.none') : String(v);
  }
}

// Bandwidths are decimal on every spec sheet (1 TB/s = 1e12 B/s), so they are shown that way.
export function decimalBytes(n) {
  if (n === null || n === undefined || !Number.isFinite(n)) return t('value.none');
  const units = ['B', 'KB', 'MB', 'GB', 'TB', 'PB'];
  let v = Math.abs(n);
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return (n < 0 ? '-' : '') + num(v >= 100 || i === 0 ? 0 : 1, v) + ' ' + units[i];
}
