// The page words the core's Messages ({code, params, text}) from msg.<code>; the C++
// side (tests/unit/test_messages.cpp) checks that every code has both entries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderMessage } from '../../web/src/message.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const en = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/en.json'), 'utf8'));
const zh = JSON.parse(fs.readFileSync(path.join(root, 'web/i18n/zh-CN.json'), 'utf8'));

test('a note reads in each language with the core\'s values', () => {
  const note = { code: 'mha_assumed', params: { n: '40' }, text: 'num_key_value_heads is not set: multi-head attention assumed (40 KV heads, one per attention head)' };
  assert.equal(renderMessage(note, en), note.text);
  assert.equal(renderMessage(note, zh), 'num_key_value_heads 未设置：按多头注意力 MHA 计算（40 个 KV 头，每个注意力头一个）');
});

test('a refusal\'s JSON type name is worded by the catalog', () => {
  const refusal = { code: 'not_integer_type', params: { model: 'acme/bad', field: 'num_hidden_layers', got: 'a string', value: '"32"' },
    text: 'acme/bad: num_hidden_layers must be an integer, got a string "32"' };
  assert.equal(renderMessage(refusal, en), refusal.text);
  assert.equal(renderMessage(refusal, zh), 'acme/bad：num_hidden_layers 必须是整数，实际为字符串 "32"');
  assert.equal(renderMessage({ code: 'config_not_object', params: { model: 'm', got: 'an array' } }, zh), 'm：config.json 必须是 JSON 对象，实际为数组');
});

test('a code the catalog lacks, or a plain string, shows the core\'s English', () => {
  assert.equal(renderMessage({ code: 'not_in_any_catalog', params: {}, text: 'English from the core' }, zh), 'English from the core');
  assert.equal(renderMessage('a note the core does not code yet', zh), 'a note the core does not code yet');
  assert.equal(renderMessage(null, zh), '');
});

test('the page names its controls where the CLI names a flag, with the same placeholders', () => {
  assert.equal(renderMessage({ code: 'gguf_default', params: {} }, en), 'llama.cpp: weights default to a Q4_K_M GGUF (choose another weight format to change it)');
  assert.ok(!en['msg.no_apple_vllm'].includes('--engine'));
});

test('no coreNote.* keys are left', () => {
  for (const cat of [en, zh]) assert.deepEqual(Object.keys(cat).filter((k) => k.startsWith('coreNote.')), []);
});

test('the page words a log without a config for its model box, the CLI for --config', () => {
  const m = { code: 'check_no_config', params: { model: 'Qwen/Qwen3-8B' } };
  assert.equal(renderMessage(m, en), 'no config for Qwen/Qwen3-8B: enter the model in the model box above (a Hub id, or paste its config.json) and compare again');
  assert.equal(renderMessage(m, zh), '找不到 Qwen/Qwen3-8B 的配置：请在上方的模型框中输入该模型（Hub ID，或粘贴它的 config.json），然后重新比较');
  // Every message the log check can show on the page speaks of the model box.
  for (const cat of [en, zh])
    for (const k of ['check_no_config', 'check_no_model', 'check_no_hparams', 'check_recurrent_needs_config', 'check_swa_pattern_unknown'])
      assert.ok(!cat['msg.' + k].includes('--config'), k);
});

test('a Chinese control label takes no space before the Han text after it; a flag keeps its space', () => {
  const refusal = { code: 'input_out_of_range', params: { field: 'context', flag: '--max-model-len', min: '0', max: '1,073,741,824', value: '99,999,999,999' } };
  assert.equal(renderMessage(refusal, zh), '--max-model-len 必须是 0 到 1,073,741,824 之间的整数，收到的是 99,999,999,999');
  assert.equal(renderMessage({ ...refusal, params: { ...refusal.params, flag: '上下文长度' } }, zh),
    '上下文长度必须是 0 到 1,073,741,824 之间的整数，收到的是 99,999,999,999');
  // Latin on the Han side of the space, or Han text only inside the value: kept.
  assert.equal(renderMessage({ ...refusal, params: { ...refusal.params, flag: 'GPU 显存' } }, zh), 'GPU 显存必须是 0 到 1,073,741,824 之间的整数，收到的是 99,999,999,999');
  assert.equal(renderMessage({ ...refusal, params: { ...refusal.params, flag: '显存 GPU' } }, zh), '显存 GPU 必须是 0 到 1,073,741,824 之间的整数，收到的是 99,999,999,999');
  assert.equal(renderMessage({ ...refusal, params: { ...refusal.params, flag: '上下文长度' } }, en), '上下文长度 must be a whole number from 0 to 1,073,741,824, got 99,999,999,999');
});

test('a duration the core wrote for the CLI reads in the page\'s units; English is the core\'s text', () => {
  const params = { offered: '12.0', policy: 'paged', waiting: '1,234', late: '5.0 min', early: '850 ms' };
  const zhText = renderMessage({ code: 'sim_overload', params }, zh);
  assert.match(zhText, /平均要等 5\.0 分钟才拿到首个 token，而最前面四分之一只需 850 毫秒。/);
  assert.match(renderMessage({ code: 'sim_overload', params: { ...params, late: '1.2 h', early: '12.3 s' } }, zh), /要等 1\.2 小时才.*只需 12\.3 秒。/);
  assert.match(renderMessage({ code: 'sim_overload', params }, en), /waited 5\.0 min on average for their first token against 850 ms for the first quarter\./);
  // Only the parameters that are durations: a value the user typed is echoed as typed.
  assert.equal(renderMessage({ code: 'sim_bad_rate', params: { flag: '--rate', value: '3 s' } }, zh), '--rate 必须是正数（每秒请求数），收到的是 3 s');
});
