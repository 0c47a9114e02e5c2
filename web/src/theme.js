// Light / dark / auto (follows the system). The choice is kept in localStorage
// only as a display preference; nothing else is ever stored.
import { h } from './dom.js';
import { t } from './i18n.js';

const KEY = 'kvbudget-theme';

function apply(mode) {
  if (mode === 'light' || mode === 'dark') document.documentElement.dataset.theme = mode;
  else delete document.documentElement.dataset.theme;
}

export function initTheme() {
  let mode = 'auto';
  try {
    mode = localStorage.getItem(KEY) || 'auto';
  } catch {
    // storage blocked (sandboxed iframe): stay on auto
  }
  apply(mode);
  const sel = h('select', { id: 'theme' }, ['auto', 'light', 'dark'].map((m) => h('option', { value: m }, t('theme.' + m))));
  sel.value = mode;
  sel.addEventListener('change', () => {
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
