// Light / dark / auto (follows the system). The choice is kept in localStorage
// only as a display preference; nothing else is ever stored.
import { h } from './dom.js';
import { t } from './i18n.js';

const KEY = 'kvbudget-theme';

function apply(mode) {
  if (mode === 'light' || mode === 'dark') document.documentElement.dataset.theme = mode;
  else delete document.documentElement.dataset.theme;
}

// The mode in force: read once, by web/boot.js while the page was still parsed (the
// first read of localStorage waits on the browser process, up to 35 ms on a loaded
// machine), or here; then kept as the user changes it.
let current = null;

function stored() {
  try {
    return localStorage.getItem(KEY) || 'auto';
  } catch {
    return 'auto'; // storage blocked (sandboxed iframe)
  }
}

export function initTheme() {
  current ??= (typeof self !== 'undefined' && self.kvbBoot?.theme) || stored();
  const mode = current;
  apply(mode);
  const sel = h('select', { id: 'theme' }, ['auto', 'light', 'dark'].map((m) => h('option', { value: m }, t('theme.' + m))));
  sel.value = mode;
  sel.addEventListener('change', () => {
    current = sel.value;
    apply(sel.value);
    try {
      localStorage.setItem(KEY, sel.value);
    } catch {
      // ignore
    }
    document.dispatchEvent(new CustomEvent('kvbudget:theme'));
  });
  return h('div', { class: 'theme' }, h('label', { for: 'theme' }, t('theme.label')), sel);
}
