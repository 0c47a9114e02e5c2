// What the first answer does not need, loaded just after it is painted (issue 13): the
// chart library (uPlot, with chart.js), the simulator view (sim-view.js, which shares
// uPlot), the log check and lab panels, all in views.js's chunk. These stand-ins have the
// interface of the real thing and hand over to it once it is here.
import { h } from './dom.js';
import { t } from './i18n.js';

// After the frame that shows the first answer: the chunks' requests and parsing never
// delay it. The first time, "after" means once that frame is on screen (the paint entry
// first-contentful-paint), not once its main-thread part is done (the next animation
// frame): the work queued there (the module, the views chunk, the sections below the fold)
// ran while that first frame was still being rastered, and showed it 40-80 ms later (issue 13,
// docs/page-load.md). Without paint timing, or if no paint is reported within 3 s (a page
// loaded hidden), it runs as later ones do.
let firstPainted = typeof PerformanceObserver === 'undefined' || !PerformanceObserver.supportedEntryTypes?.includes('paint');
const untilFirstPaint = [];
if (!firstPainted) {
  const flush = () => {
    if (firstPainted) return;
    firstPainted = true;
    for (const fn of untilFirstPaint.splice(0)) setTimeout(fn, 0);
  };
  new PerformanceObserver((list, observer) => {
    if (!list.getEntries().some((e) => e.name === 'first-contentful-paint')) return;
    observer.disconnect();
    flush();
  }).observe({ type: 'paint', buffered: true });
  setTimeout(flush, 3000);
}

export function afterPaint(fn) {
  if (firstPainted) requestAnimationFrame(() => setTimeout(fn, 0));
  else untilFirstPaint.push(fn);
}

// A select that holds only its chosen option until its whole list is built: `fill` runs as
// soon as anyone is about to open it, by pointer or keyboard (fill itself runs once).
export function fillBeforeOpen(sel, fill) {
  for (const type of ['pointerdown', 'mousedown', 'focus', 'keydown']) sel.addEventListener(type, fill, true);
}

function once(load) {
  let promise = null;
  const get = () => (promise ||= load().then((m) => (get.module = m)));
  get.module = null;
  return get;
}

// A chunk that did not come (a network error, or a new deploy that replaced it while the page was
// open) is said where its part of the page would be, not left an empty box: a failed import() is
// not tried again, so the way out is a reload (the address keeps the settings).
function notLoaded(error) {
  return h('p', { class: 'warning', role: 'note', 'data-role': 'part-failed' }, t('app.partFailed', { message: error?.message || String(error) }));
}
// A panel's placeholder becomes the panel with its heading (the page's own copy of the name: the
// panel's strings come with the chunk) and the note.
function showNotLoaded(holder, error, name) {
  holder.removeAttribute('aria-busy');
  holder.classList.add('panel');
  holder.append(h('h2', null, t(name)), notLoaded(error));
}

// One chunk holds them all (views.js); each stand-in below waits for it in its own time.
const views = once(() => import('./views.js'));
const chartModule = views;
const simModule = views;
const checkModule = views;
const labModule = views;

// KvChart (chart.js) before uPlot has arrived: keeps the last data and draws it on arrival.
// `plot` and `ro` are the real chart's (null until then); whenReady() gives the real chart.
export class KvChart {
  constructor(container) {
    this.container = container;
    this.real = null;
    this.data = null;
    this.ready = new Promise((resolve, reject) => {
      this.resolveReady = resolve;
      this.rejectReady = reject;
    });
    this.ready.catch(() => {}); // an export asked for meanwhile says nothing more than the box does
    if (chartModule.module) this.attach();
    else afterPaint(() => chartModule().then(() => this.attach(), (e) => this.notLoaded(e)));
  }

  notLoaded(error) {
    // No longer a picture for a screen reader: the note inside is what there is to read.
    this.container.removeAttribute('role');
    this.container.removeAttribute('aria-label');
    this.container.append(notLoaded(error));
    this.rejectReady(error);
  }

  attach() {
    if (this.real) return;
    this.real = new chartModule.module.KvChart(this.container);
    if (this.data) this.real.update(this.data);
    this.resolveReady(this.real);
  }

  update(chart) {
    this.data = chart;
    this.real?.update(chart);
  }

  redraw() {
    this.real?.redraw();
  }

  whenReady() {
    return this.ready;
  }

  get plot() {
    return this.real?.plot ?? null;
  }

  get ro() {
    return this.real?.ro ?? null;
  }
}

// sim-view.js's buildSimView/simSync: until the chunk is here the view is an empty
// placeholder. It is needed once there is a model to simulate: the first simSync()
// (after an answer) loads it just after that answer is painted; the placeholder of the
// latest build is then replaced and synced (which starts a sim=1 link's run).
let simHolder = null; // {holder, app, opts}
let simWanted = false;
let simFailed = null; // the chunk's error once it did not come
// Settles once the simulator's chunk is in (or failed): the log check panel, further down the
// page, is fetched after it so the two never compete for the frames after the first answer.
let simSettled;
const simArrived = new Promise((resolve) => (simSettled = resolve));

export function buildSimView(app, opts) {
  if (simModule.module) return simModule.module.buildSimView(app, opts);
  const holder = h('section', { class: 'sim-placeholder', 'data-lazy': 'sim', 'aria-busy': 'true' });
  if (simFailed) {
    showNotLoaded(holder, simFailed, 'app.part.sim'); // a rebuild (a language switch) after the chunk failed
    return holder;
  }
  simHolder = { holder, app, opts };
  return holder;
}

export function simSync(app) {
  if (simModule.module) {
    simModule.module.simSync(app);
    return;
  }
  if (simWanted) return;
  simWanted = true;
  afterPaint(() => simModule().then((m) => {
    const p = simHolder;
    simHolder = null;
    if (!p?.holder.isConnected) return;
    p.holder.replaceWith(m.buildSimView(p.app, p.opts));
    m.simSync(p.app);
  }, (e) => {
    simFailed = e;
    if (simHolder?.holder.isConnected) showNotLoaded(simHolder.holder, e, 'app.part.sim');
  }).finally(() => simSettled()));
}

// check-view.js's panel ("Compare with your log", issue 12): below the simulator, so it
// arrives after the simulator's chunk (or 2 s after the first paint when no model shows one)
// and takes the placeholder's place.
export function buildCheckPanel(app) {
  if (checkModule.module) return checkModule.module.buildCheckPanel(app);
  const holder = h('section', { class: 'panel log-check', 'data-lazy': 'check', 'aria-busy': 'true' });
  afterPaint(() => Promise.race([simArrived, new Promise((resolve) => setTimeout(resolve, 2000))])
    .then(() => checkModule())
    .then((m) => {
      if (holder.isConnected) holder.replaceWith(m.buildCheckPanel(app));
    }, (e) => showNotLoaded(holder, e, 'app.part.check')));
  return holder;
}

// lab-view.js's panel ("Measured vs formula", issue 12): right after the log check's chunk,
// whose module it shares.
export function buildLabPanel(app) {
  if (labModule.module) return labModule.module.buildLabPanel(app);
  const holder = h('section', { class: 'panel lab', 'data-lazy': 'lab', 'aria-busy': 'true' });
  afterPaint(() => Promise.race([simArrived, new Promise((resolve) => setTimeout(resolve, 2000))])
    .then(() => checkModule())
    .then(() => labModule())
    .then((m) => {
      if (holder.isConnected) holder.replaceWith(m.buildLabPanel(app));
    }, (e) => showNotLoaded(holder, e, 'app.part.lab')));
  return holder;
}
