// The core's notes and refusals arrive as Messages: {code, params, text}, `text` being
// the CLI's English. Kept apart from i18n.js (which bundles the catalogs) so node tests
// can word a Message with any catalog.

// Parameters the page words itself before a template fills them: a control's label
// (i18n.js tMsg) and a policy's name (sim-view.js). A message naming one reads differently
// from the core's English `text`, so scripts/build-site.mjs keeps its template in every bundle.
export const CONTROL_PARAMS = ['field', 'flag'];
export const POLICY_PARAMS = ['policy', 'best', 'worst', 'policies'];

// The message in `catalog`'s words: msg.<code> with its {placeholders} filled. A
// parameter value the catalog words too (msgValue.<value>: "a string" -> 字符串) is
// shown in its words. A code the catalog lacks, or a plain string (a note the core
// does not code yet), shows the core's English.
export function renderMessage(message, catalog) {
  if (message == null) return '';
  if (typeof message !== 'object') return String(message);
  const template = message.code ? catalog['msg.' + message.code] : undefined;
  if (template === undefined) return String(message.text ?? message.message ?? message.code ?? '');
  const params = { ...message.params };
  for (const name of DURATION_PARAMS) if (params[name] !== undefined) params[name] = duration(String(params[name]), catalog);
  return fillTemplate(template, params, (value) => catalog['msgValue.' + value] ?? value);
}

// Durations the core writes for the CLI ("850 ms", "12.3 s", "5.0 min", "1.2 h": sim/conclusions.cpp
// `duration`), put in the catalog's unit words.
const DURATION_PARAMS = ['late', 'early'];
const DURATION = /^(\d[\d.,]*) (ms|s|min|h)$/;
const DURATION_UNIT = { ms: 'unit.millis', s: 'unit.seconds', min: 'unit.minutes', h: 'unit.hours' };
function duration(value, catalog) {
  const m = DURATION.exec(value);
  const template = m && catalog[DURATION_UNIT[m[2]]];
  return typeof template === 'string' ? fillTemplate(template, { value: m[1] }) : value;
}

// Han characters, CJK punctuation and full-width forms.
const CJK = /[\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]/;

// `template` with its {placeholders} filled (word: how a value is shown). A Chinese template
// sets a space between its Han text and a placeholder, for the Latin a value usually is
// ("--max-model-len 必须是"); a value that is Chinese on that side (the control's label
// "上下文长度") takes no space there ("上下文长度必须是").
export function fillTemplate(template, params, word = (value) => value) {
  return template.replace(/( ?)\{(\w+)\}( ?)/g, (m, before, name, after, at) => {
    if (params[name] === undefined) return m;
    const value = word(String(params[name]));
    const prev = template[at - 1];
    const next = template[at + m.length];
    const lead = before && CJK.test(value[0] || '') && CJK.test(prev || '') ? '' : before;
    const tail = after && CJK.test(value[value.length - 1] || '') && CJK.test(next || '') ? '' : after;
    return lead + value + tail;
  });
}
