// A seeded random number generator (mulberry32): the same numbers every run, for generated test
// inputs (tests/node/url-params.test.mjs) and resampling (bench/web/bench.mjs).
export function mulberry32(seed) {
  let s = seed | 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let x = Math.imul(s ^ (s >>> 15), 1 | s);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}
