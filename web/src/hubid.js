// Model references as people paste them: "org/name", "org/name@revision", or a
// huggingface.co URL of the repo, a tree/blob/resolve link or the config.json link.
// Validated against the Hub's repo-id rules before any request is made, so a
// string typed into the box can never point a fetch at another host.

const MAX_ID_LENGTH = 96; // huggingface_hub validate_repo_id
const PART = /^[A-Za-z0-9_.-]+$/;
const REVISION = /^[A-Za-z0-9_.\-/]+$/;

const QUANT = /^[A-Za-z0-9_.-]{1,64}$/;

// The reference as parseModelRef reads it back: "org/name", "org/name@revision", "org/name:QUANT".
export function modelRefText(id, revision = '', quant = '') {
  return (revision ? `${id}@${revision}` : id) + (quant ? ':' + quant : '');
}

// Returns {ok: true, id, revision[, quant][, file]} or {ok: false, reason} where reason is a
// message-catalog key suffix (input.<reason>). quant: the tag of "org/repo:Q4_K_M" (as
// llama-server -hf and ollama take it); file: the .gguf of a Hub file link ('' otherwise).
export function parseModelRef(input) {
  let text = String(input ?? '').trim();
  // The command people copy: "ollama run hf.co/org/repo:Q4_K_M", "llama-server -hf org/repo:Q4_K_M".
  text = text.replace(/^(?:ollama\s+(?:run|pull)|llama-(?:server|cli)\s+(?:-hf|--hf-repo))\s+/i, '').trim();
  if (!text) return { ok: false, reason: 'empty' };
  let revision = '';
  let quant = null; // null: no ':' at all
  let file = '';

  const url = asHubUrl(text);
  if (url === null) return { ok: false, reason: 'foreignUrl' };
  if (url) {
    const parts = url.pathname.split('/').filter(Boolean).map(safeDecode);
    if (parts.includes(null)) return { ok: false, reason: 'badId' };
    // /models/org/name is not a repo path, but "/api/models/..." links are not pasted by people.
    if (parts[0] === 'models' || parts[0] === 'datasets' || parts[0] === 'spaces') {
      if (parts[0] !== 'models') return { ok: false, reason: 'notModel' };
      parts.shift();
    }
    const kw = parts.findIndex((p) => p === 'tree' || p === 'blob' || p === 'resolve' || p === 'raw' || p === 'commit');
    let idParts = kw >= 0 ? parts.slice(0, kw) : parts;
    if (kw >= 0 && parts[kw + 1]) {
      // tree/<rev>[/path]; blob|resolve/<rev>/<file>. refs/pr/N revisions span 3 segments.
      const rest = parts.slice(kw + 1);
      const revParts = rest[0] === 'refs' && rest.length >= 3 ? 3 : 1;
      revision = rest.slice(0, revParts).join('/');
      const path = rest.slice(revParts).join('/');
      if (parts[kw] !== 'tree' && /\.gguf$/i.test(path)) {
        if (!validFile(path)) return { ok: false, reason: 'badId' };
        file = path;
      }
    }
    if (idParts.length > 2) return { ok: false, reason: 'badId' };
    text = idParts.join('/');
    const colon = text.indexOf(':');
    if (colon >= 0) {
      quant = text.slice(colon + 1);
      text = text.slice(0, colon);
    }
  } else {
    const colon = text.indexOf(':');
    if (colon >= 0) {
      quant = text.slice(colon + 1);
      text = text.slice(0, colon);
    }
    const at = text.indexOf('@');
    if (at >= 0) {
      revision = text.slice(at + 1);
      text = text.slice(0, at);
      if (!revision) return { ok: false, reason: 'badRevision' };
    }
  }
  if (quant !== null && !QUANT.test(quant)) return { ok: false, reason: 'badQuant' };

  const id = text;
  if (!validId(id)) return { ok: false, reason: 'badId' };
  if (revision && !validRevision(revision)) return { ok: false, reason: 'badRevision' };
  const ref = { ok: true, id, revision };
  if (quant) ref.quant = quant;
  if (file) ref.file = file;
  return ref;
}

// A file path inside a repo: plain segments, no traversal.
export function validFile(path) {
  return typeof path === 'string' && path.length > 0 && path.length <= 255 &&
    path.split('/').every((p) => /^[A-Za-z0-9_.+-]+$/.test(p) && p !== '.' && p !== '..');
}

export function validQuant(q) {
  return typeof q === 'string' && QUANT.test(q);
}

// null: a URL of some other host; undefined: not a URL at all.
function asHubUrl(text) {
  let candidate = text;
  if (/^huggingface\.co\//i.test(candidate) || /^hf\.co\//i.test(candidate)) candidate = 'https://' + candidate;
  if (!/^[a-z][a-z0-9+.-]*:\/\//i.test(candidate)) return undefined;
  let u;
  try {
    u = new URL(candidate);
  } catch {
    return null;
  }
  const host = u.hostname.toLowerCase();
  if ((u.protocol === 'https:' || u.protocol === 'http:') &&
      (host === 'huggingface.co' || host === 'www.huggingface.co' || host === 'hf.co')) {
    return u;
  }
  return null;
}

function safeDecode(s) {
  try {
    return decodeURIComponent(s);
  } catch {
    return null;
  }
}

export function validId(id) {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_ID_LENGTH) return false;
  const parts = id.split('/');
  if (parts.length > 2) return false;
  for (const p of parts) {
    if (!PART.test(p)) return false;
    if (/^[-.]|[-.]$/.test(p)) return false;
    if (p.includes('--') || p.includes('..')) return false;
  }
  return true;
}

export function validRevision(rev) {
  return typeof rev === 'string' && rev.length > 0 && rev.length <= 255 && REVISION.test(rev) &&
    !rev.includes('..') && !rev.startsWith('/') && !rev.endsWith('/');
}

// "org/name" -> "org--name": the catalog's file naming.
export function catalogFileName(id) {
  return id.replace('/', '--') + '.json';
}
