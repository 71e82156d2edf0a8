/**
 * Authentication failures are throttled per client, over HTTP and SMTP AUTH:
 * after the allowed failures one client address is refused even the right
 * credential, another address is not affected, and the block lifts once the
 * window has passed (the test clock moves instead of the test waiting).
 */
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { openSubmission, replyOf } from '../helpers/smtp-submit.js';

const MAX_FAILURES = 3;
const HTTP_WINDOW_S = 60;
const SMTP_WINDOW_S = 300;
// Every 127/8 address is this machine's loopback: each is a distinct client to the daemon.
const ATTACKER = '127.0.0.2';
const BYSTANDER = '127.0.0.3';

interface Answer {
  status: number;
  retryAfter: string | undefined;
  code: string | undefined;
}

/**
 * The test clock runs with real time (plus what a test advances), so the instants below are taken
 * from it rather than counted from whenever the next line runs: a loaded machine's slow requests
 * in between would otherwise eat the margin. A refusal that says "in N seconds" was answered with
 * more than N - 1 s left (it rounds up), so the block lifts after `sentAt + (N - 1) s` and by
 * `answeredAt + N s`.
 */
const REQUEST_MARGIN_MS = 1000;
const shortOfWindow = (sentAt: number, seconds: number): number => sentAt + (seconds - 1) * 1000 - REQUEST_MARGIN_MS;
const pastWindow = (answeredAt: number, seconds: number): number => answeredAt + seconds * 1000;

/** GET `path` from the client address `from`, with `token` as a bearer token. */
function getFrom(from: string, url: string, path: string, token: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      { localAddress: from, headers: { authorization: `Bearer ${token}` } },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          const header = res.headers['retry-after'];
          let code: string | undefined;
          try {
            code = (JSON.parse(text) as { error?: { code?: string } }).error?.code;
          } catch {
            code = undefined;
          }
          resolve({ status: res.statusCode ?? 0, retryAfter: Array.isArray(header) ? header[0] : header, code });
        });
      },
    );
    req.on('error', reject);
    req.end();
  });
}

/** AUTH PLAIN from the client address `from` on a fresh connection: the reply, 235 when accepted. */
async function authFrom(from: string, port: number, user: string, password: string): Promise<string> {
  const session = await openSubmission(port, { localAddress: from });
  try {
    await session.login(user, password, 'PLAIN');
    return '235 accepted';
  } catch (error) {
    return replyOf(error);
  } finally {
    session.close();
  }
}

describe('authentication throttling per client', () => {
  let fx: QueueFixture;
  let key: string;
  let smtpPort: number;

  beforeAll(async () => {
    fx = await startQueueFixture({
      extraToml: `[http]\nauth_max_failures = ${MAX_FAILURES}\nauth_failure_window_seconds = ${HTTP_WINDOW_S}\n[smtp]\nauth_max_failures = ${MAX_FAILURES}\nauth_failure_window_seconds = ${SMTP_WINDOW_S}\n`,
    });
    key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', { port: 9 }, { is_default: true });
    smtpPort = fx.t.daemon.smtp?.plain?.port ?? 0;
  });
  afterAll(async () => {
    await fx.stop();
    fx.t.cleanup();
  });
  /** Moves the test clock to `at` (never back). */
  const advanceTo = (at: number): void => fx.clock.advance(Math.max(0, at - fx.clock.now()));

  it('over HTTP: refuses the throttled client even the right token, not another client, and lifts after the window', async () => {
    const { url, adminToken } = fx.t;
    for (let attempt = 0; attempt < MAX_FAILURES; attempt += 1) {
      expect((await getFrom(ATTACKER, url, '/tenants', `mpk_wrong-${attempt}`)).status).toBe(401);
    }
    const sentAt = fx.clock.now();
    const throttled = await getFrom(ATTACKER, url, '/tenants', 'mpk_wrong-again');
    const answeredAt = fx.clock.now();
    expect(throttled).toMatchObject({ status: 429, code: 'AUTH_THROTTLED' });
    const retryAfter = Number(throttled.retryAfter);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(HTTP_WINDOW_S);
    expect((await getFrom(ATTACKER, url, '/tenants', adminToken)).status).toBe(429);
    expect((await getFrom(ATTACKER, url, '/accounts', key)).status).toBe(429);

    // Another client: its right token works, its wrong one is a plain 401, not 429.
    expect((await getFrom(BYSTANDER, url, '/tenants', adminToken)).status).toBe(200);
    expect((await getFrom(BYSTANDER, url, '/tenants', 'mpk_wrong')).status).toBe(401);
    expect((await getFrom(BYSTANDER, url, '/accounts', key)).status).toBe(200);

    // Just short of the window: still refused; past it: the right token is taken again.
    advanceTo(shortOfWindow(sentAt, retryAfter));
    expect((await getFrom(ATTACKER, url, '/tenants', adminToken)).status).toBe(429);
    advanceTo(pastWindow(answeredAt, retryAfter));
    expect((await getFrom(ATTACKER, url, '/tenants', adminToken)).status).toBe(200);
  });

  it('over SMTP AUTH: 454 4.7.0 to the throttled client even with the right key, not to another client, and lifts after the window', async () => {
    for (let attempt = 0; attempt < MAX_FAILURES; attempt += 1) {
      expect(await authFrom(ATTACKER, smtpPort, 'acme', `wrong-${attempt}`)).toMatch(/^535 5\.7\.8 /);
    }
    const sentAt = fx.clock.now();
    const throttled = await authFrom(ATTACKER, smtpPort, 'acme', 'wrong-again');
    const answeredAt = fx.clock.now();
    expect(throttled).toMatch(/^454 4\.7\.0 /);
    const seconds = Number(/try again in (\d+) s/.exec(throttled)?.[1]);
    expect(seconds).toBeGreaterThan(0);
    expect(seconds).toBeLessThanOrEqual(SMTP_WINDOW_S);
    expect(await authFrom(ATTACKER, smtpPort, 'acme', key)).toMatch(/^454 4\.7\.0 /);

    expect(await authFrom(BYSTANDER, smtpPort, 'acme', key)).toBe('235 accepted');
    expect(await authFrom(BYSTANDER, smtpPort, 'acme', 'wrong')).toMatch(/^535 5\.7\.8 /);

    advanceTo(shortOfWindow(sentAt, seconds));
    expect(await authFrom(ATTACKER, smtpPort, 'acme', key)).toMatch(/^454 4\.7\.0 /);
    advanceTo(pastWindow(answeredAt, seconds));
    expect(await authFrom(ATTACKER, smtpPort, 'acme', key)).toBe('235 accepted');
  });

  it("over SMTP AUTH: another tenant's valid key for acme is a failed attempt, so a tenant cannot reset its throttle between guesses", async () => {
    const other = '127.0.0.4';
    const globexKey = await fx.createTenant('globex');
    for (let attempt = 0; attempt < MAX_FAILURES; attempt += 1) {
      expect(await authFrom(other, smtpPort, 'acme', attempt === 1 ? 'wrong' : globexKey)).toMatch(/^535 5\.7\.8 /);
    }
    expect(await authFrom(other, smtpPort, 'acme', globexKey)).toMatch(/^454 4\.7\.0 /);
    expect(await authFrom(other, smtpPort, 'globex', globexKey)).toMatch(/^454 4\.7\.0 /);
  });
});
