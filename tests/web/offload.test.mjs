// llama.cpp partial offload on the page (issue 10.5): the -ngl and RAM controls, the
// command, and the numbers equal to `kvbudget budget --ngl N --ram SIZE`; Macs keep
// their wired-memory rule.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { startAll, openPage, metrics, root } from './harness.mjs';

const cliPath = process.env.KVB_CLI || path.join(root, 'build/kvbudget');
const config = path.join(root, 'tests/fixtures/configs/Qwen--Qwen3-8B.json');
let env;
before(async () => {
  env = await startAll();
});
after(async () => {
  await env?.close();
});

function cli(args) {
  return JSON.parse(execFileSync(cliPath, ['budget', config, '--engine', 'llamacpp', ...args, '--json'], { encoding: 'utf8' }));
}

test('-ngl and RAM from the URL and the controls: the split, the command, the CLI\'s numbers', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&engine=llamacpp&gpu=rtx-3060-12gb&ctx=32768&weights=Q8_0&ngl=20&ram=17179869184');
  assert.deepEqual(errors, []);
  const want = cli(['--gpu', 'rtx-3060-12gb', '--max-model-len', '32768', '--weights', 'Q8_0', '--ngl', '20', '--ram', '16GiB']);
  const m = await metrics(page);
  assert.equal(Number(m['total-bytes']), want.metrics['total-bytes']);
  assert.equal(Number(m['max-context']), want.metrics['max-context']);
  assert.equal(await page.textContent('[data-role="command"]'), want.budget.command);
  assert.match(want.budget.command, / -ngl 20$/);
  const off = want.budget.llamacpp.offload;
  assert.equal(off.n_gpu_layers, 20);
  const text = await page.textContent('[data-role="offload"]');
  assert.match(text, /-ngl 20: the output layer and 19 of 36 layers on the GPU/);
  assert.match(text, /of 16\.00 GiB: fits/);
  assert.equal(await page.inputValue('[data-role="ngl"]'), '20');
  // The decode bound reads the CPU's layers from system RAM (the core's assumed 89.6 GB/s),
  // and llama.cpp's --fit gives up because -ngl is set: both as the CLI says.
  assert.equal(want.budget.decode.ram_bandwidth_bytes_per_s, 89.6e9);
  assert.ok(want.budget.decode.cpu_weight_bytes_per_token > 0);
  assert.match(await page.textContent('[data-role="decode"]'), /come from system RAM, assumed at 89\.6 GB\/s/);
  assert.equal(await page.textContent('[data-role="fit-log"]'), want.budget.llamacpp.fit.log_lines.join('\n'));
  // Clearing -ngl: not every layer fits, so llama-server's --fit (on by default) keeps some on
  // the CPU: the verdict says it runs that way, and the command asks for --fit's -ngl (issue 12).
  await page.fill('[data-role="ngl"]', '');
  await page.press('[data-role="ngl"]', 'Tab');
  const all = cli(['--gpu', 'rtx-3060-12gb', '--max-model-len', '32768', '--weights', 'Q8_0', '--ram', '16GiB']);
  assert.equal(all.budget.fits_offload, true);
  await page.waitForFunction((cmd) => document.querySelector('[data-role="command"]')?.textContent === cmd, all.budget.command);
  assert.match(all.budget.command, new RegExp(` -ngl ${all.budget.llamacpp.fit.n_gpu_layers}$`));
  // The address follows a frame or a quiet moment later (main.js writeUrl): wait for it.
  await page.waitForFunction(() => !new URL(location.href).searchParams.has('ngl'));
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'offload');
  assert.match(await page.textContent('[data-role="verdict"]'), /^Runs on .* with part in system RAM: one sequence of 32K tokens, [\d.]+ GiB of [\d.]+ GiB usable on the GPU$/);
  assert.equal(Number((await metrics(page))['max-context']), all.metrics['max-context']);
  assert.match(await page.textContent('[data-role="offload"]'), new RegExp(`at most -ngl ${all.budget.llamacpp.offload.max_gpu_layers} fits`));
  await context.close();
});

test('--fit\'s offload is the verdict in zh-CN too, with the CLI\'s numbers', async () => {
  const { page, context, errors } = await openPage(env, 'model=Qwen/Qwen3-8B&engine=llamacpp&gpu=rtx-3060-12gb&ctx=32768&weights=Q8_0&lang=zh-CN');
  assert.deepEqual(errors, []);
  const want = cli(['--gpu', 'rtx-3060-12gb', '--max-model-len', '32768', '--weights', 'Q8_0']);
  assert.equal(want.budget.fits_offload, true);
  assert.equal(await page.getAttribute('[data-role="verdict"]', 'data-verdict'), 'offload');
  assert.match(await page.textContent('[data-role="verdict"]'), /上可以运行，部分放在系统内存：1 个 32K token 的序列在 GPU 上占用 [\d.]+ GiB，可用 [\d.]+ GiB$/);
  assert.match(await page.textContent('[data-role="verdict-reason"]'), /自动适配会把 37 层中的 \d+ 层（输出层算一层）放在 GPU 上启动/);
  const m = await metrics(page);
  for (const k of ['total-bytes', 'max-context', 'max-concurrency']) assert.equal(Number(m[k]), want.metrics[k], k);
  assert.equal(await page.textContent('[data-role="command"]'), want.budget.command);
  await context.close();
});

