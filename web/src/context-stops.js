// The context slider's stops (controls.js): the lengths people use (powers of two from 256:
// 4K, 8K, 16K, 32K, 64K, 128K, ...) ending at the model's own maximum; typing gives any
// length. Pure (no DOM): scripts/build-site.mjs computes a catalog model's answers at these.
const SLIDER_FIRST = 256;
const SLIDER_LAST_NO_MAX = 1 << 20;

export function contextStops(max) {
  const top = max > 0 ? max : SLIDER_LAST_NO_MAX;
  const stops = [];
  for (let c = SLIDER_FIRST; c < top; c *= 2) stops.push(c);
  stops.push(top);
  return stops;
}
