// The GGUF parts of the model panel: the quant picker (the repo's files and sizes, as the
// Hub lists them) and the line saying which file's header the answer comes from.
import { h, clear } from './dom.js';
import { t } from './i18n.js';
import { fixed } from './format.js';

// File sizes as the Hub shows them: decimal units ("5.03 GB").
export function decimalBytes(n) {
  if (!(n > 0)) return t('value.none');
  if (n >= 1e9) return fixed(n / 1e9, 2) + ' GB';
  if (n >= 1e6) return fixed(n / 1e6, 1) + ' MB';
  return fixed(n / 1e3, 1) + ' kB';
}

// <select data-role="quant">, hidden until a GGUF repo is loaded; `onPick(quant)` loads another file.
export function quantPicker(app, onPick) {
  const select = h('select', { id: 'quant-select', 'data-role': 'quant' });
  select.addEventListener('change', () => onPick(select.value));
  const box = h('div', { class: 'field quant', hidden: true },
    h('label', { for: 'quant-select' }, t('model.quantLabel')), select);
  app.els.quantBox = box;
  app.els.quantSelect = select;
  syncQuantPicker(app);
  return box;
}

export function syncQuantPicker(app) {
  const box = app.els.quantBox;
  const g = app.gguf;
  if (!box) return;
  box.hidden = !g;
  if (!g) return;
  const select = app.els.quantSelect;
  clear(select);
  for (const c of g.choices) {
    const label = t(c.shards.length > 1 ? 'model.quantOptionSplit' : 'model.quantOption',
      { quant: c.quant, size: decimalBytes(c.size), n: c.shards.length });
    select.append(h('option', { value: c.quant, selected: c === g.choice ? '' : null }, label));
  }
  select.value = g.choice.quant;
}

export function ggufSourceText(app) {
  const g = app.gguf;
  if (!g) return '';
  if (g.fallback) {
    return t('model.source.ggufFallback', { file: g.choice.path, id: g.id, base: g.fallback.base, size: decimalBytes(g.choice.size) });
  }
  return t(g.ignoredRange ? 'model.source.ggufWhole' : 'model.source.gguf', {
    file: g.choice.path,
    id: g.id,
    size: decimalBytes(g.choice.size),
    n: g.choice.shards.length,
  });
}
