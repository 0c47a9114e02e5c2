// The whole module (calculator + simulator, linked for speed): the simulator's Web
// Worker and the node tests load this one; the page's first answer uses kvbudget-calc.js.
// The wrapper itself is kvbudget-api.js; see kvbudget.d.ts for the contract.
import createKvbudgetModule from '../build-wasm/kvbudget.mjs';
import { makeLoader } from './kvbudget-api.js';

export { KvbudgetError, unpackSnapshots, ownerRuns } from './kvbudget-api.js';
export const loadKvbudget = makeLoader(createKvbudgetModule);
