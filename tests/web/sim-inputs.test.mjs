// The simulator view's fields and exports in real Chromium. A field holding a value the
// core would refuse is flagged under it in the core's words (input_out_of_range,
// sim_bad_rate, sim_bad_fraction, with the field's label) and Run refuses instead of
// running the previous values; the result says which workload and rate it ran. A chart
// exports at one size whatever the screen's width, title, settings and whole legend
// inside the image; exports carry the run's settings and a name of their own.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { startAll, openPage, clipboardAfter, simulateCli } from './harness.mjs';

let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

const LLAMA = 'model=meta-llama/Llama-3.1-8B&gpu=a100-80gb&ctx=16384';

async function waitSim(page, states = ['done', 'error'], timeout = 120000) {
  await page.waitForSelector('#sim', { state: 'attached', timeout: 30000 });
  await page.waitForFunction((s) => s.includes(document.querySelector('#sim')?.dataset.simState), states, { timeout });
  return page.$eval('#sim', (e) => e.dataset.simState);
}

async function runDone(page) {
  await page.click('[data-action="sim-run"]');
  const state = await waitSim(page);
  assert.equal(state, 'done', await page.textContent('[data-role="sim-error"]'));
}

async function typeInto(page, sel, text) {
  await page.fill(sel, '');
  await page.focus(sel);
  await page.keyboard.type(text);
  await page.press(sel, 'Tab');
}

// The message under each flagged field, by input id.
async function fieldErrors(page) {
  return page.$$eval('#sim [aria-invalid="true"]', (els) => Object.fromEntries(els.map((e) => [e.id, document.getElementById(e.getAttribute('aria-describedby')).textContent])));
}

async function downloadOf(page, selector) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click(selector)]);
  return { name: dl.suggestedFilename(), bytes: fs.readFileSync(await dl.path()) };
}

