// ?embed=1 (issue 5): a compact card for a blog post's column (fits 640 px): the
// model, the key controls, the stacked bar, the headline numbers and a link back to
// the full page. Works in an iframe sandboxed with "allow-scripts allow-same-origin
// allow-popups" and tells the parent its height ({type: "kvbudget:resize", height})
// whenever that changes, so web/embed-host.js can size the frame.
import { h, $, clear } from './dom.js';
import { t } from './i18n.js';
import { EMBED_PANELS, EMBED_DEFAULT_PANELS, defaultState } from './state.js';
import { buildControls } from './controls.js';
import { shareUrl, applyThemeParam, ignoredNote, updateIgnored, languageSwitcher } from './share.js';
import { exportContext } from './export.js';
import { answerCard } from './render.js';

export const RESIZE_MESSAGE = 'kvbudget:resize';

const SECONDARY = [['ctl-gpu-count', 'gpuCount'], ['ctl-util', 'util'], ['ctl-weights', 'weights'], ['ctl-tp', 'tp'], ['ctl-pp', 'pp']];

export function embedPanels(state) {
  const list = state.panels ? state.panels.split(',').filter((n) => EMBED_PANELS.includes(n)) : [];
  return list.length ? list : EMBED_DEFAULT_PANELS;
}

// Builds the card and every element main.js expects in app.els; the ones the card
// does not show (model input, paste and token boxes) stay detached.
export function buildEmbed(app, onChange, onLanguage) {
  const root = $('#app');
  clear(root);
  document.body.classList.add('embed');
  document.title = t('app.title');
  const els = app.els;
  els.modelInput = h('input', { type: 'hidden' });
  els.modelList = h('datalist');
  els.loadBtn = h('button', { type: 'button' });
  els.cancelBtn = h('button', { type: 'button', hidden: true });
  els.pasteArea = h('textarea');
  els.pasteBox = h('details');
  els.tokenBox = h('details');
  els.token = h('input', { type: 'password' });
  els.progress = h('progress', { hidden: true, 'aria-label': t('model.load') });
  els.status = h('p', { class: 'status', role: 'status', 'aria-live': 'polite', 'data-role': 'status' });
  els.error = h('p', { class: 'error', 'data-role': 'error', role: 'alert', hidden: true });
  els.source = h('p', { class: 'source muted', hidden: true });
  els.fullLink = h('a', { href: shareUrl(app.state), target: '_blank', rel: 'noopener', 'data-role': 'full-page' },
    t('embed.openFull'), h('span', { class: 'visually-hidden' }, ' ' + t('embed.newTab')), ' ↗');
  els.controls = buildControls(app, onChange);
  els.results = h('section', { id: 'results', class: 'results', 'aria-label': t('results.heading') });
  els.resultsBody = h('div', { class: 'results-body' });
  els.results.append(els.resultsBody);

  els.answer = answerCard(app);
  // The result sections the build's first answer shows at once (render.js): the card's own.
  app.firstSections = new Set(embedPanels(app.state));
  root.append(h('div', { class: 'embed-card' },
    h('div', { class: 'embed-head' }, h('strong', { class: 'brand' }, t('app.name')), els.fullLink),
    els.progress, els.status, els.error,
    // Above the answer: a parameter the card ignored changes what the answer is about.
    ignoredNote(app),
    els.answer,
    els.controls,
    els.results,
    h('div', { class: 'embed-foot' }, languageSwitcher(onLanguage))));
  applyThemeParam(app.state);
  watchHeight(root);
}

// Which parts of the rendered results the card keeps (render.js builds them all;
// the numbers are the same compute() result as the full page).
export function embedRendered(app) {
  const show = new Set(embedPanels(app.state));
  const body = app.els.resultsBody;
  app.els.controls.hidden = !show.has('controls');
  // The card keeps secondary controls folded away unless the view changed them, so
  // a reader always sees every setting that differs from the defaults.
  const base = defaultState();
  for (const [field, key] of SECONDARY) {
    app.els.controls.querySelector(`[data-field="${field}"]`)?.classList.toggle('changed', app.state[key] !== base[key]);
  }
  for (const el of body.querySelectorAll('.headline .bar-title, .headline .bar, .headline .legend')) el.hidden = !show.has('bar');
  for (const el of body.querySelectorAll('.numbers')) el.hidden = !show.has('metrics');
  for (const sec of body.querySelectorAll('section[id^="sec-"]')) {
    sec.hidden = !show.has(sec.id.slice(4));
  }
  app.els.fullLink.href = shareUrl(app.state);
  exportContext.model = app.state.model || app.view?.kv?.model || '';
  updateIgnored(app);
}

let observer = null;
let lastHeight = 0;

function postHeight(el) {
  const height = Math.ceil(el.getBoundingClientRect().height);
  if (height === lastHeight || height <= 0) return;
  lastHeight = height;
  // The height is not secret, and the embedding page's origin is unknown here.
  window.parent.postMessage({ type: RESIZE_MESSAGE, height }, '*');
}

function watchHeight(el) {
  if (window.parent === window) return;
  observer?.disconnect();
  lastHeight = 0;
  if (typeof ResizeObserver === 'undefined') {
    window.addEventListener('load', () => postHeight(el));
    return;
  }
  observer = new ResizeObserver(() => postHeight(el));
  observer.observe(el);
}
