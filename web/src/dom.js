// DOM building with text nodes only: strings from configs, ids or the Hub can
// never become markup (no innerHTML anywhere in the page).
// Every page build and every re-render (each slider step) goes through h() some 500 times:
// for-in rather than Object.entries, and children appended one by one with appendChild
// rather than flattened into a new array and passed to the variadic append(), made it 2-3x
// faster on its first, unoptimized runs (the first answer's) and about 2x after (issue 13).
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v === null || v === undefined || v === false || k === 'key') continue;
      if (k === 'class') el.className = v;
      else if (k === 'text') el.textContent = String(v);
      else if (k.startsWith('on') && typeof v === 'function') on(el, k.slice(2), v);
      else if (k === 'value') el.value = v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) add(el, c);
  return el;
}

// A label's text with each command-line flag (--max-num-seqs, with its parentheses) kept
// together: a narrow field would otherwise break it at its hyphens.
export function unbrokenFlags(text, make = h) {
  return String(text).split(/((?<=^|\s)\(?--?[a-z][\w-]*\)?)/).map((part, i) => (i % 2 ? make('span', { class: 'flag' }, part) : part));
}

// A child as h() takes it: a node, a string (a text node), an array of them at any depth,
// or null / undefined / false (nothing).
function add(el, c) {
  if (c === null || c === undefined || c === false) return;
  if (Array.isArray(c)) {
    for (const x of c) add(el, x);
    return;
  }
  el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
}