test('invalid simulator fields are flagged in the core\'s words and Run refuses them', async () => {
  const { page, context, errors } = await openPage(env, LLAMA + '&simReq=300&simRate=5&simPol=paged');
  await runDone(page);
  assert.equal(await page.textContent('[data-role="sim-run"]'), 'Workload: ShareGPT-like lengths (mean 161 in / 338 out); 300 requests, Poisson arrivals at 5 requests/s; seed 0.');
  const firstMs = await page.$eval('#sim', (e) => e.dataset.simMs);

  await typeInto(page, '#sim-req', '0');
  await typeInto(page, '#sim-rate', '-1');
  await typeInto(page, '#sim-seqs', '3.5');
  await typeInto(page, '#sim-frac', '0');
  await typeInto(page, '#sim-tok', '1e'); // the browser cannot read it: its value is ''
  const expected = {
    'sim-req': 'Requests must be a whole number from 1 to 10,000,000, got 0',
    'sim-rate': 'Arrival rate must be a positive number of requests per second, got -1',
    'sim-seqs': 'vLLM --max-num-seqs must be a whole number from 1 to 2,000,000,000, got 3.5',
    'sim-tok': '--max-num-batched-tokens must be a whole number from 1 to 2,000,000,000, got something that is not a number',
    'sim-frac': 'Share of requests with the prefix must be a number above 0 and at most 1, got 0',
  };
  assert.deepEqual(await fieldErrors(page), expected);
  // The result beside them is said to be of other settings.
  await page.waitForSelector('[data-role="sim-stale"]');

  await page.click('[data-action="sim-run"]');
  assert.equal(await waitSim(page, ['invalid', 'running', 'done', 'error']), 'invalid');
  assert.equal(await page.textContent('[data-role="sim-error"]'), 'Not run: ' + Object.values(expected).join('; ') + '.');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'sim-req');
  assert.equal(await page.$eval('#sim', (e) => e.dataset.simMs), firstMs, 'no new run');
  // The link (written a moment later) keeps the values that ran.
  await page.waitForFunction(() => new URL(location.href).searchParams.get('simRate') === '5' && new URL(location.href).searchParams.get('simReq') === '300');

  // Put right, the refusal goes; Run runs what the fields show (empty = the default).
  await page.fill('#sim-req', '1');
  await page.fill('#sim-rate', '');
  await page.fill('#sim-seqs', '');
  await page.fill('#sim-tok', '');
  await page.fill('#sim-frac', '');
  await page.press('#sim-frac', 'Tab');
  assert.deepEqual(await fieldErrors(page), {});
  assert.equal(await page.isHidden('[data-role="sim-error"]'), true);
  await runDone(page);
  assert.match(await page.textContent('[data-role="sim-status"]'), /^Simulated 1 request in [\d.]+ s\.$/);
  assert.equal(await page.textContent('[data-role="sim-run"]'), 'Workload: ShareGPT-like lengths (mean 161 in / 338 out); 1 request, all arriving at once; seed 0.');
  const cli = simulateCli('meta-llama--Llama-3.1-8B', ['--gpu', 'a100-80gb', '--max-model-len', '16384', '--requests', '1']);
  const finished = await page.$eval('[data-table="sim-compare"] tbody tr td:nth-of-type(5)', (td) => Number(td.dataset.value));
  assert.equal(finished, cli.policies[0].finished);
  assert.equal(finished, 1);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the same refusal in Chinese; Chinese table headers break between words', async () => {
  const { page, context, errors } = await openPage(env, LLAMA + '&simReq=40&simRate=5&lang=zh-CN', { viewport: { width: 390, height: 844 } });
  await runDone(page);
  assert.equal(await page.textContent('[data-role="sim-run"]'), '负载：ShareGPT 式长度（平均输入 161 / 输出 338）；40 个请求，按泊松过程到达，每秒 5 个请求；随机种子 0。');
  // A header never breaks inside a word (已/用 on a phone): a new line starts only after a
  // space or a slash, or at an opening bracket.
  const breaks = await page.$$eval('[data-table="sim-compare"] thead th', (ths) => ths.flatMap((th) => {
    const node = th.firstChild;
    const out = [];
    let top = null;
    for (let i = 0; i < node.length; i++) {
      const r = document.createRange();
      r.setStart(node, i);
      r.setEnd(node, i + 1);
      const rect = r.getClientRects()[0];
      if (!rect) continue;
      if (top !== null && rect.top > top + 2 && !/[\s/]/.test(node.data[i - 1]) && !/[（(]/.test(node.data[i])) out.push(node.data.slice(0, i) + '|' + node.data.slice(i));
      top = rect.top;
    }
    return out;
  }));
  assert.deepEqual(breaks, []);
  await typeInto(page, '#sim-req', '0');
  await typeInto(page, '#sim-rate', '-1');
  await page.click('[data-action="sim-run"]');
  assert.equal(await waitSim(page, ['invalid', 'running', 'done', 'error']), 'invalid');
  assert.deepEqual(await fieldErrors(page), {
    'sim-req': '请求数必须是 1 到 10,000,000 之间的整数，收到的是 0',
    'sim-rate': '到达速率必须是正数（每秒请求数），收到的是 -1',
  });
  assert.equal(await page.textContent('[data-role="sim-error"]'), '未运行：请求数必须是 1 到 10,000,000 之间的整数，收到的是 0；到达速率必须是正数（每秒请求数），收到的是 -1。');
  assert.deepEqual(errors, []);
  await context.close();
});

