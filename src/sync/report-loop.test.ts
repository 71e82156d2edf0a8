import { describe, expect, it } from 'vitest';
import type { Logger } from '../core/logger.js';
import type { ClientReply, LaneRecord, ReportStore } from '../core/report/report.js';
import type { Tenant } from '../core/tenant/tenant.js';
import { createReportLoop } from './report-loop.js';

const RECORD: LaneRecord = {
  failures: 0,
  retryAt: null,
  dndUntil: null,
  lastSuccessAt: null,
  lastAttemptAt: null,
  lastError: null,
  lastErrorAt: null,
};
const quiet: Logger = {
  fatal: () => undefined,
  error: () => undefined,
  warn: () => undefined,
  info: () => undefined,
  debug: () => undefined,
  child: () => quiet,
};

/** One tenant with an endpoint and a transport the test answers by hand; the store records acknowledgements. */
function loopWithOneRound() {
  const acknowledged: number[] = [];
  const round = { answer: (_reply: ClientReply): void => undefined, signal: null as AbortSignal | null };
  let posting: () => void = () => undefined;
  const posted = new Promise<void>((resolve) => (posting = resolve));
  const store: ReportStore = {
    lanes: () => [{ tenantId: 'acme', syncUrl: 'http://client.example/sync', record: RECORD }],
    lane: () => null,
    pending: () => [],
    backlog: () => ({ count: 0, oldestAt: null }),
    acknowledge: (_tenantId, _events, _record, report) => void acknowledged.push(report.at),
    saveLane: () => undefined,
    attempts: () => [],
  };
  const tenant = {
    id: 'acme',
    clientBaseUrl: 'http://client.example',
    clientSyncPath: '/sync',
    clientAuth: { method: 'none' },
    clientSigningSecret: null,
  } as unknown as Tenant;
  const loop = createReportLoop({
    store,
    tenants: { get: () => tenant },
    transport: {
      post: (_target, _body, _headers, signal) =>
        new Promise<ClientReply>((resolve) => {
          round.signal = signal;
          round.answer = resolve;
          // As the HTTP transport does: an abort ends the post as a failure.
          signal.addEventListener('abort', () =>
            resolve({ ok: false, failure: { code: 'connection', message: 'aborted' } }),
          );
          posting();
        }),
    },
    sign: () => '',
    signatureHeader: 'x-signature',
    clock: { now: () => Date.now() },
    ids: { uuid: () => 'report-1' },
    random: () => 0.5,
    log: quiet,
    config: {
      policy: {
        syncIntervalMs: 60_000,
        retryInitialMs: 1000,
        retryMaxMs: 60_000,
        retryJitter: 0,
        maxFollowups: 0,
        maxHoldMs: 0,
      },
      batchSize: 100,
      requestTimeoutMs: 30_000,
      batchDelayMs: 0,
      rescanMs: 60_000,
    },
  });
  loop.start();
  return {
    loop,
    posted,
    acknowledged,
    answer: (reply: ClientReply) => round.answer(reply),
    aborted: () => round.signal?.aborted === true,
  };
}

describe('stopping the report loop', () => {
  it('waits for a round in flight within the grace, and records its acknowledgement', async () => {
    const round = loopWithOneRound();
    await round.posted;
    const stopped = round.loop.stop(5000);
    // The client answers once the stop is under way (a turn of the event loop later), not before it.
    await new Promise(setImmediate);
    round.answer({ ok: true, queued: 0, nextSyncAfter: null });
    await stopped;
    expect(round.aborted()).toBe(false);
    expect(round.acknowledged).toHaveLength(1);
  });

  it('aborts a round still in flight when the grace is over, acknowledging nothing', async () => {
    const round = loopWithOneRound();
    await round.posted;
    const startedAt = performance.now();
    await round.loop.stop(100);
    expect(performance.now() - startedAt).toBeGreaterThanOrEqual(90);
    expect(round.aborted()).toBe(true);
    expect(round.acknowledged).toEqual([]);
  });
});
