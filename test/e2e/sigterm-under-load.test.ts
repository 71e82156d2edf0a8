/**
 * SIGTERM while SMTP and HTTP submissions pour in: intake closes
 * first, sends in flight finish within shutdown_timeout_seconds, nothing
 * acknowledged is lost or left `sending`, and the next start delivers it all.
 * Also: a second signal, and a relay that never answers past the deadline.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { serveUntilListening, type DaemonProcess } from '../helpers/daemon-process.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';
import { startReportClient } from '../peers/report-client.js';
import { startSmtpSink, type SmtpSink, type SmtpSinkOptions } from '../peers/smtp-sink.js';

const { dirs, running, sinks } = tearDownProcesses();

interface Started {
  daemon: DaemonProcess;
  url: string;
  smtpPort: number;
}

async function start(cwd: string, deadlineSeconds: number): Promise<Started> {
  const env = {
    MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
    MAILPROXY_SHUTDOWN_TIMEOUT_SECONDS: String(deadlineSeconds),
    MAILPROXY_DISPATCH_LEASE_SECONDS: '10',
  };
  const { daemon, url } = await serveUntilListening(cwd, env, running);
  const smtp = await daemon.waitForLog((entry) => entry.msg === 'smtp listening' && entry.listener === 'plain');
  await daemon.waitForLog((entry) => entry.msg === 'ready');
  return { daemon, url, smtpPort: smtp.port as number };
}

/** A data dir, the daemon, a tenant (reporting to `reportBase` when given) and its default account on the sink. */
async function setUp(sinkOptions: SmtpSinkOptions, deadlineSeconds: number, reportBase?: string) {
  const sink = await startSmtpSink(sinkOptions);
  sinks.push(sink);
  const cwd = mkdtempSync(join(tmpdir(), 'mailproxy-sigterm-'));
  dirs.push(cwd);
  const first = await start(cwd, deadlineSeconds);
  const token = readFileSync(join(cwd, 'data', 'admin-token'), 'utf8').trim();
  const tenant = await api(first.url, 'POST', '/tenant', {
    token,
    body: {
      id: 'acme',
      ...(reportBase === undefined ? {} : { client_base_url: reportBase, client_auth: { method: 'none' } }),
    },
  });
  expect(tenant.status, tenant.text).toBe(201);
  const account = await api(first.url, 'POST', '/account', {
    token,
    body: {
      id: 'main',
      tenant_id: 'acme',
      host: '127.0.0.1',
      port: sink.port,
      tls_mode: 'none',
      max_connections: 2,
      is_default: true,
    },
  });
  expect(account.status, account.text).toBe(201);
  return { sink, cwd, first, key: tenant.body.api_key as string };
}

/** Posts batches of five until a request is not answered 200 with all five queued; each answered batch is acknowledged. */
async function httpLoad(url: string, key: string, prefix: string, acked: Set<string>): Promise<void> {
  for (let batch = 0; ; batch += 1) {
    const ids = Array.from({ length: 5 }, (_, index) => `${prefix}-${batch}-${index}`);
    const messages = ids.map((id) => ({
      id,
      from: 'app@acme.example',
      to: 'someone@example.net',
      subject: id,
      body: `body of ${id}`,
    }));
    const answer = await api(url, 'POST', '/add-messages', { token: key, body: { messages } }).catch(() => null);
    if (answer === null || answer.status !== 200) return;
    expect(answer.body).toEqual({ ok: true, queued: 5, rejected: [] });
    for (const id of ids) acked.add(id);
  }
}

/** One SMTP session sending until a transaction fails; a 250 naming the X-Genro-Mail-ID acknowledges it. */
async function smtpLoad(port: number, key: string, prefix: string, acked: Set<string>): Promise<void> {
  const session = await openSubmission(port);
  await session.login('acme', key);
  try {
    for (let index = 0; ; index += 1) {
      const id = `${prefix}-${index}`;
      const raw = `From: app@acme.example\r\nTo: someone@example.net\r\nSubject: ${id}\r\nX-Genro-Mail-ID: ${id}\r\n\r\nbody of ${id}\r\n`;
      const info = await session.send({ from: 'app@acme.example', to: ['someone@example.net'] }, raw).catch(() => null);
      if (info === null) return;
      expect(info.response).toBe(`250 2.0.0 Ok: queued as ${id}`);
      acked.add(id);
    }
  } finally {
    session.close();
  }
}

