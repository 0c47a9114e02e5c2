// The order statistics the web benchmarks print, defined once: the sample at a fraction of the
// sorted samples (no interpolation: a time that was measured), NaN for no samples.
export const sorted = (xs) => [...xs].sort((a, b) => a - b);
export const quantile = (xs, f) => (xs.length ? sorted(xs)[Math.min(xs.length - 1, Math.floor(xs.length * f))] : NaN);
export const median = (xs) => quantile(xs, 0.5);
// The 95th percentile as bench.mjs reports it: the sample at or above 95% of them.
export const p95 = (xs) => (xs.length ? sorted(xs)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)] : NaN);
