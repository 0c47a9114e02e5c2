// Sharing (issue 5): "Copy link" (the URL carries the whole state), "Copy embed
// code" (an <iframe> snippet for this view with theme and panel choices), the
// language switcher, and the note that lists URL parameters the page ignored.
import { h, setText, setHidden } from './dom.js';
import { t, language, LANGUAGES } from './i18n.js';
import { stateToParams, defaultState, paramGuess, EMBED_PANELS, EMBED_DEFAULT_PANELS } from './state.js';
import { copyText, flash, exportContext } from './export.js';
import { afterPaint, fillBeforeOpen } from './lazy.js';
import { int } from './format.js';

// Parameters that name a value the core may later refuse (checked after the first
// render: syncControls / the model's limits replace values they do not know).
const CHECKED_AFTER_RENDER = ['kv', 'ctk', 'ctv', 'gpu', 'weights', 'tp', 'ctx'];

function pageBase() {
  return location.origin + location.pathname;
}

// A pasted config has no id (model ''): links carry the default model instead of
// an empty, invalid one (the share bar says so).
function linkable(state) {
  return state.model ? state : { ...state, model: defaultState().model, revision: '' };
}

// The full page for this state (never embed/theme/panels: those belong to snippets).
export function shareUrl(state) {
  const p = stateToParams({ ...linkable(state), embed: false, theme: 'auto', panels: '' });
  const q = p.toString();
  return pageBase() + (q ? '?' + q : '');
}

// opts: {theme: 'auto'|'light'|'dark', panels: [names], lang: '' (reader's browser) | code}
export function embedUrl(state, opts = {}) {
  const panels = (opts.panels || EMBED_DEFAULT_PANELS).filter((n) => EMBED_PANELS.includes(n));
  const same = panels.length === EMBED_DEFAULT_PANELS.length && panels.every((n) => EMBED_DEFAULT_PANELS.includes(n));
  const p = stateToParams({
    ...linkable(state), embed: true, theme: opts.theme || 'auto', panels: same ? '' : panels.join(','), lang: 'en',
  });
  p.delete('lang');
  if (opts.lang) p.set('lang', opts.lang);
  return pageBase() + '?' + p.toString();
}