/** Resolves once a TCP connection to the port is refused: nobody listens there any more. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

/** The messages table after the process is gone, read-only. */
function storedStates(cwd: string): Map<string, { state: string; events: string[] }> {
  const db = new Database(join(cwd, 'data', 'mailproxy.db'), { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT m.id, m.state, (SELECT group_concat(event_type) FROM outbox o WHERE o.message_pk = m.pk) AS events FROM messages m`,
      )
      .all() as Array<{ id: string; state: string; events: string | null }>;
    return new Map(rows.map((row) => [row.id, { state: row.state, events: (row.events ?? '').split(',') }]));
  } finally {
    db.close();
  }
}

const mailIdOf = (raw: Buffer): string => /^X-Genro-Mail-ID: (.+)$/im.exec(raw.toString('utf8'))?.[1]?.trim() ?? '';

/** Polls the sink (it answers at once now) until every acknowledged id arrived; answers those still missing. */
async function deliveredAfterRestart(sink: SmtpSink, acked: Set<string>, timeoutMs: number): Promise<string[]> {
  const missing = (): string[] => {
    const received = new Set(sink.messages.map((message) => mailIdOf(message.raw)));
    return [...acked].filter((id) => !received.has(id));
  };
  const until = Date.now() + timeoutMs;
  while (missing().length > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
  return missing();
}

async function signalled(
  daemon: DaemonProcess,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; elapsedMs: number }> {
  const at = performance.now();
  daemon.child.kill(signal);
  const { code } = await daemon.exited;
  return { code, elapsedMs: performance.now() - at };
}

describe('stopping the real process', () => {
  it('on SIGTERM under load closes intake first, finishes the sends in flight, keeps every acknowledged message and sends it after the restart', async () => {
    const reportClient = await startReportClient();
    const sinkOptions: SmtpSinkOptions = { answerDelayMs: 600 };
    const { sink, cwd, first, key } = await setUp(sinkOptions, 5, `${reportClient.base}/acme`);
    const httpPort = Number(new URL(first.url).port);
    try {
      const acked = new Set<string>();
      const loads = [
        ...['smtp-a', 'smtp-b', 'smtp-c'].map((prefix) => smtpLoad(first.smtpPort, key, prefix, acked)),
        ...['http-a', 'http-b'].map((prefix) => httpLoad(first.url, key, prefix, acked)),
      ];
      await sink.waitForAnswering(1, 10_000);
      await sink.waitForMessages(2, 10_000);
      expect(acked.size).toBeGreaterThan(0);

      const stopping = signalled(first.daemon, 'SIGTERM');
      await first.daemon.waitForLog((entry) => entry.msg === 'listeners closed; finishing the submissions in flight');
      // Intake is closed before anything else is waited for.
      expect(await refused(first.smtpPort)).toBe(true);
      expect(await refused(httpPort)).toBe(true);
      const { code, elapsedMs } = await stopping;
      await Promise.all(loads);
      expect(code, first.daemon.stderr.join('')).toBe(0);
      expect(elapsedMs).toBeLessThan(5000 + 1000);
      const log = first.daemon.entries;
      expect(log.filter((entry) => entry.level === 'error' || entry.level === 'fatal')).toEqual([]);
      // The sends in flight finished: none was handed back, and whatever the relay took is recorded sent.
      expect(
        log.find((entry) => entry.msg === 'sends still in flight at the shutdown deadline go back to the queue'),
      ).toBeUndefined();
      const stored = storedStates(cwd);
      expect(
        [...acked].filter((id) => !stored.has(id)),
        'acknowledged but not stored',
      ).toEqual([]);
      expect(
        [...stored].filter(([, row]) => row.state === 'sending'),
        'left sending',
      ).toEqual([]);
      const relayed = sink.messages.map((message) => mailIdOf(message.raw));
      expect(
        relayed.filter((id) => stored.get(id)?.state !== 'sent'),
        'relayed but not recorded sent',
      ).toEqual([]);
      expect(acked.size).toBeGreaterThan(relayed.length); // a backlog was left for the restart

      sinkOptions.answerDelayMs = 0;
      const second = await start(cwd, 5);
      expect(await deliveredAfterRestart(sink, acked, 20_000), 'acknowledged, never delivered').toEqual([]);
      // Stopped cleanly, the first run left no lease to reclaim: nothing is sent twice.
      expect(
        second.daemon.entries.find((entry) => entry.msg === 'messages interrupted by the last stop will be sent again'),
      ).toBeUndefined();
      expect(sink.messages.length).toBe(new Set(sink.messages.map((message) => mailIdOf(message.raw))).size);
      expect((await signalled(second.daemon, 'SIGTERM')).code).toBe(0);
      console.log(
        `sigterm under load: ${acked.size} acknowledged, ${relayed.length} relayed before the stop (${Math.round(elapsedMs)} ms to exit)`,
      );
    } finally {
      await reportClient.stop();
    }
  }, 40_000);

  it('exits at once, nonzero, on a second signal, and the next start sends what was in flight', async () => {
    const sinkOptions: SmtpSinkOptions = { answerDelayMs: 3000 };
    const { sink, cwd, first, key } = await setUp(sinkOptions, 10);
    const acked = new Set<string>();
    const load = httpLoad(first.url, key, 'second', acked);
    await sink.waitForAnswering(1, 10_000);

    const stopping = signalled(first.daemon, 'SIGTERM');
    await first.daemon.waitForLog((entry) => entry.msg === 'shutting down');
    const again = performance.now();
    first.daemon.child.kill('SIGTERM');
    const { code } = await stopping;
    await load;
    expect(code).toBe(1);
    expect(performance.now() - again).toBeLessThan(1500);
    expect(first.daemon.entries.map((entry) => entry.msg)).toContain('second signal: exiting now');
    const stored = storedStates(cwd);
    expect(
      [...acked].filter((id) => !stored.has(id)),
      'acknowledged but not stored',
    ).toEqual([]);

    sinkOptions.answerDelayMs = 0;
    const second = await start(cwd, 5);
    // Cut short, the first run left its sends leased: the next one takes them back at once, not after the lease.
    const reclaimed = second.daemon.entries.find(
      (entry) => entry.msg === 'messages interrupted by the last stop will be sent again',
    );
    expect(reclaimed?.reclaimed).toBeGreaterThanOrEqual(1);
    expect(await deliveredAfterRestart(sink, acked, 20_000), 'acknowledged, never delivered').toEqual([]);
  }, 30_000);

  it('hands back a send the relay never answers when the deadline comes, and exits then', async () => {
    const { sink, cwd, first, key } = await setUp({ hangAfterData: true }, 2);
    const posted = await api(first.url, 'POST', '/add-messages', {
      token: key,
      body: {
        messages: ['silent-1', 'silent-2', 'silent-3'].map((id) => ({
          id,
          from: 'app@acme.example',
          to: 'someone@example.net',
          subject: id,
          body: id,
        })),
      },
    });
    expect(posted.body).toEqual({ ok: true, queued: 3, rejected: [] });
    await sink.waitForUnanswered(1, 10_000);

    const { code, elapsedMs } = await signalled(first.daemon, 'SIGTERM');
    // The waits end 20% before the deadline, kept for handing back and closing.
    expect(code, first.daemon.stderr.join('')).toBe(0);
    expect(elapsedMs).toBeGreaterThan(2000 * 0.8 - 100);
    expect(elapsedMs).toBeLessThan(2000 + 500);
    const handedBack = first.daemon.entries.find(
      (entry) => entry.msg === 'sends still in flight at the shutdown deadline go back to the queue',
    );
    expect(handedBack?.handedBack).toBeGreaterThanOrEqual(1);
    const stored = storedStates(cwd);
    expect([...stored.values()].map((row) => row.state)).toEqual(['queued', 'queued', 'queued']);
    const interrupted = [...stored.values()].filter((row) => row.events.includes('message.lease_expired'));
    expect(interrupted).toHaveLength(handedBack?.handedBack as number);
  }, 20_000);
});
