/*
 * kvbudget embed host script (docs/embed.md). Include it once on a page that embeds
 * kvbudget iframes:
 *
 *   <script src="https://YOUR-KVBUDGET-HOST/embed-host.js" async></script>
 *
 * The embedded card posts {type: "kvbudget:resize", height} whenever its content
 * height changes; this script sets that height on the <iframe> that sent it, so the
 * calculator never shows an inner scrollbar. It only accepts messages that come
 * from an iframe whose src is on the kvbudget origin (the origin this script was
 * loaded from, or the one in data-kvbudget-origin="https://..." on the script tag).
 * Plain ES5, no dependencies, nothing stored, no network requests.
 */
(function () {
  'use strict';
  if (window.__kvbudgetEmbedHost) return; // included twice: one listener is enough
  window.__kvbudgetEmbedHost = true;

  var script = document.currentScript;
  var origin = null;
  try {
    var declared = script && script.getAttribute('data-kvbudget-origin');
    origin = new URL(declared || script.src, location.href).origin;
  } catch (e) {
    return; // cannot tell which frames are ours: do nothing rather than trust all
  }

  var MAX_HEIGHT = 20000; // px; a runaway value must not blow up the host page

  function frameFor(source) {
    var frames = document.getElementsByTagName('iframe');
    for (var i = 0; i < frames.length; i++) {
      if (frames[i].contentWindow === source) return frames[i];
    }
    return null;
  }

  function srcOrigin(frame) {
    try {
      return new URL(frame.getAttribute('src') || '', location.href).origin;
    } catch (e) {
      return null;
    }
  }

  window.addEventListener('message', function (ev) {
    var d = ev.data;
    if (!d || typeof d !== 'object' || d.type !== 'kvbudget:resize') return;
    // Sandboxed frames without allow-same-origin report the opaque origin "null".
    if (ev.origin !== origin && ev.origin !== 'null') return;
    var frame = frameFor(ev.source);
    if (!frame || srcOrigin(frame) !== origin) return;
    var height = Math.ceil(Number(d.height));
    if (!isFinite(height) || height <= 0 || height > MAX_HEIGHT) return;
    frame.style.height = height + 'px';
    frame.setAttribute('height', String(height));
  });
})();
