/**
 * A daemon whose tenants report to a real client endpoint: a report client
 * peer, an SMTP sink as the relay, and the queue fixture's helpers.
 */
import { startReportClient, type ReportClient } from '../peers/report-client.js';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../peers/smtp-sink.js';
import { startQueueFixture, type QueueFixture } from './queue-fixture.js';
import type { TestClock } from './test-daemon.js';

/** Fast reports for tests: short batching, backoff and timeout. */
export const FAST_REPORTS: Record<string, string> = {
  batch_delay_ms: '20',
  retry_initial_seconds: '0.2',
  retry_max_seconds: '1',
  retry_jitter: '0',
  request_timeout_seconds: '1',
};

export interface ReportScenario {
  fx: QueueFixture;
  client: ReportClient;
  sink: SmtpSink;
  /** Creates a tenant reporting to `client.base + path` with an account `main` on the sink; answers its key and signing secret. */
  addTenant(id: string, path: string, fields?: Record<string, unknown>): Promise<{ key: string; secret: string }>;
}

export async function startReportScenario(
  cleanups: Array<() => Promise<void>>,
  options: {
    reports?: Record<string, string>;
    sink?: SmtpSinkOptions;
    clock?: TestClock;
    dataDir?: string;
    env?: Record<string, string>;
    extraToml?: string;
  } = {},
): Promise<ReportScenario> {
  const client = await startReportClient();
  const sink = await startSmtpSink(options.sink);
  const reports = Object.entries({ ...FAST_REPORTS, ...options.reports })
    .map(([key, value]) => `${key} = ${value}`)
    .join('\n');
  const fx = await startQueueFixture({
    extraToml: `[reports]\n${reports}\n${options.extraToml ?? ''}\n`,
    ...(options.clock === undefined ? {} : { clock: options.clock }),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.env === undefined ? {} : { env: options.env }),
  });
  cleanups.push(
    async () => client.stop(),
    async () => sink.stop(),
    async () => {
      await fx.stop();
      fx.t.cleanup();
    },
  );
  return {
    fx,
    client,
    sink,
    async addTenant(id, path, fields = {}) {
      const response = await fx.admin('POST', '/tenant', { id, client_base_url: client.base + path, ...fields });
      if (response.status !== 201) throw new Error(`tenant ${id}: ${response.text}`);
      await fx.createAccount(id, 'main', sink, { is_default: true });
      return { key: response.body.api_key as string, secret: response.body.client_signing_secret as string };
    },
  };
}
