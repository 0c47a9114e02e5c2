// Debian's Chromium driven by playwright-core (never a downloaded browser).
import fs from 'node:fs';
import { execFileSync } from 'node:child_process';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.KVB_CHROMIUM || '/usr/bin/chromium';
export const LAUNCH_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
// Extra flags for an experiment (e.g. KVB_CHROMIUM_FLAGS='--js-flags=--no-wasm-dynamic-tiering'),
// never set by a test or the CI.
const EXTRA_ARGS = (process.env.KVB_CHROMIUM_FLAGS || '').split(' ').filter(Boolean);

export function ensureChromium() {
  if (fs.existsSync(CHROMIUM)) return;
  try {
    execFileSync('apt-get', ['install', '-y', 'chromium'], { stdio: 'inherit' });
  } catch {
    // reported below
  }
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} not found: apt-get install -y chromium`);
}

export async function launch() {
  ensureChromium();
  return chromium.launch({ executablePath: CHROMIUM, args: [...LAUNCH_ARGS, ...EXTRA_ARGS], headless: true });
}