export function append(el, children) {
  for (const c of children) add(el, c);
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
// A re-render of a small view (the offload panel) builds its nodes afresh with h() and
// then patchChildren() carries over only what differs into the live tree, so the browser
// re-lays out only the text nodes and attributes whose values changed. The results use
// v() and patchTree() below, which build no nodes at all. Listeners added through h() or on() are recorded, so a kept
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

// The same for `hidden` and a class: writing the value already there still queues an
// attribute record and a style invalidation, on every slider step.
export function setHidden(el, hidden) {
  if (el.hidden !== hidden) el.hidden = hidden;
}

export function dropClass(el, name) {
  if (el.classList.contains(name)) el.classList.remove(name);
}

function sameKind(a, b) {
  if (a.nodeType !== b.nodeType || a.nodeName !== b.nodeName) return false;
  return a.nodeType !== 1 || (a.id || '') === (b.id || '');
}

// Classes another module sets on a live node after rendering (tables.js: whether a table
// scrolls) are its own: listed in live.__kvbOwnClasses, a patch keeps them, so they are
// not taken off and put back (restyling the table) on every step.
function withOwnClasses(live, value) {
  const tokens = value.split(/\s+/).filter(Boolean);
  for (const c of live.__kvbOwnClasses) if (live.classList.contains(c) && !tokens.includes(c)) tokens.push(c);
  return tokens.join(' ');
}

function patchAttributes(live, next) {
  // Most nodes of a re-render have the same attributes in the same order (h() writes them
  // in the order it is given): compared pairwise first, without building any list.
  const la = live.attributes;
  const na = next.attributes;
  let same = la.length === na.length;
  for (let i = 0; same && i < na.length; i++) same = la[i].name === na[i].name && la[i].value === na[i].value;
  if (!same) {
    const own = !!live.__kvbOwnClasses;
    for (const { name } of [...la]) if (!next.hasAttribute(name) && !(own && name === 'class')) live.removeAttribute(name);
    for (const { name, value } of na) {
      const v = own && name === 'class' ? withOwnClasses(live, value) : value;
      if (live.getAttribute(name) !== v) live.setAttribute(name, v);
    }
  }
  if (live.__kvbOn || next.__kvbOn) {
    for (const [type, fn] of live.__kvbOn || []) live.removeEventListener(type, fn);
    for (const [type, fn] of next.__kvbOn || []) live.addEventListener(type, fn);
    live.__kvbOn = next.__kvbOn;
  }
}

// The nodes `next` stands for: arrays flattened, strings as text nodes.
function wanted(next, out = []) {
  for (const c of next) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) {
      wanted(c, out);
      continue;
    }
    out.push(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return out;
}

// Makes el's children equal to `next` (freshly built nodes, not in the document).
export function patchChildren(el, next) {
  patchInto(el, wanted(next));
  return el;
}

// Makes the live node `live` show what the fresh node `n` (of the same kind) does.
function patchNode(live, n) {
  if (n.nodeType === 1) {
    patchAttributes(live, n);
    // A snapshot: patching moves new children out of n into live.
    const kids = [];
    for (let c = n.firstChild; c; c = c.nextSibling) kids.push(c);
    patchInto(live, kids);
  } else if (live.data !== n.data) {
    live.data = n.data;
  }
}

function patchInto(el, want) {
  let live = el.firstChild;
  for (const n of want) {
    // A node that is no longer wanted (an engine's error once the answer fits): removed,
    // so the nodes after it are patched in place instead of all being built anew.
    while (live && live !== n && !sameKind(live, n) && live.nextSibling && sameKind(live.nextSibling, n)) {
      const gone = live;
      live = live.nextSibling;
      el.removeChild(gone);
    }
    if (live === n) {
      live = live.nextSibling;
    } else if (live && sameKind(live, n)) {
      patchNode(live, n);
      live = live.nextSibling;
    } else {
      el.insertBefore(n, live);
    }
  }
  while (live) {
    const rest = live.nextSibling;
    el.removeChild(live);
    live = rest;
  }
}

// ---------- virtual nodes: the results' fast path (issue 13) ----------
// Building ~500 elements with h() and then comparing them with the live ones (reading
// every attribute back through the DOM) was most of a slider step's script time. v() takes
// the same arguments as h() but makes a plain object; patchTree() compares the new tree
// with the one the last render left on the host, in JS alone, and writes into the live
// nodes the old tree holds only the texts and attributes that differ. A part whose shape
// changed (a section, a row, an engine's error) is built anew and put in place; a real
// node given as a child (a toolbar from export.js, the chart's box) is kept when it is the
// same node, or patched like patchChildren does.
// `key` (a table row's label) is not an attribute: it names a child among its siblings, so a
// row put in or taken out is built or removed alone, not by rewriting every row after it.
export function v(tag, attrs, ...children) {
  const n = { tag, key: undefined, attrs: null, on: null, value: undefined, kids: [], el: null };
  if (attrs) {
    const a = {};
    for (const k in attrs) {
      const x = attrs[k];
      if (x === null || x === undefined || x === false) continue;
      if (k === 'key') n.key = String(x);
      else if (k === 'text') n.kids.push({ text: String(x), el: null });
      else if (k.startsWith('on') && typeof x === 'function') (n.on ||= {})[k.slice(2)] = x;
      else if (k === 'value') n.value = x;
      else a[k] = x === true ? '' : String(x);
    }
    n.attrs = a;
  }
  vkids(n.kids, children);
  return n;
}

function vkids(out, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) vkids(out, c);
    else if (typeof c !== 'object') out.push({ text: String(c), el: null });
    else out.push(c.nodeType === undefined ? c : { node: c, el: null });
  }
}

// The text a virtual node will show (textContent of what it builds).
export function vtext(n) {
  if (n === null || n === undefined || n === false) return '';
  if (Array.isArray(n)) return n.map(vtext).join('');
  if (typeof n !== 'object') return String(n);
  if (n.nodeType !== undefined) return n.textContent;
  if (n.text !== undefined) return n.text;
  if (n.node) return n.node.textContent;
  return n.kids.map(vtext).join('');
}

// A render's stamp on the real nodes it placed: an old entry whose node the new tree took
// elsewhere (the chart's box moving) is not removed.
let generation = 0;
let mounted = 0;

// Listeners through one dispatcher per type, reading the node's current map: a kept node
// gets the new answer's closures without an add/removeEventListener per render.
function listen(el, map) {
  el.__kvbV = map || {};
  for (const type in el.__kvbV) {
    const seen = (el.__kvbVTypes ||= new Set());
    if (seen.has(type)) continue;
    seen.add(type);
    el.addEventListener(type, function (e) {
      return this.__kvbV[type]?.call(this, e);
    });
  }
}

function setAttr(el, k, value) {
  if (k === 'class') el.className = el.__kvbOwnClasses ? withOwnClasses(el, value) : value;
  else el.setAttribute(k, value);
}

