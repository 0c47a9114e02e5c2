// Functions run inside the page (page.evaluate) by bench.mjs and slider-profile.mjs, so
// both time a slider step the same way.

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
