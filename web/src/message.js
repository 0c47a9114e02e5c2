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
  const params = message.params || {};
  return template.replace(/\{(\w+)\}/g, (m, name) => {
    if (params[name] === undefined) return m;
    const value = String(params[name]);
    return catalog['msgValue.' + value] ?? value;
  });
}
