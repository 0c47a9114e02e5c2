// The calculator module (linked for size, no simulator: simulate() is not there): what
// the page needs for its first answer. Same wrapper and errors as kvbudget.js.
import createKvbudgetCalcModule from '../build-wasm/kvbudget-calc.mjs';
import { makeLoader } from './kvbudget-api.js';

export { KvbudgetError } from './kvbudget-api.js';
export const loadKvbudget = makeLoader(createKvbudgetCalcModule);