test('a 16 GB Mac: what Metal may wire, and the sysctl that makes 40K fit', async () => {
  const { page, context } = await openPage(env, 'model=Qwen/Qwen3-8B&engine=llamacpp&gpu=m4-16gb&ctx=40960&weights=Q4_K_M');
  const want = cli(['--gpu', 'm4-16gb', '--max-model-len', '40960', '--weights', 'Q4_K_M']);
  assert.equal(want.budget.gpu.total_bytes, 11453246122);
  assert.equal(Number((await metrics(page))['total-bytes']), want.metrics['total-bytes']);
  const body = await page.textContent('body');
  // The CLI's own value (weights counted per tensor type since the MXFP4 work: 11,041 MiB).
  const sysctl = want.budget.notes.find((n) => /wired_limit_mb=\d+ lets/.test(n.text)).text.match(/wired_limit_mb=(\d+)/)[1];
  assert.equal(sysctl, '11041');
  assert.match(body, new RegExp(`sudo sysctl iogpu\\.wired_limit_mb=${sysctl}`));
  await context.close();
});

test('a Mac of another size: its RAM keeps the wired-memory rule, as the CLI computes it', async () => {
  const { page, context } = await openPage(env, 'model=Qwen/Qwen3-8B&engine=llamacpp&gpu=m4-16gb&ctx=40960&weights=Q4_K_M');
  assert.equal(await page.isVisible('#ctl-mac-ram'), true);
  await page.fill('#ctl-mac-ram', '24GB');
  await page.press('#ctl-mac-ram', 'Enter');
  await page.waitForFunction(() => document.querySelector('[data-role="gpu"]')?.textContent.includes('RAM 24.00 GiB'), null, { timeout: 10000 });
  const want = cli(['--gpu', 'm4-16gb', '--gpu-memory', '24GB', '--max-model-len', '40960', '--weights', 'Q4_K_M']);
  assert.equal(want.budget.gpu.total_bytes, 17179869184); // 2/3 of 24 GiB: what Metal may wire
  const m = await metrics(page);
  for (const k of ['total-bytes', 'max-context', 'max-concurrency']) assert.equal(Number(m[k]), want.metrics[k], k);
  await page.waitForURL((u) => u.searchParams.get('macRam') === '24000000000', { timeout: 5000 });
  // Another maker's GPU has no Mac RAM.
  await page.selectOption('#ctl-gpu', 'rtx-4090');
  await page.waitForFunction(() => document.querySelector('#ctl-mac-ram')?.closest('.field').hidden === true);
  await context.close();
});

test('the page sends a context, so it also shows what llama-server picks with neither -c nor -ngl, as the CLI does', async () => {
  // Qwen3-8B Q8_0 on a 12 GB card at 8,192 tokens: --fit keeps the asked context; with no -c
  // llama.cpp starts from the 40,960-token training context and shrinks it (or the layers).
  const q = 'model=Qwen/Qwen3-8B&engine=llamacpp&gpu=rtx-3060-12gb&ctx=8192&weights=Q8_0';
  const want = cli(['--gpu', 'rtx-3060-12gb', '--max-model-len', '8192', '--weights', 'Q8_0']);
  const d = want.budget.llamacpp.fit_default;
  assert.equal(want.budget.llamacpp.fit.n_ctx, 8192);
  assert.notEqual(d.flags, want.budget.llamacpp.fit.flags);
  assert.ok(d.n_ctx < 40960 || d.n_gpu_layers < 37, d.flags);
  const { page, context, errors } = await openPage(env, q);
  assert.deepEqual(errors, []);
  const text = await page.textContent('[data-role="fit-default"]');
  // With no -np either, llama-server runs its 4 slots over one unified cache.
  assert.equal(d.slots, 4);
  assert.equal(d.kv_unified, true);
  assert.equal(text, `Started with neither -c nor -ngl, llama-server runs 4 slots sharing one cache, and its automatic fit picks ${d.context.toLocaleString('en-US')} tokens for them and ${d.n_gpu_layers} of 37 layers on the GPU: ${d.flags}.`);
  await context.close();
  const zh = await openPage(env, 'lang=zh-CN&' + q);
  assert.equal(await zh.page.textContent('[data-role="fit-default"]'),
    `不指定 -c 和 -ngl 启动时，llama-server 开 4 个槽位共用一个缓存，自动适配为它们选 ${d.context.toLocaleString('en-US')} 个 token，并把 37 层中的 ${d.n_gpu_layers} 层放在 GPU 上：${d.flags}。`);
  await zh.context.close();
});

test('llama.cpp speculative decoding on the page: spec=mtp:2 is --spec-type draft-mtp --spec-draft-n-max 2', async () => {
  // DeepSeek-V3.2: its converter keeps the MTP layer (DeepSeek-V3's drops it, so the page refuses draft-mtp there).
  const dsv3 = path.join(root, 'tests/fixtures/configs/deepseek-ai--DeepSeek-V3.2.json');
  const want = JSON.parse(execFileSync(cliPath, ['budget', dsv3, '--engine', 'llamacpp', '--gpu', 'h200', '--gpu-count', '8', '--max-model-len', '8192', '--weights', 'Q4_K_M', '--spec-type', 'draft-mtp', '--spec-draft-n-max', '2', '--json'], { encoding: 'utf8' }));
  assert.equal(want.budget.llamacpp.draft.bytes, 8192 * 576 * 2); // one MLA layer, K only
  const { page, context, errors } = await openPage(env, 'model=deepseek-ai/DeepSeek-V3.2&engine=llamacpp&gpu=h200&gpuCount=8&ctx=8192&weights=Q4_K_M&spec=mtp:2');
  assert.deepEqual(errors, []);
  assert.equal(await page.isVisible('#ctl-spec'), true);
  assert.equal(await page.textContent('[data-field="ctl-spec"] label'), 'llama.cpp speculative decoding');
  const m = await metrics(page);
  for (const k of ['total-bytes', 'max-context', 'max-concurrency']) assert.equal(Number(m[k]), want.metrics[k], k);
  await context.close();
});
