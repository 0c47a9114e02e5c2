// Values of the page's address that must be read before the calculator module is here:
// web/boot.js decides from the address alone whether a link's answer is one the build
// computed, and main.js compares the link's settings with the build's before it asks for
// the module. No imports: boot.js bundles this file into the page's first script.

// C's isspace in the "C" locale (the core trims with it): what a context may be padded with.
const C_SPACE = new Set([' ', '\t', '\n', '\v', '\f', '\r']);

// A context as the core's parse_context (src/base/units.cpp) reads it, so `ctx=128K` in an
// address means what the context field and `kvbudget budget --max-model-len 128K` mean:
// 131072, 128K (x 1024), 1M (x 1048576), 32,768 or 32_768 (separators only between groups of
// three digits, one kind of separator), surrounding white space. Returns the number, or null
// where the core refuses the text; the range (budget_input_limits) is checked separately.
// tests/node/url-params.test.mjs holds it to the core's parseContext on many inputs.
export function parseContextText(text) {
  let b = 0;
  let e = text.length;
  while (b < e && C_SPACE.has(text[b])) b++;
  while (e > b && C_SPACE.has(text[e - 1])) e--;
  let body = text.slice(b, e);
  let mult = 1n;
  const last = body.slice(-1);
  if (last === 'k' || last === 'K') mult = 1024n;
  if (last === 'm' || last === 'M') mult = 1048576n;
  if (mult > 1n) body = body.slice(0, -1).replace(/ +$/, '');
  if (!/^[0-9,_]+$/.test(body)) return null;
  // parse_count's grouping (src/base/units.cpp): a separator after one to three digits, then
  // only after exactly three, never first, last or doubled, and always the same one.
  let digits = '';
  let group = 0;
  let sep = '';
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === ',' || c === '_') {
      if (group === 0 || (sep && group !== 3) || (!sep && group > 3) || i + 1 === body.length || (sep && c !== sep)) return null;
      sep = c;
      group = 0;
      continue;
    }
    digits += c;
    group++;
  }
  if (sep && group !== 3) return null;
  if (digits.replace(/^0+/, '').length > 18) return null;
  const n = BigInt(digits) * mult;
  if (n > 9223372036854775807n) return null;
  // Past 2^53 the number is the nearest double, as the core's answer reads in JavaScript: far
  // outside any context the core accepts, so its range check refuses it either way.
  return Number(n);
}

// ?lang= as the page's language code: the catalog's own codes and the obvious other ways to
// write them (any case; zh, zh-Hans and Simplified Chinese's regions for zh-CN, en-* for en).
// Traditional Chinese (zh-TW, zh-Hant) is not offered, so it is not taken for zh-CN.
export function langParam(text) {
  const low = String(text).toLowerCase();
  if (/^en(-[a-z0-9]{1,8})*$/.test(low)) return 'en';
  if (/^zh(-hans)?(-(cn|sg|my))?$/.test(low)) return 'zh-CN';
  return '';
}
