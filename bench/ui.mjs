// The `ui` scenario: the web console's pages with 100,000 messages stored (the search
// scenario's corpus), each asked for again and again over HTTP with a signed-in session:
// the time from request to the last byte of the rendered page, p50 and p99. Tenant-key pages
// and admin pages (every tenant: the overview's counts and chart over the whole store).
import { corpusFields } from '../test/helpers/search-corpus.mjs';
import { startDaemon } from './harness.mjs';
import { seededCorpus } from './search.mjs';

const REPEATS = 30;
const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];

async function signIn(base, token) {
  const response = await fetch(`${base}/ui/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0];
  if (response.status !== 303 || cookie === '') throw new Error(`console sign-in: ${response.status}`);
  return cookie;
}

async function timePage(base, cookie, path) {
  const started = performance.now();
  const response = await fetch(`${base}${path}`, { headers: { cookie }, redirect: 'manual' });
  const html = await response.text();
  const ms = performance.now() - started;
  if (response.status !== 200) throw new Error(`GET ${path}: ${response.status} ${html.slice(0, 300)}`);
  return { ms, html };
}

export async function uiScenario() {
  const { dataDir, key } = await seededCorpus();
  const d = await startDaemon({}, { dataDir });
  try {
    const tenant = await signIn(d.base, key);
    const admin = await signIn(d.base, d.token);
    const some = corpusFields(4321);
    // The cursor of the newest page's "Next page" link, as a user would follow it.
    const first = await timePage(d.base, tenant, '/ui/messages');
    const next = /href="(\/ui\/messages\?cursor=[^"]+)"/.exec(first.html)?.[1]?.replace(/&amp;/g, '&');
    if (next === undefined) throw new Error('the first page of messages has no next page');
    const pages = {
      'overview (tenant)': [tenant, '/ui/overview'],
      'overview (admin, every tenant)': [admin, '/ui/overview'],
      'messages, newest': [tenant, '/ui/messages'],
      'messages, next page (cursor)': [tenant, next],
      'messages, recipient': [tenant, `/ui/messages?recipient=${encodeURIComponent(some.to)}`],
      'messages, full text': [tenant, '/ui/messages?q=overdue+invoice'],
      'messages, status + batch': [tenant, '/ui/messages?status=sent&batch=batch-3'],
      'messages (admin, every tenant)': [admin, '/ui/messages'],
      'message detail': [tenant, `/ui/messages/bench/${encodeURIComponent(some.id)}`],
      'confirm resend': [tenant, `/ui/messages/bench/${encodeURIComponent(some.id)}/confirm/resend`],
      'tenants (admin)': [admin, '/ui/tenants'],
      'suppressions (admin)': [admin, '/ui/suppressions?tenant=bench'],
    };
    const result = {};
    for (const [name, [cookie, path]] of Object.entries(pages)) {
      const times = [];
      for (let repeat = 0; repeat < REPEATS; repeat += 1) times.push((await timePage(d.base, cookie, path)).ms);
      times.sort((a, b) => a - b);
      result[`${name} p50 ms`] = Math.round(percentile(times, 0.5) * 10) / 10;
      result[`${name} p99 ms`] = Math.round(percentile(times, 0.99) * 10) / 10;
    }
    return result;
  } finally {
    await d.stop();
  }
}
