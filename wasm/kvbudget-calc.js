// The calculator module (linked for size, no simulator: simulate() is not there): what
// the page needs for its first answer. Same wrapper and errors as kvbudget.js. It has no
// embind (wasm/bindings.cpp): its C functions take strings as UTF-8 bytes and a length
// and return a NUL-terminated UTF-8 string; adapt() gives them the embind module's names.
import createKvbudgetCalcModule from '../build-wasm/kvbudget-calc.mjs';
import { makeLoader } from './kvbudget-api.js';

export { KvbudgetError } from './kvbudget-api.js';

function adapt(m) {
  // Each string argument becomes two: its bytes in memory freed after the call, and their count.
  const fn = (f, kinds) => (...args) => {
    const owned = [];
    try {
      const c = [];
      [...kinds].forEach((k, i) => {
        if (k !== 's') return c.push(args[i]);
        const s = String(args[i] ?? '');
        const n = m.lengthBytesUTF8(s);
        const p = m._malloc(n + 1);
        owned.push(p);
        m.stringToUTF8(s, p, n + 1);
        c.push(p, n);
      });
      return m.UTF8ToString(f(...c));
    } finally {
      owned.forEach((p) => m._free(p));
    }
  };
  return {
    parseConfig: fn(m._kvb_parse_config, 'sss'),
    releaseModel: fn(m._kvb_release_model, 'i'),
    compute: fn(m._kvb_compute, 'is'),
    parseSize: fn(m._kvb_parse_size, 's'),
    parseContext: fn(m._kvb_parse_context, 's'),
    catalog: fn(m._kvb_catalog, ''),
    findGpu: fn(m._kvb_find_gpu, 's'),
    formatBytes: fn(m._kvb_format_bytes, 'd'),
  };
}

export const loadKvbudget = makeLoader(createKvbudgetCalcModule, adapt);
