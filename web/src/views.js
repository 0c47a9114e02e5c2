// Everything the first answer does not need, in one chunk fetched just after it is painted
// (lazy.js): the chart library with the chart, the simulator view, the log check and lab
// panels. One lazy entry, so the modules these share with the page (dom, i18n, format,
// export, tables, sim-state) land in one shared chunk rather than one chunk per set of
// importers: six requests before the first answer became two (issue 13).
export { KvChart } from './chart.js';
export { buildSimView, simSync } from './sim-view.js';
export { buildCheckPanel } from './check-view.js';
export { buildLabPanel } from './lab-view.js';
