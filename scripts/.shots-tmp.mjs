import path from 'node:path';
import { startStaticServer } from '/work/main/tests/web/static-server.mjs';
import { launch } from '/work/main/tests/web/browser.mjs';
const server = await startStaticServer({ root: '/work/main/site' });
const browser = await launch();
const shots = [
  ['desk-en', 1280, 800, 'model=meta-llama/Llama-3.1-70B&gpu=h100-sxm&gpuCount=4&tp=4&seqs=16'],
  ['desk-zh', 1280, 800, 'lang=zh-CN&model=Qwen/Qwen3-8B&engine=llamacpp&gpuCount=2'],
  ['phone-en', 390, 844, ''],
  ['phone-zh', 390, 844, 'lang=zh-CN&gpu=&gpuMem=8589934592'],
];
for (const [name, w, h, q] of shots) {
  const page = await browser.newPage({ viewport: { width: w, height: h }, deviceScaleFactor: 1 });
  page.on('pageerror', (e) => console.error('page error:', e.message));
  await page.goto(server.url + '?' + q);
  await page.waitForSelector('body[data-state="ready"], body[data-state="error"]', { timeout: 20000 });
  await page.waitForTimeout(300);
  await page.screenshot({ path: `/tmp/${name}.png`, fullPage: false });
  await page.screenshot({ path: `/tmp/${name}-full.png`, fullPage: true });
  console.log(name, await page.getAttribute('body', 'data-state'));
  await page.close();
}
await browser.close(); await server.close();
