/**
 * A daemon with a test clock, ready for queue tests: tenants and accounts that
 * point at real SMTP sinks, and helpers to submit, inspect and settle.
 */
import { afterAll, afterEach, beforeAll } from 'vitest';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../peers/smtp-sink.js';
import {
  api,
  createTestClock,
  startTestDaemon,
  type ApiResponse,
  type TestClock,
  type TestDaemon,
} from './test-daemon.js';

export interface QueueFixture {
  t: TestDaemon;
  clock: TestClock;
  admin(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  createTenant(id: string, fields?: Record<string, unknown>): Promise<string>;
  createAccount(
    tenantId: string,
    id: string,
    sink: SmtpSink | { port: number },
    fields?: Record<string, unknown>,
  ): Promise<void>;
  post(key: string, messages: unknown[], extra?: Record<string, unknown>): Promise<ApiResponse>;
  detail(
    tenantId: string,
    id: string,
  ): Promise<{
    message: Record<string, any>;
    events: Array<Record<string, any>>;
    why: Record<string, any>;
    pec_receipts: Array<Record<string, any>>;
  }>;
  /** One dispatcher step, then every send it started finished and recorded. */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

const DEFAULT_DISPATCH: Record<string, string> = {
  retry_jitter: '0',
  allow_private_attachment_urls: 'true',
  send_timeout_seconds: '2',
  retry_schedule_seconds: '[60, 300]',
};

export async function startQueueFixture(
  options: {
    dispatch?: Record<string, string>;
    extraToml?: string;
    clock?: TestClock;
    dataDir?: string;
    env?: Record<string, string>;
  } = {},
): Promise<QueueFixture> {
  const clock = options.clock ?? createTestClock();
  const dispatch = Object.entries({ ...DEFAULT_DISPATCH, ...options.dispatch })
    .map(([key, value]) => `${key} = ${value}`)
    .join('\n');
  const t = await startTestDaemon(
    `${options.extraToml ?? ''}\n[dispatch]\n${dispatch}\n`,
    clock,
    options.dataDir,
    options.env,
  );
  const admin = (method: string, path: string, body?: unknown) =>
    api(t.url, method, path, { token: t.adminToken, body });

  return {
    t,
    clock,
    admin,
    async createTenant(id, fields = {}) {
      const response = await admin('POST', '/tenant', { id, ...fields });
      if (response.status !== 201) throw new Error(`tenant ${id}: ${response.text}`);
      return response.body.api_key as string;
    },
    async createAccount(tenantId, id, sink, fields = {}) {
      const response = await admin('POST', '/account', {
        id,
        tenant_id: tenantId,
        host: '127.0.0.1',
        port: sink.port,
        tls_mode: 'none',
        ...fields,
      });
      if (response.status >= 300) throw new Error(`account ${id}: ${response.text}`);
    },
    post: (key, messages, extra = {}) =>
      api(t.url, 'POST', '/add-messages', { token: key, body: { messages, ...extra } }),
    async detail(tenantId, id) {
      const response = await admin('GET', `/messages/${encodeURIComponent(id)}?tenant_id=${tenantId}`);
      if (response.status !== 200) throw new Error(`message ${id}: ${response.text}`);
      return response.body;
    },
    async settle() {
      await t.daemon.dispatcher.tick();
      await t.daemon.dispatcher.idle();
    },
    async stop() {
      await t.stop();
    },
  };
}

/** A minimal valid message. */
export function message(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id,
    from: 'sender@example.com',
    to: 'rcpt@example.net',
    subject: `subject ${id}`,
    body: `body of ${id}`,
    ...extra,
  };
}

export interface SinkScenario {
  fx: QueueFixture;
  sink: SmtpSink;
  /** The API key of tenant `acme`, whose default account `main` points at `sink`. */
  key: string;
}

/**
 * A sink, a daemon, tenant `acme` and its default account `main` on the sink.
 * Registers their teardown in `cleanups`, which the caller runs after each test.
 */
export async function startSinkScenario(
  cleanups: Array<() => Promise<void>>,
  options: {
    sink?: SmtpSinkOptions;
    account?: Record<string, unknown>;
    clock?: TestClock;
    dispatch?: Record<string, string>;
  } = {},
): Promise<SinkScenario> {
  const sink = await startSmtpSink(options.sink);
  const fx = await startQueueFixture({
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.dispatch === undefined ? {} : { dispatch: options.dispatch }),
  });
  cleanups.push(
    async () => sink.stop(),
    async () => {
      await fx.stop();
      fx.t.cleanup();
    },
  );
  const key = await fx.createTenant('acme');
  await fx.createAccount('acme', 'main', sink, { is_default: true, ...options.account });
  return { fx, sink, key };
}

export interface SharedAcmeDaemon {
  /** The file's daemon (read it inside a test or hook: it starts in `beforeAll`). */
  readonly fx: QueueFixture;
  /** The API key of tenant `acme`. */
  readonly key: string;
  /** Run after each test, last registered first. */
  readonly cleanups: Array<() => Promise<void>>;
  /** A sink for the current test only, stopped after it. */
  sink(options?: SmtpSinkOptions): Promise<SmtpSink>;
}

/**
 * One daemon with tenant `acme` (no account) for a whole test file, where each
 * test brings the relays its accounts point at. Registers the file's hooks:
 * call once at the top of a test file.
 */
export function useSharedAcmeDaemon(): SharedAcmeDaemon {
  let fx: QueueFixture | undefined;
  let key: string | undefined;
  const cleanups: Array<() => Promise<void>> = [];
  beforeAll(async () => {
    fx = await startQueueFixture();
    key = await fx.createTenant('acme');
  });
  afterAll(async () => {
    await fx?.stop();
    fx?.t.cleanup();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the shared daemon starts in beforeAll: read it inside a test or hook');
    return value;
  };
  return {
    get fx() {
      return started(fx);
    },
    get key() {
      return started(key);
    },
    cleanups,
    async sink(options = {}) {
      const sink = await startSmtpSink(options);
      cleanups.push(() => sink.stop());
      return sink;
    },
  };
}

/**
 * A sink scenario whose account sends one message a minute (`account` may add
 * to that), with `first` and `second` posted five seconds into a clock minute
 * (the test is over long before the window turns) and the dispatcher run
 * twice: `first` has taken the minute's budget, `second` meets the limit.
 */
export async function startOverMinuteLimit(
  cleanups: Array<() => Promise<void>>,
  options: { account?: Record<string, unknown>; sink?: SmtpSinkOptions } = {},
): Promise<SinkScenario> {
  const scenario = await startSinkScenario(cleanups, {
    sink: options.sink ?? {},
    account: { limit_per_minute: 1, ...options.account },
  });
  const { fx, key } = scenario;
  fx.clock.advance(60_000 - (fx.clock.now() % 60_000) + 5000);
  await fx.post(key, [message('first'), message('second')]);
  await fx.settle();
  await fx.settle();
  return scenario;
}
