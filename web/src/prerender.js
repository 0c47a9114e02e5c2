// The default link's first answer without waiting for the calculator module (issue 13).
// scripts/build-site.mjs runs the core (the calculator module under node, the same bytes the
// page loads) on the default model and settings and puts what it returned in the page
// (#kvb-answer): the BudgetInputs it was asked, the core's catalog (without its message
// table, which the page does not read), the model's spec and the Answer, all as the core
// wrote them. Until the module has arrived, a stand-in with the core's interface answers
// from that block, and only for exactly those inputs: any other question throws CoreNotYet,
// which main.js shows as "computing" and asks again once the module is running.

export class CoreNotYet extends Error {
  constructor() {
    super('the calculator module is still loading');
    this.name = 'CoreNotYet';
  }
}

// data: the #kvb-answer block ({model, input, catalog, spec, answer}); configText: the
// default model's config.json as the page holds it (#kvb-config), the one it was computed from.
export function prerenderedCore(data, configText) {
  const inputKey = JSON.stringify(data.input);
  const model = {
    standIn: true,
    spec: data.spec,
    compute(input) {
      if (JSON.stringify(input) !== inputKey) throw new CoreNotYet();
      return data.answer;
    },
    release() {},
  };
  return {
    standIn: true,
    catalog: () => data.catalog,
    kvTypeNames: (engine) => data.catalog.kv_types[engine] || [],
    parseConfig(text, name) {
      if (text !== configText || name !== data.model) throw new CoreNotYet();
      return model;
    },
    parseSize() {
      throw new CoreNotYet();
    },
    parseContext() {
      throw new CoreNotYet();
    },
  };
}
