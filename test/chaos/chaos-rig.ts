/**
 * The world a chaos run lives in: one data directory that outlives every
 * restart, a real relay sink (slow enough that sends are often in flight), a
 * real report client, a real nats-server, and the built daemon spawned on them.
 * Knows nothing of what is injected or checked.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { api, type ApiResponse } from '../helpers/test-daemon.js';
import { startNatsServer, type NatsPeer } from '../peers/nats-server.js';
import {
  OK,
  startReportClient,
  type ClientAnswer,
  type ReceivedReport,
  type ReportClient,
} from '../peers/report-client.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';

export const TENANT = 'chaos';
/** Recipients at this domain are refused by the relay with 550, so some messages end in `error`. */
export const REFUSED_DOMAIN = 'refused.example.net';

export interface RunningDaemon {
  process: DaemonProcess;
  url: string;
  smtpPort: number;
}

export interface ChaosRig {
  cwd: string;
  dataDir: string;
  sink: SmtpSink;
  client: ReportClient;
  nats: NatsPeer;
  /** Relay answers 451 to every message while true (an upstream outage). */
  relayDown: boolean;
  /** How the report client answers; the rig's default refuses every fifth report that carries items (503) and acknowledges the rest. */
  reportAnswer: (report: ReceivedReport) => ClientAnswer;
  /** Report items (by event id) the client answered 2xx for, with how often: a refused or unanswered post does not count. */
  acceptedItems: Map<string, number>;
  adminToken(): string;
  tenantKey: string;
  /** Spawns the daemon on the data directory (not waiting for anything). */
  spawn(): DaemonProcess;
  /** Spawns and waits until HTTP and SMTP listen. */
  start(): Promise<RunningDaemon>;
  admin(daemon: RunningDaemon, method: string, path: string, body?: unknown): Promise<ApiResponse>;
  /** Creates the tenant (with the client as its endpoint) and its default account on the sink. */
  provision(daemon: RunningDaemon): Promise<void>;
  stop(): Promise<void>;
}

/** Short retry and report timings so that a run settles in seconds; generous timeouts so that a slow machine does not fail sends. */
const ENV = {
  MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
  MAILPROXY_DISPATCH_RETRY_SCHEDULE_SECONDS: '1',
  MAILPROXY_DISPATCH_RETRY_JITTER: '0',
  MAILPROXY_DISPATCH_LEASE_SECONDS: '30',
  MAILPROXY_REPORTS_BATCH_SIZE: '50',
  MAILPROXY_REPORTS_BATCH_DELAY_MS: '20',
  MAILPROXY_REPORTS_REQUEST_TIMEOUT_SECONDS: '120',
  MAILPROXY_REPORTS_RETRY_INITIAL_SECONDS: '0.2',
  MAILPROXY_REPORTS_RETRY_MAX_SECONDS: '1',
  MAILPROXY_NATS_CONNECT_TIMEOUT_SECONDS: '1',
  MAILPROXY_NATS_BATCH_DELAY_MS: '10',
};

export async function startChaosRig(options: { relayDelayMs: number }): Promise<ChaosRig> {
  const cwd = mkdtempSync(join(tmpdir(), 'mailproxy-chaos-'));
  const nats = await startNatsServer();
  const client = await startReportClient();
  let reportsWithItems = 0;
  const rig: ChaosRig = {
    cwd,
    dataDir: join(cwd, 'data'),
    sink: undefined as unknown as SmtpSink,
    client,
    nats,
    relayDown: false,
    reportAnswer: (report) =>
      report.items.length > 0 && (reportsWithItems += 1) % 5 === 0 ? { status: 503, body: { ok: false } } : OK,
    acceptedItems: new Map(),
    adminToken: () => readFileSync(join(cwd, 'data', 'admin-token'), 'utf8').trim(),
    tenantKey: '',
    spawn: () => spawnDaemon(['serve'], { cwd, env: { ...ENV, MAILPROXY_NATS_URL: nats.url } }),
    async start() {
      const process = rig.spawn();
      const [http, smtp] = await Promise.all([
        process.waitForLog((entry) => entry.msg === 'http listening'),
        process.waitForLog((entry) => entry.msg === 'smtp listening'),
      ]);
      return { process, url: `http://127.0.0.1:${http.port as number}`, smtpPort: smtp.port as number };
    },
    admin: (daemon, method, path, body) => api(daemon.url, method, path, { token: rig.adminToken(), body }),
    async provision(daemon) {
      const tenant = await rig.admin(daemon, 'POST', '/tenant', { id: TENANT, client_base_url: client.base });
      if (tenant.status !== 201) throw new Error(`tenant not created: ${tenant.text}`);
      rig.tenantKey = tenant.body.api_key as string;
      const account = await rig.admin(daemon, 'POST', '/account', {
        id: 'main',
        tenant_id: TENANT,
        host: '127.0.0.1',
        port: rig.sink.port,
        tls_mode: 'none',
        is_default: true,
        max_connections: 2,
      });
      if (account.status !== 201) throw new Error(`account not created: ${account.text}`);
    },
    async stop() {
      await rig.sink.stop();
      await client.stop();
      await nats.destroy();
      rmSync(cwd, { recursive: true, force: true });
    },
  };
  client.answer((report) => {
    const answer = rig.reportAnswer(report);
    if (answer !== 'hang' && answer.status >= 200 && answer.status < 300) {
      for (const item of report.items)
        rig.acceptedItems.set(String(item.event_id), (rig.acceptedItems.get(String(item.event_id)) ?? 0) + 1);
    }
    return answer;
  });
  rig.sink = await startSmtpSink({
    answerDelayMs: options.relayDelayMs,
    onRcpt: (address) =>
      address.endsWith(`@${REFUSED_DOMAIN}`) ? { code: 550, message: '5.1.1 No such user here' } : null,
    onData: () => (rig.relayDown ? { code: 451, message: '4.3.0 Upstream outage, try again later' } : null),
  });
  return rig;
}

/** Kills the process with SIGKILL and waits for it to be gone. */
export async function killHard(process: DaemonProcess): Promise<void> {
  if (process.child.exitCode === null && process.child.signalCode === null) process.child.kill('SIGKILL');
  await process.exited;
}
