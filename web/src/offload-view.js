// llama.cpp partial offload on the page: the -ngl and system-RAM controls (shown for the
// llama.cpp engine) and what the core's answer says about them (budget.llamacpp.offload):
// layers on the GPU, what stays in RAM, the most layers that fit. Numbers come from the core.
import { h, patchChildren, setHidden } from './dom.js';
import { t } from './i18n.js';
import { bytes, int } from './format.js';

export function buildOffloadControls(app, onChange) {
  const ngl = h('input', { id: 'ctl-ngl', type: 'number', inputmode: 'numeric', min: '0', step: '1', placeholder: t('offload.all'), 'data-role': 'ngl' });
  const ram = h('input', { id: 'ctl-ram', type: 'text', spellcheck: 'false', placeholder: t('offload.ramUnset'), 'data-role': 'ram' });
  ngl.addEventListener('change', () => {
    const v = ngl.value.trim();
    const n = Number(v);
    if (v === '' || (Number.isInteger(n) && n >= 0)) {
      ngl.setCustomValidity('');
      app.state.ngl = v === '' ? -1 : n;
      onChange();
    } else {
      ngl.setCustomValidity(t('controls.badCount', { text: v }));
      ngl.reportValidity();
    }
  });
  ram.addEventListener('change', () => {
    const v = ram.value.trim();
    try {
      const n = v === '' ? 0 : app.core.parseSize(v);
      ram.setCustomValidity('');
      app.state.ram = n > 0 ? n : 0;
      onChange();
    } catch (e) {
      if (app.waitForCore?.(e, ram)) return; // read again once the calculator module is here
      ram.setCustomValidity(t('controls.badSize', { text: v }));
      ram.reportValidity();
    }
  });
  const box = h('fieldset', { class: 'panel offload', 'data-role': 'offload-controls' },
    h('legend', null, t('offload.legend')),
    h('div', { class: 'field' }, h('label', { for: 'ctl-ngl' }, t('offload.ngl')), ngl,
      h('p', { class: 'muted hint' }, t('offload.nglHint'))),
    h('div', { class: 'field' }, h('label', { for: 'ctl-ram' }, t('offload.ram')), ram,
      h('p', { class: 'muted hint' }, t('offload.ramHint'))));
  app.els.offload = { box, ngl, ram, out: h('div', { class: 'offload-result', 'data-role': 'offload' }) };
  box.append(app.els.offload.out);
  syncOffload(app, null);
  return box;
}

// After every compute: the controls follow the state, the result lines follow the answer.
export function syncOffload(app, answer) {
  const o = app.els.offload;
  if (!o) return;
  const llama = app.state.engine === 'llamacpp';
  setHidden(o.box, !llama);
  const ngl = app.state.ngl >= 0 ? String(app.state.ngl) : '';
  const ram = app.state.ram > 0 ? bytes(app.state.ram).replace(/[\s,]/g, '') : '';
  if (document.activeElement !== o.ngl && o.ngl.value !== ngl) o.ngl.value = ngl;
  if (document.activeElement !== o.ram && o.ram.value !== ram) o.ram.value = ram;
  // Patched, not rebuilt: a slider step changes a few numbers in these lines.
  const nodes = [];
  offloadLines(answer, llama, nodes);
  patchChildren(o.out, nodes);
}

function offloadLines(answer, llama, out) {
  const off = answer?.budget?.llamacpp?.offload;
  if (!llama || !off) return;
  const lines = [];
  if (off.active) {
    const all = off.n_gpu_layers >= off.n_slots;
    lines.push(t(all ? 'offload.placedOutput' : off.output_on_gpu ? 'offload.placed' : 'offload.placedNone', {
      ngl: int(off.n_gpu_layers), layers: int(off.gpu_repeating_layers), n: int(off.n_layer),
      gpuWeights: bytes(off.gpu_weights_bytes), gpuKv: bytes(off.gpu_kv_bytes),
    }));
    lines.push(t(off.ram_bytes > 0 ? (off.ram_fits ? 'offload.ramFits' : 'offload.ramShort') : 'offload.ramNeed', {
      need: bytes(off.ram_need_bytes), weights: bytes(off.cpu_weights_bytes), kv: bytes(off.cpu_kv_bytes), have: bytes(off.ram_bytes),
    }));
    if (off.estimated) lines.push(t('offload.estimated'));
  }
  lines.push(off.max_gpu_layers >= 0
    ? t('offload.most', { ngl: int(off.max_gpu_layers), n: int(off.n_layer), all: int(off.n_slots) })
    : t('offload.none'));
  for (const l of lines) out.push(h('p', null, l));
  // What llama.cpp's --fit (on by default) does when -c / -ngl are left out: the core's
  // prediction (budget.llamacpp.fit), the flags that say it, and the lines it prints.
  const fit = answer.budget.llamacpp.fit;
  if (fit?.outcome) {
    out.push(h('p', { 'data-role': 'fit' }, t('offload.fit.' + fit.outcome, {
      ctx: int(fit.context), ngl: int(fit.n_gpu_layers), all: int(off.n_slots), flags: fit.flags,
      used: bytes(fit.used_bytes), free: bytes(fit.free_bytes), margin: bytes(fit.target_bytes),
    })));
    if (fit.log_lines.length) out.push(h('pre', { class: 'log', 'data-role': 'fit-log' }, fit.log_lines.join('\n')));
  }
  // The page always sends a context, so the fit above is for it; what `llama-server -hf X`
  // picks with neither -c nor -ngl is the core's second prediction (fit_default).
  const dflt = answer.budget.llamacpp.fit_default;
  if (dflt?.outcome && dflt.outcome !== 'not_predicted' && dflt.outcome !== 'failed') {
    // From b6925 llama-server with no -np runs 4 slots sharing one unified cache.
    out.push(h('p', { 'data-role': 'fit-default' }, t(dflt.kv_unified ? 'offload.fitDefaultShared' : 'offload.fitDefault', {
      ctx: int(dflt.context), ngl: int(dflt.n_gpu_layers), all: int(off.n_slots), flags: dflt.flags, slots: int(dflt.slots),
    })));
  }
}
