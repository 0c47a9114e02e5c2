// First answers without waiting for the calculator module (issue 13). scripts/build-site.mjs
// runs the core (the calculator module under node, the same bytes the page loads) and puts
// what it returned where the page finds it before the module: the default link's answer in
// the page itself (#kvb-answer: the BudgetInputs it was asked, the core's catalog without its
// message table, which the page does not read, the model's spec and the Answer), and each
// bundled model's answers at the contexts the page offers in answers/<its catalog file>
// (web/boot.js asks for the one a link needs). Until the module has arrived, a stand-in with
// the core's interface answers from them, and only for exactly those inputs: any other
// question throws CoreNotYet, which main.js shows as "computing" and asks again once the
// module is running.

export class CoreNotYet extends Error {
  constructor() {
    super('the calculator module is still loading');
    this.name = 'CoreNotYet';
  }
}

// data: {model, catalog, spec, answers: [{input, answer}]}, all as the core wrote them (the
// catalog is #kvb-answer's); configText: the model's config.json as the page holds it, the
// one they were computed from.
export function prerenderedCore(data, configText) {
  const answers = new Map(data.answers.map((a) => [JSON.stringify(a.input), a.answer]));
  const model = {
    standIn: true,
    spec: data.spec,
    compute(input) {
      const answer = answers.get(JSON.stringify(input));
      if (!answer) throw new CoreNotYet();
      return answer;
    },
    release() {},
  };
  return {
    standIn: true,
    // More of the build's answers for the same model and config (its answers file): the
    // context slider's stops, answered before the module is here.
    addAnswers(list) {
      for (const a of list) answers.set(JSON.stringify(a.input), a.answer);
    },
    catalog: () => data.catalog,
    kvTypeNames: (engine) => data.catalog.kv_types[engine] || [],
    parseConfig(text, name, quant = '') {
      if (text !== configText || name !== data.model || quant) throw new CoreNotYet();
      return model;
    },
    parseSize() {
      throw new CoreNotYet();
    },
    // A stand-in answers only links whose GPU is a catalog id; another name waits for the core.
    findGpu(name) {
      if (data.catalog.gpus.some((g) => g.id === name)) return name;
      throw new CoreNotYet();
    },
    parseContext() {
      throw new CoreNotYet();
    },
  };
}

// The answers a page can take from the build for `state`'s first model, or null: the default
// link's (#kvb-answer, with the config the page holds) or, for a bundled model, its answers
// file (`file`, from answers/). `key` is JSON.stringify(budgetInputs(state)): a stand-in is
// made only when the first question is one of the answers, so no other waits on one.
export function firstAnswers(state, key, { inline, inlineConfig, file }) {
  if (state.revision || state.quant || !inline) return null;
  if (inline.model === state.model && inlineConfig !== null && JSON.stringify(inline.input) === key) {
    return { data: { ...inline, answers: [{ input: inline.input, answer: inline.answer }] }, configText: inlineConfig };
  }
  if (file?.model === state.model && file.answers.some((a) => JSON.stringify(a.input) === key)) {
    return { data: { model: file.model, catalog: inline.catalog, spec: file.spec, answers: file.answers }, configText: file.config };
  }
  return null;
}
