// The page's Content-Security-Policy connect-src: the page itself, the hub it is built
// for (kvbudget.config.json's hubUrl) and, for the Hugging Face Hub, the hosts its
// resolve/ URLs redirect file downloads to. A meta tag cannot be widened at run time, so
// a deployment on another hub builds with KVB_HUB_URL (scripts/build-site.mjs writes both
// files from it) and tests serve the page the same way (tests/web/static-server.mjs).
export const DEFAULT_HUB = 'https://huggingface.co';

// Where https://huggingface.co/{id}/resolve/... redirects (2025-2026): Xet-backed files to
// cas-bridge.xethub.hf.co, Git LFS files to the cdn-lfs hosts, under huggingface.co and,
// newer, hf.co (Hugging Face's list of download hosts: https://huggingface.co/.well-known/meta.json).
export const HF_DOWNLOAD_HOSTS = [
  'https://cas-bridge.xethub.hf.co',
  'https://cdn-lfs.hf.co',
  'https://cdn-lfs-us-1.hf.co',
  'https://cdn-lfs-eu-1.hf.co',
  'https://cdn-lfs.huggingface.co',
  'https://cdn-lfs-us-1.huggingface.co',
  'https://cdn-lfs-eu-1.huggingface.co',
];

export function connectSrc(hubUrl = DEFAULT_HUB) {
  const hub = new URL(hubUrl);
  if (hub.protocol !== 'https:' && hub.protocol !== 'http:') throw new Error(`hub URL must be http(s): ${hubUrl}`);
  const sources = ["'self'", hub.origin];
  if (hub.origin === DEFAULT_HUB) sources.push(...HF_DOWNLOAD_HOSTS);
  return 'connect-src ' + sources.join(' ');
}

// index.html with its connect-src directive for `hubUrl`.
export function withHubCsp(html, hubUrl = DEFAULT_HUB) {
  const re = /connect-src [^;"]*/;
  if (!re.test(html)) throw new Error('index.html has no connect-src directive in its Content-Security-Policy');
  return html.replace(re, connectSrc(hubUrl));
}