// An error shown as a field is left pushes Run down: a click or tap on Run while the
// field still had the focus landed on the moved button's old place and was lost (the
// status said the settings had changed). Run keeps the focus in the field, so the press
// runs, or refuses naming the field, wherever the error would have moved it.
for (const [width, touch] of [[390, true], [1280, false]]) test(`Run pressed from a field being typed in runs or refuses (${width} px${touch ? ', touch' : ''})`, async () => {
  const { page, context, errors } = await openPage(env, LLAMA + '&simReq=40&simPol=paged', { viewport: { width, height: 844 }, touch });
  await runDone(page);
  const press = () => (touch ? page.tap('[data-action="sim-run"]') : page.click('[data-action="sim-run"]'));
  const cases = [
    ['#sim-beam', '2000', 'Beam width must be a whole number from 1 to 1,024, got 2,000'],
    ['#sim-frac', '0', 'Share of requests with the prefix must be a number above 0 and at most 1, got 0'],
  ];
  for (const [sel, value, message] of cases) {
    await page.fill(sel, value); // focused, not left
    const before = await page.locator('[data-action="sim-run"]').boundingBox();
    await press();
    assert.equal(await waitSim(page, ['invalid', 'running', 'done', 'error']), 'invalid', sel);
    assert.equal(await page.textContent('[data-role="sim-error"]'), `Not run: ${message}.`);
    assert.equal((await fieldErrors(page))[sel.slice(1)], message);
    assert.ok(before, 'Run was on screen');
    await page.fill(sel, '');
    await page.press(sel, 'Tab');
    assert.deepEqual(await fieldErrors(page), {});
  }
  // A valid value typed and Run pressed at once runs that value.
  await page.fill('#sim-req', '30');
  await press();
  assert.equal(await waitSim(page), 'done');
  assert.match(await page.textContent('[data-role="sim-run"]'), /; 30 requests, all arriving at once;/);
  assert.doesNotMatch(await page.textContent('[data-role="sim-status"]'), /changed/);
  // The run took the field's value, then the field let go (a phone's keyboard closes over the result).
  assert.notEqual(await page.evaluate(() => document.activeElement?.id), 'sim-req');
  assert.deepEqual(errors, []);
  await context.close();
});

// Max reserves max-model-len for each of a request's 4 samples, 4 x 8,192 = 32,768 slots
// of the 31,034 the RTX 4090 leaves Qwen3-8B: it refuses all 100 requests. It read as the
// best policy: "0.0% of the KV memory in use held no token", TTFT 0.000 s in the table,
// the Markdown and the CSV.
test('a policy that served nothing shows no figure as measured, is not ranked, and says why', async () => {
  const { page, context, errors } = await openPage(env, 'lang=en&model=Qwen/Qwen3-8B&gpu=rtx-4090&ctx=8192&sim=1&simN=4&simReq=100', { clipboard: true });
  assert.equal(await waitSim(page), 'done');
  const cli = simulateCli('Qwen--Qwen3-8B', ['--gpu', 'rtx-4090', '--max-model-len', '8192', '--policy', 'all', '--n', '4', '--requests', '100']);
  assert.equal(cli.policies[1].policy, 'max');
  assert.deepEqual([cli.policies[1].finished, cli.policies[1].refused, cli.policies[1].refused_no_room], [0, 100, 100]);
  for (const k of ['ttft_p50_s', 'tpot_p50_s', 'normalized_latency_s', 'throughput_tokens_per_s', 'token_states_of_used_fraction', 'mean_running']) assert.equal(cli.policies[1][k], null, k);

  const found = await page.$$eval('[data-role="sim-conclusions"] li', (lis) => lis.map((li) => [li.dataset.code, li.textContent]));
  assert.deepEqual(found.map(([c]) => c), ['sim_most_served', 'sim_policy_waste', 'sim_served_none_no_room', 'sim_policy_waste', 'sim_policy_waste', 'sim_why']);
  assert.match(found[0][1], /^Paged \(vLLM\) served the most: 100 of 100 requests finished/);
  assert.equal(found[2][1], 'Max (Orca) served none of the 100 requests: under its reservation every request needs more than the 31,034 token slots the KV cache holds, so each was refused');

  // Refusals in the main table; Max's figures not measured, in the page, the Markdown and the CSV.
  const cols = (await page.$eval('[data-table="sim-compare"]', (e) => e.closest('.table-block').dataset.columns)).split(',');
  assert.ok(cols.includes('refused'), cols.join());
  const row = (table, i) => page.$$eval(`[data-table="${table}"] tbody tr:nth-of-type(${i}) > *`, (cells) => cells.map((c) => c.textContent));
  const maxCompare = await row('sim-compare', 2);
  assert.equal(maxCompare[0], 'Max (Orca)');
  assert.equal(maxCompare[cols.indexOf('refused')], '100');
  for (const k of ['token_states_of_used_fraction', 'reserved_of_used_fraction', 'mean_running', 'throughput_tokens_per_s']) assert.equal(maxCompare[cols.indexOf(k)], '—', k);
  assert.deepEqual(await row('sim-latency', 2), ['Max (Orca)', '—', '—', '—', '—', '—']);
  const md = await clipboardAfter(page, '[data-export-for="sim-latency"] [data-export="markdown"]');
  const lines = md.split('\n');
  assert.deepEqual(lines.slice(0, 4), [await page.textContent('[data-table="sim-latency"] caption'), '', 'Model: Qwen/Qwen3-8B · GPU: NVIDIA GeForce RTX 4090', '']);
  assert.ok(lines.includes('| Max (Orca) | — | — | — | — | — |'), md);
  const csv = await downloadOf(page, '[data-export-for="sim-latency"] [data-export="csv"]');
  const [head, , second] = csv.bytes.toString('utf8').slice(1).split('\r\n').map((r) => r.split(','));
  assert.deepEqual(second.slice(0, 6), ['Max (Orca)', '', '', '', '', '']);
  assert.equal(second[head.indexOf('Model')], 'Qwen/Qwen3-8B');
  assert.equal(second[head.indexOf('GPU')], 'NVIDIA GeForce RTX 4090');
  // Its memory and queue charts say it ran nothing, not an empty box.
  assert.equal(await page.$('[data-chart="sim-memory-max"]'), null);
  assert.deepEqual(await page.$$eval('[data-chart-none="max"] p', (ps) => ps.map((p) => p.textContent)),
    Array(2).fill('Max (Orca) ran no step: it refused every request, so there is nothing to draw'));
  assert.deepEqual(errors, []);
  await context.close();
});

