// Model references as people paste them: "org/name", "org/name@revision", or a
// huggingface.co URL of the repo, a tree/blob/resolve link or the config.json link.
// Validated against the Hub's repo-id rules before any request is made, so a
// string typed into the box can never point a fetch at another host.

const MAX_ID_LENGTH = 96; // huggingface_hub validate_repo_id
const PART = /^[A-Za-z0-9_.-]+$/;
const REVISION = /^[A-Za-z0-9_.\-/]+$/;

// Returns {ok: true, id, revision} or {ok: false, reason} where reason is a
// message-catalog key suffix (input.<reason>).
export function parseModelRef(input) {
  let text = String(input ?? '').trim();
  if (!text) return { ok: false, reason: 'empty' };
  let revision = '';

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
      if (rest[0] === 'refs' && rest.length >= 3) revision = rest.slice(0, 3).join('/');
      else revision = rest[0];
    }
    if (idParts.length > 2) return { ok: false, reason: 'badId' };
    text = idParts.join('/');
  } else {
    const at = text.indexOf('@');
    if (at >= 0) {
      revision = text.slice(at + 1);
      text = text.slice(0, at);
      if (!revision) return { ok: false, reason: 'badRevision' };
    }
  }

  const id = text;
  if (!validId(id)) return { ok: false, reason: 'badId' };
  if (revision && !validRevision(revision)) return { ok: false, reason: 'badRevision' };
  return { ok: true, id, revision };
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
