// DOM building with text nodes only: strings from configs, ids or the Hub can
// never become markup (no innerHTML anywhere in the page).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === null || v === undefined || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k.startsWith('on') && typeof v === 'function') on(el, k.slice(2), v);
      else if (k === 'value') el.value = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

// A label's text with each command-line flag (--max-num-seqs, with its parentheses) kept
// together: a narrow field would otherwise break it at its hyphens.
export function unbrokenFlags(text) {
  return String(text).split(/((?<=^|\s)\(?--?[a-z][\w-]*\)?)/).map((part, i) => (i % 2 ? h('span', { class: 'flag' }, part) : part));
}

export function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function $(sel, root = document) {
  return root.querySelector(sel);
}

// ---------- incremental updates (issue 13) ----------
// A re-render builds its nodes afresh with h() (cheap: nothing is laid out) and then
// patchChildren() carries over only what differs into the live tree, so a slider step
// touches the few text nodes and attributes whose values changed and the browser
// re-lays out only those. Listeners added through h() or on() are recorded, so a kept
// node gets the new closures (a copy button must copy the new command).

// addEventListener that patchChildren can move to a kept node.
export function on(el, type, fn) {
  el.addEventListener(type, fn);
  (el.__kvbOn ||= []).push([type, fn]);
  return el;
}

// Sets text only when it differs (a write of the same text still invalidates layout).
export function setText(el, value) {
  const text = String(value ?? '');
  if (el.textContent !== text) el.textContent = text;
  return el;
}

// A stand-in for a live node the caller owns and keeps (a chart's box): patchChildren
// leaves keep[name] where it is, or puts it there.
export function keepSlot(name) {
  const el = document.createElement('div');
  el.dataset.keep = name;
  return el;
}

function sameKind(a, b) {
  if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) return false;
  return a.nodeType !== 1 || (a.id || '') === (b.id || '');
}

function patchAttributes(live, next) {
  for (const { name } of [...live.attributes]) if (!next.hasAttribute(name)) live.removeAttribute(name);
  for (const { name, value } of next.attributes) if (live.getAttribute(name) !== value) live.setAttribute(name, value);
  if (live.__kvbOn || next.__kvbOn) {
    for (const [type, fn] of live.__kvbOn || []) live.removeEventListener(type, fn);
    for (const [type, fn] of next.__kvbOn || []) live.addEventListener(type, fn);
    live.__kvbOn = next.__kvbOn;
  }
}

// Makes el's children equal to `next` (freshly built nodes, not in the document).
export function patchChildren(el, next, keep = {}) {
  const want = next.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false)
    .map((c) => (c instanceof Node ? c : document.createTextNode(String(c))))
    .map((c) => (c.nodeType === 1 && c.dataset.keep && keep[c.dataset.keep] ? keep[c.dataset.keep] : c));
  let live = el.firstChild;
  for (const n of want) {
    if (live === n) {
      live = live.nextSibling;
    } else if (live && !Object.values(keep).includes(live) && sameKind(live, n)) {
      if (n.nodeType === 1) {
        patchAttributes(live, n);
        patchChildren(live, [...n.childNodes], keep);
      } else if (live.data !== n.data) {
        live.data = n.data;
      }
      live = live.nextSibling;
    } else {
      if (n.nodeType === 1) {
        for (const slot of n.querySelectorAll('[data-keep]')) if (keep[slot.dataset.keep]) slot.replaceWith(keep[slot.dataset.keep]);
      }
      el.insertBefore(n, live);
    }
  }
  while (live) {
    const rest = live.nextSibling;
    el.removeChild(live);
    live = rest;
  }
  return el;
}