function attr(s) {
  return String(s).replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// The host script sits next to index.html; it sizes the frame from its messages. The card's
// copy buttons (the command, a table as Markdown) use the Clipboard API, which a frame may
// use only when its <iframe> allows it (Permissions Policy clipboard-write; without it the
// host page's console reports a violation and the copy fails).
export function embedSnippet(state, opts = {}) {
  const src = embedUrl(state, opts);
  const host = new URL('embed-host.js', pageBase()).href;
  const title = t('share.embedTitle', { model: linkable(state).model });
  return `<iframe src="${attr(src)}" title="${attr(title)}" width="100%" height="560" loading="lazy" ` +
    `style="border:0;width:100%;max-width:640px" ` +
    `sandbox="allow-scripts allow-same-origin allow-popups allow-popups-to-escape-sandbox" allow="clipboard-write"></iframe>\n` +
    `<script src="${attr(host)}" async></script>\n`;
}

// Until the first answer is painted the select holds the page's language only, which is all
// a closed select shows: laying out the option "简体中文" on a page in English has the browser
// look for a CJK font, 15-20 ms of the first frame's style and layout (issue 13). The other
// languages are there before anyone can open it (pointer or keyboard) and just after that frame.
export function languageSwitcher(onSwitch) {
  const option = (code) => h('option', { value: code, lang: code }, t('lang.' + code));
  const sel = h('select', { id: 'lang', 'data-role': 'lang' }, option(language()));
  let full = false;
  const fill = () => {
    if (full) return;
    full = true;
    const value = sel.value;
    sel.replaceChildren(...LANGUAGES.map(option));
    sel.value = value;
  };
  fillBeforeOpen(sel, fill);
  afterPaint(fill);
  sel.addEventListener('change', () => onSwitch(sel.value));
  return h('div', { class: 'lang' }, h('label', { for: 'lang' }, t('lang.label')), sel);
}

// ?theme= applies to the embed card and to the full page alike.
export function applyThemeParam(state) {
  if (state.theme === 'light' || state.theme === 'dark') {
    document.documentElement.dataset.theme = state.theme;
    const sel = document.getElementById('theme');
    if (sel) sel.value = state.theme;
  }
}

// The visible note for ignored parameters (never an error page). `app.ignored`
// holds [name, value] pairs from parsing; values the page later replaced join it.
export function ignoredNote(app) {
  const el = h('p', { class: 'note ignored', 'data-role': 'ignored-params', role: 'status', hidden: true });
  app.els.ignored = el;
  showIgnored(app);
  return el;
}

function showIgnored(app) {
  const el = app.els.ignored;
  // In the address's order, whenever the page found each one out (parsing, the core's limits, the first answer).
  const keys = app.urlParams ? [...app.urlParams.keys()] : [];
  const order = (k) => (keys.includes(k) ? keys.indexOf(k) : keys.length);
  const list = [...(app.ignored || [])].sort((a, b) => order(a[0]) - order(b[0])).map(([k, v, range]) => {
    const item = v === '' ? k : `${k}=${v.length > 40 ? v.slice(0, 40) + '…' : v}`;
    // The hints carry their own spacing: Chinese sets its full-width bracket without one.
    // A value out of the core's range says which values it takes (state.js limitState).
    if (range) return item + t('share.range', { min: int(range.min), max: int(range.max) });
    const guess = paramGuess(k);
    return guess ? item + t('share.didYouMean', { name: guess }) : item;
  });
  // On every answer (each slider step): unchanged, it is left alone.
  setText(el, list.length ? t('share.ignored', { list: list.join(', ') }) : '');
  setHidden(el, !list.length);
}

// A GPU named otherwise than by its id ("h100") was taken, not ignored, when the core resolves it to the id shown.
// With llama.cpp the address's kv went to its K and V halves (state.js): it was taken when one
// of them still has it.
function sameAsUrl(app, key) {
  const url = String(app.urlState[key]);
  const now = String(app.state[key]);
  if (key === 'kv' && (app.urlState.engine === 'llamacpp' || app.urlState.quant)) {
    const kv = app.urlParams.get('kv');
    return app.state.ctk === kv || app.state.ctv === kv;
  }
  return url === now || (key === 'gpu' && now !== '' && app.core.findGpu(url) === now);
}

export function updateIgnored(app) {
  const el = app.els.ignored;
  if (!el) return;
  if (!app.ignoredChecked && app.urlState) {
    app.ignoredChecked = true;
    for (const key of CHECKED_AFTER_RENDER) {
      if (app.urlParams?.has(key) && !sameAsUrl(app, key) && !app.ignored.some(([k]) => k === key)) {
        app.ignored.push([key, app.urlParams.get(key)]);
      }
    }
  }
  showIgnored(app);
}

function panelChoices() {
  return h('fieldset', { class: 'panels' },
    h('legend', null, t('share.embedPanels')),
    EMBED_PANELS.map((n) => h('label', { class: 'check' },
      h('input', { type: 'checkbox', name: 'embed-panel', value: n, checked: EMBED_DEFAULT_PANELS.includes(n) }),
      ' ', t('panel.' + n))));
}

// The share bar of the full page.
export function shareBar(app) {
  const out = h('textarea', { id: 'share-output', class: 'share-output', readonly: true, rows: '4', spellcheck: 'false', 'aria-label': t('share.snippetLabel'), hidden: true });
  const msg = h('p', { class: 'muted', 'data-role': 'share-message', hidden: true });
  const pasteNote = h('p', { class: 'muted', 'data-role': 'share-paste-note', hidden: true }, t('share.pasteNotShareable'));
  // The embed options are in a closed <details> below the answer: their fields (some 40
  // elements) are made just after the first answer is painted, or at once when the snippet
  // is asked for (issue 13).
  const details = h('details', { class: 'embed-options' }, h('summary', null, t('share.embedOptions')));
  let fields = null;
  const embedFields = () => {
    if (fields) return fields;
    const theme = h('select', { id: 'embed-theme' }, ['auto', 'light', 'dark'].map((m) => h('option', { value: m }, t('theme.' + m))));
    const lang = h('select', { id: 'embed-lang' },
      h('option', { value: '' }, t('share.embedLangAuto')),
      LANGUAGES.map((code) => h('option', { value: code, lang: code }, t('lang.' + code))));
    const panels = panelChoices();
    details.append(
      h('div', { class: 'grid' },
        h('div', { class: 'field' }, h('label', { for: 'embed-theme' }, t('share.embedTheme')), theme),
        h('div', { class: 'field' }, h('label', { for: 'embed-lang' }, t('share.embedLang')), lang)),
      panels,
      h('p', { class: 'muted hint' }, t('share.embedHint')));
    fields = { theme, lang, panels };
    return fields;
  };
  afterPaint(embedFields);
  const options = () => {
    const { theme, lang, panels } = embedFields();
    return {
      theme: theme.value,
      lang: lang.value,
      panels: [...panels.querySelectorAll('input[name="embed-panel"]:checked')].map((i) => i.value),
    };
  };

  const show = (text, copied) => {
    out.value = text;
    out.hidden = false;
    msg.hidden = copied;
    msg.textContent = copied ? '' : t('share.copyFailed');
    if (!copied) {
      out.focus();
      out.select();
    }
  };
  const linkBtn = h('button', { type: 'button', 'data-action': 'copy-link' }, t('share.copyLink'));
  linkBtn.addEventListener('click', async () => {
    const text = shareUrl(app.state);
    const ok = await copyText(text);
    show(text, ok);
    if (ok) flash(linkBtn, 'share.copied');
  });
  const embedBtn = h('button', { type: 'button', 'data-action': 'copy-embed' }, t('share.copyEmbed'));
  embedBtn.addEventListener('click', async () => {
    const text = embedSnippet(app.state, options());
    const ok = await copyText(text);
    show(text, ok);
    if (ok) flash(embedBtn, 'share.copied');
  });
  const printBtn = h('button', { type: 'button', 'data-action': 'print' }, t('share.print'));
  printBtn.addEventListener('click', () => window.print());

  app.els.sharePasteNote = pasteNote;
  return h('section', { class: 'share no-print', 'aria-labelledby': 'share-h', 'data-role': 'share' },
    h('h2', { id: 'share-h', class: 'visually-hidden' }, t('share.heading')),
    h('div', { class: 'row wrap' }, linkBtn, embedBtn, printBtn),
    details,
    pasteNote, msg, out);
}

// After every render of the full page.
export function shareRendered(app) {
  exportContext.model = app.state.model && app.modelSource?.kind !== 'paste' ? app.state.model : (app.view?.kv?.model || '');
  const note = app.els.sharePasteNote;
  if (note) setHidden(note, app.modelSource?.kind !== 'paste');
  updateIgnored(app);
}
