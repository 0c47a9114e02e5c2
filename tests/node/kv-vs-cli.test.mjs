// The WASM module gives the same KV numbers as the native CLI (`kvbudget kv --json`)
// on every fixture config, for each engine's element types.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { core, cli, fixtures } from './helpers.mjs';

const CASES = [
  { engine: 'vllm', dtype: 'auto', context: 32768, seqs: 1 },
  { engine: 'vllm', dtype: 'fp8', context: 8192, seqs: 4 },
  { engine: 'llamacpp', dtype: 'f16', context: 4096, seqs: 2 },
  { engine: 'llamacpp', dtype: 'q8_0', context: 131072, seqs: 1 },
  { engine: 'llamacpp', dtype: 'q4_0', context: 1000, seqs: 3 },
  { engine: 'transformers', dtype: 'auto', context: 16384, seqs: 1 },
];

const kvb = await core();

for (const fx of fixtures()) {
  test(`kv numbers match the CLI: ${fx.id}`, () => {
    const text = fs.readFileSync(fx.path, 'utf8');
    let model;
    try {
      model = kvb.parseConfig(text, fx.id);
    } catch (e) {
      // A config the core refuses must be refused the same way by both.
      const r = cli(['kv', fx.path, '--json']);
      assert.equal(r.ok, false, `CLI accepted ${fx.id} but WASM refused it: ${e.message}`);
      assert.match(r.stderr, new RegExp(e.message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
      return;
    }
    try {
      for (const c of CASES) {
        const args = ['kv', fx.path, '--json', '--engine', c.engine, '--kv-dtype', c.dtype, '--context', String(c.context), '--seqs', String(c.seqs)];
        const r = cli(args);
        const input = { engine: c.engine, context: c.context, seqs: c.seqs, kvDtype: c.dtype, cacheTypeK: c.dtype, cacheTypeV: c.dtype };
        if (!r.ok) {
          assert.throws(() => model.compute(input), (e) => e.name === 'KvbudgetError' && r.stderr.includes(e.message), `${fx.id} ${args.join(' ')}`);
          continue;
        }
        const v = model.compute(input);
        const where = `${fx.id} ${c.engine} ${c.dtype}`;
        assert.equal(v.kv.bytesPerToken, r.json.bytes_per_token, where + ' bytes_per_token');
        assert.equal(v.kv.windowedBytesPerToken, r.json.windowed_bytes_per_token, where + ' windowed');
        assert.equal(v.kv.stateBytesPerSeq, r.json.state_bytes_per_seq, where + ' state');
        assert.equal(v.kv.bytesTotal, r.json.bytes_at_context, where + ' bytes_at_context');
        assert.deepEqual(v.kv.kinds.map((k) => [k.kind, k.layers, k.bytesPerToken, k.window, k.stateBytes]),
          r.json.kinds.map((k) => [k.kind, k.layers, k.bytes_per_token, k.window, k.state_bytes]), where + ' kinds');
        const mha = v.comparison.find((x) => x.variant === 'MHA');
        const mqa = v.comparison.find((x) => x.variant === 'MQA');
        assert.equal(mha.bytesPerToken, r.json.mha_bytes_per_token, where + ' MHA');
        assert.equal(mqa.bytesPerToken, r.json.mqa_bytes_per_token, where + ' MQA');
        assert.deepEqual(v.contextTable.map((x) => [x.context, x.bytesPerSeq]), r.json.context_table.map((x) => [x.context, x.bytes]), where + ' context table');
        // The formula groups add up to the per-token total the headline shows.
        const full = v.formula.filter((g) => g.kind === 'full' || g.kind === 'mla').reduce((a, g) => a + g.bytesPerToken, 0);
        assert.equal(full, v.kv.bytesPerToken, where + ' formula sum');
      }
    } finally {
      model.release();
    }
  });
}
