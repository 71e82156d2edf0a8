// Every route that takes a body holds it to its limit on the built daemon, over a real socket:
// the API's routes to http.max_body_bytes, the public provider webhooks to webhooks.max_body_bytes
// (its default), the console's forms to their own. A body one byte over, with a Content-Length or
// chunked, answers 413 PAYLOAD_TOO_LARGE, and the same keep-alive connection answers the next
// request. A body tens of MiB over is refused without the daemon's memory growing by its size.
import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { createConsoleApp, type ConsoleDeps } from '../../src/ingress/console/index.js';
import { ROUTE_CATALOG } from '../../src/ingress/http/route-catalog.js';
import { WEBHOOK_ROUTES } from '../../src/ingress/http/routes/webhooks.js';
import { startHostileTarget, type HostileTarget } from '../helpers/hostile-target.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { RawHttpConnection, type Framing, type RawResponse, type StreamedBody } from '../helpers/raw-http.js';

const API_LIMIT = 64 * 1024;
/** webhooks.max_body_bytes's default. */
const WEBHOOK_LIMIT = 1024 * 1024;
/** The console's form limit (ingress/console/app.tsx). */
const FORM_LIMIT = 16 * 1024;
/**
 * Sent past the limit by a client that does not stop at the 413: more than node-server drains after
 * an answer (64 MiB), so the daemon reads at most that much and closes the connection.
 */
const FLOOD = 128 * 1024 * 1024;
const MAILGUN_KEY = randomBytes(32).toString('hex');
const FRAMINGS: readonly Framing[] = ['declared', 'chunked'];

interface BodyRoute {
  /** `METHOD /path` as requested. */
  route: string;
  limit: number;
  headers: string[];
  /** The 413's stable code, as this family answers it. */
  codeOf(response: RawResponse): string | undefined;
}

const jsonCode = (response: RawResponse): string | undefined => {
  try {
    return JSON.parse(response.body).error?.code;
  } catch {
    return undefined;
  }
};
const pageCode = (response: RawResponse): string | undefined => /data-code="([A-Z_]+)"/.exec(response.body)?.[1];

/** A concrete path: the tenant and account the target has, the provider it verifies. */
const concrete = (path: string): string =>
  path
    .replace('{provider}', 'mailgun')
    .replace(/\{(tenant_id|tenant)\}/g, 'acme')
    .replace(/\{\w+\}/g, 'main')
    .replace(/:(\w+)/g, (_, name: string) => (name === 'tenant' ? 'acme' : name === 'action' ? 'resend' : 'main'));

/** A Mailgun webhook body signed as Mailgun signs one (timestamp and token), padded to `totalBytes`. */
function signedMailgun(totalBytes: number): StreamedBody {
  const timestamp = String(Math.floor(Date.now() / 1000));
  const token = randomBytes(25).toString('hex');
  const signature = createHmac('sha256', MAILGUN_KEY)
    .update(timestamp + token)
    .digest('hex');
  const eventData = {
    event: 'delivered',
    id: randomBytes(8).toString('hex'),
    timestamp: Date.now() / 1000,
    recipient: 'alice@example.com',
    message: { headers: {} },
  };
  const prefix =
    JSON.stringify({ signature: { timestamp, token, signature }, 'event-data': eventData }).slice(0, -1) +
    ',"padding":"';
  const suffix = '"}';
  // Padded from this body's own length: another call's times print with a different number of digits.
  return { prefix, fillerBytes: totalBytes - Buffer.byteLength(prefix) - Buffer.byteLength(suffix), suffix };
}

/** The body `route` is sent: JSON, a signed webhook, or a form; `over` bytes past the limit. */
function bodyFor(target: BodyRoute, over: number): StreamedBody {
  if (target.route.includes('/webhooks/')) return signedMailgun(target.limit + over);
  if (target.route.includes(' /ui/')) return { prefix: 'token=', fillerBytes: target.limit + over - 6 };
  return { prefix: '{"pad":"', fillerBytes: target.limit + over - 10, suffix: '"}' };
}

