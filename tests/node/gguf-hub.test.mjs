// The page's GGUF plumbing without a browser (web/src/gguf-hub.js): quant tags from file
// names, the picker's choices from the Hub's siblings, and the range reads against a fake
// fetch (206 slices; a server that ignores Range and streams 200; a short file), with a
// stand-in core that needs a fixed number of bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { quantOf, ggufChoices, pickChoice, readGgufHeader, FIRST_RANGE } from '../../web/src/gguf-hub.js';
import { HubError } from '../../web/src/hub.js';

test('quant tags as llama-server -hf matches them', () => {
  assert.equal(quantOf('Qwen3-8B-Q4_K_M.gguf'), 'Q4_K_M');
  assert.equal(quantOf('qwen3-8b-q8_0.gguf'), 'Q8_0');
  assert.equal(quantOf('Qwen3-8B-UD-Q4_K_XL.gguf'), 'UD-Q4_K_XL');
  assert.equal(quantOf('Q4_K_M/DeepSeek-R1-Q4_K_M-00001-of-00009.gguf'), 'Q4_K_M');
  assert.equal(quantOf('gpt-oss-20b-MXFP4.gguf'), 'MXFP4');
  assert.equal(quantOf('Llama-3.2-1B-Instruct-IQ4_XS.gguf'), 'IQ4_XS');
  assert.equal(quantOf('model-BF16.gguf'), 'BF16');
});

test('choices: .gguf siblings with sizes, split files as one, projectors and incomplete splits left out', () => {
  const info = {
    siblings: [
      { rfilename: 'README.md', size: 10 },
      { rfilename: 'm-Q8_0.gguf', size: 8e9 },
      { rfilename: 'm-Q4_K_M.gguf', lfs: { size: 5e9 } },
      { rfilename: 'mmproj-F16.gguf', size: 1e9 },
      { rfilename: 'BF16/m-BF16-00002-of-00002.gguf', size: 6e9 },
      { rfilename: 'BF16/m-BF16-00001-of-00002.gguf', size: 10e9 },
      { rfilename: 'Q2_K/m-Q2_K-00001-of-00002.gguf', size: 3e9 },
      { rfilename: '../evil.gguf', size: 1 },
    ],
  };
  const c = ggufChoices(info);
  assert.deepEqual(c.map((x) => [x.quant, x.path, x.size, x.shards.length]), [
    ['Q4_K_M', 'm-Q4_K_M.gguf', 5e9, 1],
    ['Q8_0', 'm-Q8_0.gguf', 8e9, 1],
    ['BF16', 'BF16/m-BF16-00001-of-00002.gguf', 16e9, 2],
  ]);
  assert.equal(pickChoice(c).quant, 'Q4_K_M');
  assert.equal(pickChoice(c, { quant: 'bf16' }).quant, 'BF16');
  assert.equal(pickChoice(c, { quant: 'Q2_K' }), null);
  assert.equal(pickChoice(c, { file: 'BF16/m-BF16-00002-of-00002.gguf' }).quant, 'BF16');
  assert.equal(pickChoice(ggufChoices({ siblings: [{ rfilename: 'a-Q8_0.gguf', size: 9 }, { rfilename: 'a-Q6_K.gguf', size: 7 }] })).quant, 'Q6_K');
});

// A file of `size` bytes served by a fake fetch; `ignoreRange` answers 200 with the whole body.
function fakeHub(size, { ignoreRange = false } = {}) {
  const file = new Uint8Array(size).map((_, i) => i & 0xff);
  const log = { ranges: [], whole: 0, streamed: 0, cancelled: false };
  const fetchImpl = async (url, { headers }) => {
    const m = /^bytes=(\d+)-(\d+)$/.exec(headers.Range || '');
    if (m && !ignoreRange) {
      const a = Number(m[1]);
      const b = Math.min(Number(m[2]), size - 1);
      log.ranges.push([a, b]);
      if (a >= size) return new Response(null, { status: 416 });
      return new Response(file.slice(a, b + 1), { status: 206 });
    }
    log.whole++;
    let pos = 0;
    const body = new ReadableStream({
      pull(ctrl) {
        if (pos >= size) return ctrl.close();
        const end = Math.min(pos + 65536, size);
        ctrl.enqueue(file.slice(pos, end));
        log.streamed += end - pos;
        pos = end;
      },
      cancel() {
        log.cancelled = true;
      },
    });
    return new Response(body, { status: 200 });
  };
  return { hub: { baseUrl: 'http://hub', timeoutMs: 5000, fetch: fetchImpl, headers: () => ({}) }, log, file };
}

// Needs `need` bytes; checks that what it got is the file's prefix.
function fakeCore(need, file) {
  const calls = [];
  return {
    calls,
    readGguf(bytes, name, fileSize) {
      calls.push([bytes.length, fileSize]);
      for (let i = 0; i < Math.min(bytes.length, 4096); i += 97) assert.equal(bytes[i], file[i]);
      assert.equal(bytes[bytes.length - 1], file[bytes.length - 1]);
      if (fileSize >= 0 && need > fileSize) throw new Error('truncated');
      return bytes.length >= need ? { status: 'ok', header: 1 } : { status: 'need_more', need_total: need };
    },
  };
}

test('range reads grow to what the core needs: 512 KiB, then the header in one more range', async () => {
  const { hub, log, file } = fakeHub(8 * 1024 * 1024);
  const core = fakeCore(2800017, file);
  const r = await readGgufHeader(hub, core, { id: 'o/r', revision: 'main', path: 'x.gguf', size: file.length });
  assert.equal(r.status, 'ok');
  assert.deepEqual(log.ranges, [[0, FIRST_RANGE - 1], [FIRST_RANGE, 2800016]]);
  assert.deepEqual(core.calls, [[FIRST_RANGE, file.length], [2800017, file.length]]);
  assert.equal(r.requests.count, 2);
  assert.equal(r.requests.ignoredRange, false);
});

test('a server that ignores Range: one 200 stream, read as far as needed, then cancelled', async () => {
  const { hub, log, file } = fakeHub(64 * 1024 * 1024, { ignoreRange: true });
  const core = fakeCore(2800017, file);
  const r = await readGgufHeader(hub, core, { id: 'o/r', revision: 'main', path: 'x.gguf', size: file.length });
  assert.equal(r.status, 'ok');
  assert.equal(log.whole, 1);
  assert.ok(log.cancelled, 'the stream is cancelled');
  assert.ok(log.streamed < 4 * 1024 * 1024, `streamed ${log.streamed}`);
  assert.equal(r.requests.ignoredRange, true);
});

test('a file shorter than its header: the core is told the real end and refuses', async () => {
  const { hub, file } = fakeHub(300000);
  const core = fakeCore(2800017, file);
  await assert.rejects(readGgufHeader(hub, core, { id: 'o/r', revision: 'main', path: 'x.gguf', size: 0 }), /truncated/);
  assert.deepEqual(core.calls.at(-1), [300000, 300000]);
});

test('HTTP errors keep their codes', async () => {
  const hub = { baseUrl: 'http://hub', timeoutMs: 5000, headers: () => ({}), fetch: async () => new Response('no', { status: 404 }) };
  await assert.rejects(readGgufHeader(hub, fakeCore(10, new Uint8Array(10)), { id: 'o/r', path: 'x.gguf' }), (e) => e instanceof HubError && e.code === 'notFound');
});