function mount(n) {
  if (n.text !== undefined) return (n.el = document.createTextNode(n.text));
  if (n.node) {
    n.node.__kvbGen = generation;
    return (n.el = n.node);
  }
  mounted++;
  const el = document.createElement(n.tag);
  for (const k in n.attrs) setAttr(el, k, n.attrs[k]);
  if (n.value !== undefined) el.value = n.value;
  if (n.on) listen(el, n.on);
  for (const c of n.kids) el.appendChild(mount(c));
  return (n.el = el);
}

function sameShape(o, n) {
  if (n.text !== undefined) return o.text !== undefined;
  // A fresh real node (the RoPE line, built each render) is patched into the live one; a
  // node its owner keeps (__kvbKept: a toolbar) goes in itself, so the owner's is the live one.
  if (n.node) return o.node !== undefined && (o.el === n.node || (!n.node.isConnected && !n.node.__kvbKept && sameKind(o.el, n.node)));
  return o.tag === n.tag && (o.attrs?.id || '') === (n.attrs?.id || '');
}

function update(o, n) {
  // The same tree as the last render's (a result card a slider step left for later,
  // render.js): nothing in it changed.
  if (o === n) return;
  const el = (n.el = o.el);
  if (n.text !== undefined) {
    if (o.text !== n.text) el.data = n.text;
    return;
  }
  if (n.node) {
    el.__kvbGen = generation;
    if (el !== n.node) patchNode(el, n.node);
    return;
  }
  const oa = o.attrs;
  const na = n.attrs;
  if (na) for (const k in na) if (!oa || oa[k] !== na[k]) setAttr(el, k, na[k]);
  if (oa) for (const k in oa) if (!na || na[k] === undefined) if (!(k === 'class' && el.__kvbOwnClasses)) el.removeAttribute(k);
  if (n.value !== undefined && el.value !== n.value) el.value = n.value;
  if (n.on || o.on) listen(el, n.on);
  patchKids(el, o.kids, n.kids);
}

// Gone: not a child any more (someone else moved it), or taken by this render elsewhere.
function gone(o, el) {
  return o.el.parentNode !== el || (o.node !== undefined && o.el.__kvbGen === generation);
}

function patchKids(el, old, next) {
  let j = 0;
  const keyed = next.length > 0 && next[0].key !== undefined && old.length > 0 && old[0].key !== undefined;
  const oldKeys = keyed ? new Set(old.map((o) => o.key)) : null;
  const newKeys = keyed ? new Set(next.map((n) => n.key)) : null;
  for (const n of next) {
    while (j < old.length && gone(old[j], el)) j++;
    let o = old[j];
    if (keyed) {
      while (o && (gone(o, el) || !newKeys.has(o.key))) {
        if (!gone(o, el)) el.removeChild(o.el);
        o = old[++j];
      }
      if (!oldKeys.has(n.key)) {
        el.insertBefore(mount(n), o ? o.el : null);
        continue;
      }
    }
    // An old node no longer wanted (an engine's error once the answer fits): removed, so
    // the nodes after it are patched in place instead of all being built anew.
    while (o && !sameShape(o, n) && j + 1 < old.length && !gone(old[j + 1], el) && sameShape(old[j + 1], n)) {
      el.removeChild(o.el);
      o = old[++j];
    }
    if (o && sameShape(o, n)) {
      update(o, n);
      j++;
    } else {
      el.insertBefore(mount(n), o ? o.el : null);
    }
  }
  for (; j < old.length; j++) if (!gone(old[j], el)) el.removeChild(old[j].el);
}

// Makes host's children the tree `children` (v() nodes, strings, real nodes, arrays of
// them) stands for, patching the tree the last call left. Returns how many elements it
// built (0: the same shape, values patched in place).
export function patchTree(host, children) {
  const next = [];
  vkids(next, children);
  generation++;
  mounted = 0;
  const old = host.__kvbTree;
  if (!old) {
    clear(host);
    for (const n of next) host.appendChild(mount(n));
  } else {
    patchKids(host, old, next);
  }
  host.__kvbTree = next;
  return mounted;
}