/**
 * Sends `body` on a fresh connection, then GET /health on the same one: the refusal, and the next
 * answer or `closed` when the daemon closed the connection instead. It does so when a refused
 * body goes on for long (node-server drains at most 500 ms or 64 MiB after the answer).
 */
async function overThenNext(
  port: number,
  target: BodyRoute,
  body: StreamedBody,
  framing: Framing,
): Promise<{ refused: RawResponse; next: RawResponse | 'closed' }> {
  const connection = await RawHttpConnection.open(port);
  try {
    const [method, path] = target.route.split(' ');
    const answered = connection.next();
    answered.catch(() => undefined);
    // Written whole whatever the daemon answers meanwhile: the next request can only follow it.
    const sent = await connection
      .send([`${method} ${path} HTTP/1.1`, 'Host: 127.0.0.1', ...target.headers].join('\r\n'), body, framing)
      .then(
        () => true,
        () => false,
      );
    const refused = await answered;
    if (!sent) return { refused, next: 'closed' };
    const next = await connection.send('GET /health HTTP/1.1\r\nHost: 127.0.0.1', null).then(
      () => connection.next(),
      () => 'closed' as const,
    );
    return { refused, next: await Promise.resolve(next).catch(() => 'closed' as const) };
  } finally {
    connection.close();
  }
}

