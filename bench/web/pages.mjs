// The pages the benchmarks open, as a user meets them, so two benchmarks of the same thing
// start from the same state.
import { startStaticServer } from '../../tests/web/static-server.mjs';
import { installFrameProbe, installSliderProbe } from './probes.mjs';

// A built site's default page, interactive (the calculator module running) and settled (the
// sections below the first screen and the chart drawn), with the slider probes installed.
export async function openSliderPage(browser, site, contextOptions = {}) {
  const server = await startStaticServer({ root: site });
  const context = await browser.newContext(contextOptions);
  const page = await context.newPage();
  await page.goto(server.url);
  await page.waitForFunction(() => document.body.dataset.state === 'ready' && (document.body.dataset.core || 'live') === 'live', null, { timeout: 30000 });
  await page.waitForFunction(() => !document.querySelector('[data-lazy]') && document.querySelector('.chart canvas'), null, { timeout: 30000 });
  await page.evaluate(installFrameProbe);
  await page.evaluate(installSliderProbe);
  return { server, context, page };
}

// The simulator view on the Azure conversation trace (Llama-3.1-8B, A100-80GB, paged), scrolled
// to, with its spare worker warmed meanwhile (web/src/sim-view.js watchIntent: up to a second,
// after the module's load); a build without the warm-up is waited for 10 s. Returns the
// warm-up's milliseconds, or null.
export async function openSimView(page, serverUrl) {
  await page.goto(serverUrl + '?model=meta-llama/Llama-3.1-8B&gpu=a100-80gb&ctx=16384&simWl=azure-conv&simPol=paged');
  await page.waitForFunction(() => document.body.dataset.state === 'ready', null, { timeout: 30000 });
  await page.waitForSelector('#sim', { timeout: 30000 });
  await page.evaluate(() => document.querySelector('#sim').scrollIntoView());
  return page.waitForFunction(() => document.querySelector('#sim')?.dataset.simWarmMs, null, { timeout: 10000 })
    .then((hnd) => hnd.jsonValue().then(Number), () => null);
}
