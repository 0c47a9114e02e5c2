// Functions run inside the page (page.evaluate) by bench.mjs and slider-profile.mjs, so
// both time a slider step the same way; and the cold-load start and report bench.mjs, load-ab.mjs and static-bound.mjs share.
import { performance } from 'node:perf_hooks';

// The end of the frame that paints what a handler changed: requestAnimationFrame callbacks run
// in registration order, and a message posted from one runs after that frame's style, layout
// and paint. Installed once in the page; measures from the given event's time stamp.
export function installFrameProbe() {
  window.__kvbFrameEnd = () => new Promise((resolve) => {
    requestAnimationFrame(() => {
      const ch = new MessageChannel();
      ch.port1.onmessage = () => resolve(performance.now());
      ch.port2.postMessage(0);
    });
  });
}

// A step's window ends at the end of the frame that paints its answer, as its wall time
// does: work the page leaves for after that frame (render.js: the result cards off screen)
// is not the step's. Marks window.__kvbEndMark, when set, at each frame end. Needs
// installFrameProbe first.
export function installFrameEndMark() {
  const frameEnd = window.__kvbFrameEnd;
  window.__kvbFrameEnd = () => frameEnd().then((t) => {
    if (window.__kvbEndMark) performance.mark(window.__kvbEndMark);
    window.__kvbEndMark = null;
    return t;
  });
}

// Slider: each key press is a real input event; its keydown time stamp is when the browser
// received it. The probe is registered in a capture listener, before the page's own handler.
// Each step's key -> painted time lands in window.__kvbSteps. Needs installFrameProbe first.
export function installSliderProbe() {
  window.__kvbSteps = [];
  const slider = document.querySelector('#ctl-ctx-slider');
  let t0 = 0;
  slider.addEventListener('keydown', (e) => (t0 = e.timeStamp), true);
  slider.addEventListener('input', () => {
    const start = t0;
    window.__kvbPending = window.__kvbFrameEnd().then((t1) => window.__kvbSteps.push(t1 - start));
  }, true);
  slider.focus();
}

// A cold load's end as the page reports it, through an exposed binding (no polling): its load
// event (kind 'blank'), or data-state=ready and data-core=live (a kvbudget page). Resolves with
// ready's report ({wall: the driver's clock, inPage: the page's, epochMs: the wall clock network
// events carry}) and live: live's report: {done}, once both are installed. Await it before the
// context's first page.
export async function reportLoadEnd(context, kind) {
  const seen = {};
  let resolveDone;
  const done = new Promise((r) => (resolveDone = r));
  await context.exposeBinding('__kvbBenchDone', (_src, t) => {
    seen[t.what] = { wall: performance.now(), ...t };
    if (kind === 'blank' || (seen.ready && seen.live)) resolveDone({ ...seen.ready, ...(kind === 'blank' ? seen.load : {}), live: seen.live });
  });
  await context.addInitScript((k) => {
    const report = (what) => window.__kvbBenchDone({ what, inPage: performance.now(), epochMs: performance.timeOrigin + performance.now() });
    if (k === 'blank') {
      addEventListener('load', () => report('load'));
      return;
    }
    const sent = {};
    new MutationObserver((_, obs) => {
      const b = document.body;
      if (!sent.ready && b?.dataset.state === 'ready') report((sent.ready = 'ready'));
      // A build from before data-core (issue 13's "before" numbers): interactive when ready.
      const live = b?.dataset.core === 'live' || (b && !('core' in b.dataset) && b.dataset.state === 'ready');
      if (!sent.live && live) report((sent.live = 'live'));
      if (sent.ready && sent.live) obs.disconnect();
    }).observe(document, { attributes: true, subtree: true, attributeFilter: ['data-state', 'data-core'] });
  }, kind);
  return { done };
}

// The start every timed cold load shares: a fresh context (no cache or storage from another
// load), its load end reported (reportLoadEnd), the page's CDP session with Network enabled and
// the HTTP cache off. Attach CDP listeners, then `go(url)`: it navigates and resolves with the
// ready report (or the load event's, kind 'blank'), or rejects after 30 s.
export async function coldPage(browser, kind) {
  const context = await browser.newContext();
  const { done } = await reportLoadEnd(context, kind);
  const page = await context.newPage();
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
  const go = (url) => {
    page.goto(url).catch(() => {});
    return Promise.race([done, new Promise((_, reject) => setTimeout(() => reject(new Error(`${url}: not ready in 30 s`)), 30000))]);
  };
  return { context, page, cdp, go };
}