const memory = (pid: number, field: 'VmRSS' | 'VmHWM'): number => {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${field}:`));
  return Number(/(\d+)/.exec(line ?? '')?.[1]) * 1024;
};

describe('request body limits on every route that takes a body', () => {
  const started = tearDownProcesses({ stop: 'file' });
  let target: HostileTarget;
  let port: number;
  let routes: BodyRoute[];

  beforeAll(async () => {
    target = await startHostileTarget(started, { toml: `[http]\nmax_body_bytes = ${API_LIMIT}\n` });
    port = Number(new URL(target.url).port);
    const mailgun = await target.admin('POST', '/account', {
      id: 'mg',
      tenant_id: 'acme',
      host: 'smtp.mailgun.org',
      port: 587,
      provider: { name: 'mailgun', signing_key: MAILGUN_KEY },
    });
    expect(mailgun.status, mailgun.text).toBeLessThan(300);
    const signIn = await fetch(`${target.url}/ui/sign-in`, {
      method: 'POST',
      body: new URLSearchParams({ token: target.adminToken }),
      redirect: 'manual',
    });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    expect(cookie).toMatch(/^mailproxy_console=/);

    const api = ['Authorization: Bearer ' + target.adminToken, 'Content-Type: application/json'];
    const apiRoutes = ROUTE_CATALOG.filter((doc) => doc.body !== undefined && doc !== WEBHOOK_ROUTES.receive).map(
      (doc): BodyRoute => ({
        route: `${doc.method.toUpperCase()} ${concrete(doc.path)}`,
        limit: API_LIMIT,
        headers: api,
        codeOf: jsonCode,
      }),
    );
    const webhook: BodyRoute = {
      route: `POST ${concrete(WEBHOOK_ROUTES.receive.path)}`,
      limit: WEBHOOK_LIMIT,
      headers: ['Content-Type: application/json'],
      codeOf: jsonCode,
    };
    // Building the console registers its routes and calls none of its dependencies.
    const consolePosts = createConsoleApp({} as ConsoleDeps).routes.filter((route) => route.method === 'POST');
    const forms = [...new Set(consolePosts.map((route) => route.path))].map((path): BodyRoute => ({
      route: `POST ${concrete(path)}`,
      limit: FORM_LIMIT,
      headers: [`Cookie: ${cookie}`, 'Content-Type: application/x-www-form-urlencoded'],
      codeOf: pageCode,
    }));
    routes = [...apiRoutes, webhook, ...forms];
  });

  it('covers the API, the webhooks and the console forms', () => {
    const names = routes.map((route) => route.route);
    expect(names).toEqual(
      expect.arrayContaining([
        'POST /add-messages',
        'POST /tenant',
        'PUT /tenant/main',
        'POST /webhooks/mailgun/acme',
        'POST /ui/sign-in',
      ]),
    );
    expect(names.filter((name) => name.includes(' /ui/')).length).toBeGreaterThanOrEqual(8);
  });

  it('accepts a correctly signed webhook at the limit', async () => {
    const webhook = routes.find((route) => route.route.includes('/webhooks/')) as BodyRoute;
    const { refused: answered } = await overThenNext(port, webhook, bodyFor(webhook, 0), 'chunked');
    expect(answered.status, answered.body).toBe(200);
  });

  it('refuses a body one byte over, declared or chunked, with 413 PAYLOAD_TOO_LARGE, and answers the next request on the connection', async () => {
    const wrong: string[] = [];
    for (const route of routes) {
      for (const framing of FRAMINGS) {
        const { refused, next } = await overThenNext(port, route, bodyFor(route, 1), framing);
        const got = `${refused.status} ${route.codeOf(refused)} then ${next === 'closed' ? 'closed' : next.status}`;
        if (got !== '413 PAYLOAD_TOO_LARGE then 200')
          wrong.push(`${route.route} (${framing}, ${route.limit + 1} bytes): ${got}`);
      }
    }
    expect(wrong).toEqual([]);
    await target.expectAlive();
  });

  it(`refuses ${FLOOD / 1024 / 1024} MiB over the limit without the daemon's memory growing by the body`, async () => {
    const floods = routes.filter((r) =>
      ['POST /add-messages', 'POST /webhooks/mailgun/acme', 'POST /ui/sign-in'].includes(r.route),
    );
    expect(floods).toHaveLength(3);
    // The first flood the daemon drains grows its heap once (the reads it drops are garbage until
    // the next collection, and the code that drops them is compiled): each request is measured after.
    await overThenNext(port, floods[0] as BodyRoute, bodyFor(floods[0] as BodyRoute, FLOOD), 'declared').catch(
      () => null,
    );
    for (const route of floods) {
      for (const framing of FRAMINGS) {
        const before = memory(target.pid, 'VmRSS');
        // Resets the peak (VmHWM) to the current RSS: the peak after is what this request took.
        writeFileSync(`/proc/${target.pid}/clear_refs`, '5');
        // The daemon answers 413 at once, then closes a connection whose body goes on; the close resets it, and a client
        // starved of CPU (a loaded test run) may not have read the answer by then: the kernel drops it with the reset.
        // The refusal's code is held by the one-byte-over tests above; here, what the flood costs the daemon.
        const outcome = await overThenNext(port, route, bodyFor(route, FLOOD), framing).catch((error: unknown) => {
          if (/closed the connection before answering/.test(String(error))) return null;
          throw error;
        });
        const growth = memory(target.pid, 'VmHWM') - before;
        const answered =
          outcome === null
            ? 'reset before the answer was read'
            : `${outcome.refused.status} ${route.codeOf(outcome.refused)}`;
        const then =
          outcome === null || outcome.next === 'closed' ? 'connection closed' : `then ${outcome.next.status}`;
        const measured = `${route.route} ${framing}: ${answered} ${then}, peak RSS +${(growth / 1024 / 1024).toFixed(1)} MiB`;
        console.info(measured);
        if (outcome !== null) {
          expect(outcome.refused.status, `${route.route} ${framing}`).toBe(413);
          expect(route.codeOf(outcome.refused)).toBe('PAYLOAD_TOO_LARGE');
          expect(outcome.next === 'closed' || outcome.next.status === 200, then).toBe(true);
        }
        // Reading the body would take all of it at least; dropping it leaves garbage, collected as it grows.
        expect(growth, measured).toBeLessThan(FLOOD / 2);
      }
    }
    await target.expectAlive();
  });
});