// What an exported SVG holds, laid out by the browser: every text's box, in the image's
// coordinates, and the image's size.
async function svgLayout(page, text) {
  return page.evaluate((svgText) => {
    const host = document.createElement('div');
    host.style.cssText = 'position:absolute;left:0;top:0';
    host.innerHTML = svgText;
    document.body.append(host);
    const svg = host.querySelector('svg');
    const texts = [...svg.querySelectorAll('text')].map((t) => {
      const b = t.getBoundingClientRect();
      const o = svg.getBoundingClientRect();
      return { text: t.textContent, left: b.left - o.left, right: b.right - o.left, top: b.top - o.top, bottom: b.bottom - o.top };
    });
    const out = { width: Number(svg.getAttribute('width')), height: Number(svg.getAttribute('height')), title: svg.querySelector('title').textContent, texts, rects: svg.querySelectorAll(':scope > rect').length - 1 };
    host.remove();
    return out;
  }, text);
}

for (const [lang, width] of [['en', 390], ['zh-CN', 1280]]) test(`charts export whole at 800 px from a ${width} px screen (${lang})`, async () => {
  const { page, context, errors } = await openPage(env, `${LLAMA}&simReq=300&simRate=5&simPol=paged,max&lang=${lang}`, { viewport: { width, height: 844 }, clipboard: true });
  await runDone(page);
  const memory = { en: ['Token states', 'Reserved', 'Internal fragmentation', 'External fragmentation', 'Cached (prefix)', 'Null block (reserved by vLLM)', 'Free'],
    'zh-CN': ['token 状态', '预留', '内部碎片', '外部碎片', '已缓存（前缀）', '空块（vLLM 保留）', '空闲'] }[lang];
  const stem = /^kvbudget-meta-llama-Llama-3\.1-8B-sim-memory-paged-sharegpt-300req-5rps-bs16-seed0-[0-9a-f]{6}\.(png|svg)$/;

  const png = await downloadOf(page, '[data-export-for="sim-memory-paged"] [data-export="png"]');
  assert.match(png.name, stem);
  assert.equal(png.bytes.toString('latin1', 12, 16), 'IHDR');
  const svg = await downloadOf(page, '[data-export-for="sim-memory-paged"] [data-export="svg"]');
  assert.match(svg.name, stem);
  const L = await svgLayout(page, svg.bytes.toString('utf8'));
  // One size from any screen; the PNG is the SVG's layout over uPlot's canvas (1x here).
  assert.equal(L.width, 800);
  assert.deepEqual([png.bytes.readUInt32BE(16), png.bytes.readUInt32BE(20)], [L.width, L.height]);
  // Every text inside the image: title, settings, axes, the whole legend.
  const outside = L.texts.filter((t) => t.text && (t.left < -0.5 || t.right > L.width + 0.5 || t.top < -0.5 || t.bottom > L.height + 0.5));
  assert.deepEqual(outside, []);
  const texts = L.texts.map((t) => t.text);
  for (const label of memory) assert.ok(texts.includes(label), `legend ${label}: ${texts.join(' | ')}`);
  assert.equal(L.rects, memory.length, 'a filled swatch per part');
  assert.equal(L.title, (lang === 'en' ? 'KV cache memory over time: Paged (vLLM)' : 'KV Cache 显存随时间变化：分页（vLLM）') + ' — meta-llama/Llama-3.1-8B');
  const all = texts.join(' ');
  const run = await page.textContent('[data-role="sim-run"]');
  assert.ok(all.replace(/\s+/g, '').includes(run.replace(/\s+/g, '')), `the run's settings: ${run}`);
  assert.ok(all.includes(lang === 'en' ? 'block size 16' : '块大小 16'));
  assert.ok(texts.includes(lang === 'en' ? 'KV cache share' : 'KV Cache 占比'), 'y axis label');

  // The queue chart names its y axis.
  const q = await svgLayout(page, (await downloadOf(page, '[data-export-for="sim-queue-max"] [data-export="svg"]')).bytes.toString('utf8'));
  assert.ok(q.texts.some((t) => t.text === (lang === 'en' ? 'Requests' : '请求数')), 'queue y label');
  assert.equal(q.width, 800);

  // Latency CSV: units in the headers, the core's seconds, the run's settings as columns.
  const csv = await downloadOf(page, '[data-export-for="sim-latency"] [data-export="csv"]');
  assert.match(csv.name, /^kvbudget-meta-llama-Llama-3\.1-8B-sim-latency-sharegpt-300req-5rps-bs16-seed0-[0-9a-f]{6}\.csv$/);
  const [head, first] = csv.bytes.toString('utf8').slice(1).split('\r\n').map((r) => r.split(','));
  const col = (label) => first[head.indexOf(label)];
  const tpot = await page.$eval('[data-table="sim-latency"] tbody tr td:nth-of-type(3)', (td) => td.dataset.value);
  if (lang === 'en') {
    assert.deepEqual(head.slice(0, 6), ['Policy', 'TTFT p50 (s)', 'TTFT p99 (s)', 'TPOT p50 (s)', 'End-to-end p50 (s)', 'Normalized latency (per output token) (s)']);
    assert.equal(col('TPOT p50 (s)'), tpot);
    assert.deepEqual([col('Workload'), col('Requests'), col('Arrivals'), col('Arrival rate (requests/s)'), col('Seed'), col('Block size (tokens)')], ['sharegpt', '300', 'poisson', '5', '0', '16']);
    // The Markdown copy says what it is of.
    const md = await clipboardAfter(page, '[data-export-for="sim-compare"] [data-export="markdown"]');
    assert.deepEqual(md.split('\n').slice(0, 6), ['Time-weighted shares of the KV cache memory in use, per allocation policy', '', 'Model: meta-llama/Llama-3.1-8B · GPU: NVIDIA A100 80GB SXM4', '', run, '']);
  } else {
    assert.equal(col('TPOT p50（秒）'), tpot);
    assert.equal(col('到达速率（请求/秒）'), '5');
  }

  // Another run of the same model exports under another name.
  await page.fill('#sim-rate', '6');
  await page.press('#sim-rate', 'Tab');
  await runDone(page);
  const again = await downloadOf(page, '[data-export-for="sim-memory-paged"] [data-export="svg"]');
  assert.match(again.name, /-sharegpt-300req-6rps-bs16-seed0-[0-9a-f]{6}\.svg$/);
  // Nothing is left of the charts drawn for the exports.
  assert.equal(await page.$$eval('body > div[aria-hidden="true"] .uplot', (u) => u.length), 0);
  assert.deepEqual(errors, []);
  await context.close();
});
