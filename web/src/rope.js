// The RoPE scaling line under the verdict: what the model card documents (the core's
// rope_offer) and whether this answer serves with it. Choosing it sets the `rope` URL
// parameter; the core derives every length from it (src/model/rope.h).
import { h } from './dom.js';
import { t } from './i18n.js';
import { int } from './format.js';

function describe(r) {
  return t('rope.kind.' + r.type, { factor: String(r.factor), orig: int(r.original_max_position_embeddings) });
}

export function ropeLine(app, view) {
  const b = view.budget;
  const offer = view.rope_offer;
  const active = app.state.rope && b?.rope_scaling?.source === 'user' ? b.rope_scaling : null;
  if (!active && !offer) return null;
  const native = b ? b.native_max_len : app.model.spec.max_position_embeddings;
  const set = (value) => {
    app.state.rope = value;
    // Reaching past the native length is the point of turning it on.
    if (value && offer && app.state.ctx <= native) app.state.ctx = offer.max_len;
    if (!value && native > 0 && app.state.ctx > native) app.state.ctx = native;
    app.recompute?.();
  };
  const text = active
    ? t('rope.on', { scaling: describe(active), max: int(active.max_len), native: int(native) })
    : t('rope.offer', { scaling: describe(offer), max: int(offer.max_len), native: int(native) });
  return h('p', { class: 'muted rope', 'data-role': 'rope' }, text, ' ',
    h('button', { type: 'button', class: 'linklike', 'data-role': 'rope-toggle', onclick: () => set(active ? '' : offer.text) },
      t(active ? 'rope.off' : 'rope.use')));
}
