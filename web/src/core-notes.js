// Matching the C++ core's English notes against the coreNote.* templates of the
// English catalog, so the page can show them in its own language with the same
// values. A note with no template stays as the core wrote it;
// tests/node/core-notes.test.mjs keeps that from happening on the bundled models.

// [{key, names, re}] from a catalog: "{n} layers have ..." -> /^(.+?) layers have ...$/.
export function compileCoreTemplates(catalog) {
  const out = [];
  for (const [key, tpl] of Object.entries(catalog)) {
    if (!key.startsWith('coreNote.')) continue;
    const names = [];
    const source = tpl.split(/(\{\w+\})/).map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (m) {
        names.push(m[1]);
        return '(.+?)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    }).join('');
    out.push({ key, names, re: new RegExp('^' + source + '$') });
  }
  return out;
}

// {key, params} of the first template the note matches, or null.
export function matchCoreNote(templates, text) {
  for (const { key, names, re } of templates) {
    const m = re.exec(text);
    if (m) return { key, params: Object.fromEntries(names.map((n, i) => [n, m[i + 1]])) };
  }
  return null;
}
