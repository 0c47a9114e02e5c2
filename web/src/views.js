// Everything the first answer does not need, in one chunk fetched just after it is painted
// (lazy.js): the chart library with the chart, the simulator view, the log check and lab
// panels. The modules these share with the page (dom, i18n, format, export, tables,
// sim-state) are the page's own instances, which its inline module hands over
// (scripts/build-site.mjs, self.kvbPageModules): none is fetched before the first answer,
// and one i18n.js holds the language and strings (issue 13). The English
// only these views use (sim.*, lab.*, check.*) comes with them: scripts/build-site.mjs
// gives this import of en.json those keys and the page's bundle the others.
import en from '../i18n/en.json';
import { addStrings } from './i18n.js';

addStrings('en', en);
export { KvChart } from './chart.js';
export { buildSimView, simSync } from './sim-view.js';
export { buildCheckPanel, loadCheckCore as loadFullCore } from './check-view.js';
export { buildLabPanel } from './lab-view.js';
export { chartSvg, chartPng } from './chart-export.js';
// A GGUF repo's header over range requests: needed only for a GGUF link or quant.
export { loadGgufModel } from './gguf-hub.js';
