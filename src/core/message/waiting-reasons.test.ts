import { describe, expect, it } from 'vitest';
import { whyWaiting, type WaitingInput } from './waiting-reasons.js';

const NOW = Date.UTC(2026, 10, 23, 10, 0, 30);
const account = {
  pausedAt: null,
  pausedReason: null,
  limitPerMinute: null,
  limitPerHour: null,
  limitPerDay: null,
  maxConnections: 5,
};
const input = (extra: Partial<WaitingInput> = {}, message: Partial<WaitingInput['message']> = {}): WaitingInput => ({
  message: {
    state: 'queued',
    attempts: 0,
    createdAt: NOW - 60_000,
    nextAttemptAt: NOW - 1000,
    batchCode: 'spring',
    ...message,
  },
  tenantActive: true,
  suspensions: [],
  account,
  usage: { minute: 0, hour: 0, day: 0 },
  suppressed: [],
  maxAgeSeconds: 432_000,
  now: NOW,
  ...extra,
});
const codes = (extra: Partial<WaitingInput> = {}, message: Partial<WaitingInput['message']> = {}) =>
  whyWaiting(input(extra, message)).reasons.map((reason) => reason.code);

describe('why a message is still waiting', () => {
  it('a due message waits only for a connection of its pool; it expires max age after acceptance', () => {
    expect(whyWaiting(input())).toEqual({
      waiting: true,
      reasons: [{ code: 'due', untilAt: null, poolSize: 5 }],
      expiresAt: NOW - 60_000 + 432_000_000,
    });
  });

  it('names the tenant, its suspension, the batch suspension and the account, each with how it ends', () => {
    expect(codes({ tenantActive: false })).toEqual(['tenant_inactive']);
    expect(codes({ suspensions: ['*'] })).toEqual(['tenant_suspended']);
    expect(codes({ suspensions: ['spring'] })).toEqual(['batch_suspended']);
    expect(codes({ suspensions: ['autumn'] })).toEqual(['due']);
    expect(codes({ account: null })).toEqual(['account_missing']);
    const paused = whyWaiting(
      input({ account: { ...account, pausedAt: NOW - 1000, pausedReason: '535 authentication failed' } }),
    ).reasons;
    expect(paused).toEqual([{ code: 'account_paused', untilAt: null, pausedReason: '535 authentication failed' }]);
  });

  it('an exhausted sending limit holds it until the latest full window ends', () => {
    const limited = whyWaiting(
      input({
        account: { ...account, limitPerMinute: 10, limitPerHour: 100 },
        usage: { minute: 10, hour: 100, day: 100 },
      }),
    ).reasons;
    expect(limited).toMatchObject([{ code: 'rate_limited', untilAt: Date.UTC(2026, 10, 23, 11, 0, 0) }]);
    expect(codes({ account: { ...account, limitPerMinute: 10 }, usage: { minute: 9, hour: 9, day: 9 } })).toEqual([
      'due',
    ]);
  });

  it('tells a client schedule from a retry backoff', () => {
    const later = NOW + 600_000;
    expect(whyWaiting(input({}, { nextAttemptAt: later })).reasons).toEqual([{ code: 'scheduled', untilAt: later }]);
    expect(whyWaiting(input({}, { state: 'deferred', attempts: 2, nextAttemptAt: later })).reasons).toEqual([
      { code: 'retry_backoff', untilAt: later },
    ]);
  });

  it('an attempt due within the current second is due now', () => {
    expect(codes({}, { nextAttemptAt: NOW + 500 })).toEqual(['due']);
  });

  it('lists every blocker at once, and suppressed recipients', () => {
    expect(
      codes({ suspensions: ['*', 'spring'], suppressed: ['ann@example.net'] }, { nextAttemptAt: NOW + 60_000 }),
    ).toEqual(['tenant_suspended', 'batch_suspended', 'scheduled', 'suppressed']);
    expect(whyWaiting(input({ suppressed: ['ann@example.net'] })).reasons).toEqual([
      { code: 'suppressed', untilAt: null, recipients: ['ann@example.net'] },
    ]);
  });

  it('a message on the wire is sending; a sent or failed one waits for nothing', () => {
    expect(codes({}, { state: 'sending' })).toEqual(['sending']);
    expect(whyWaiting(input({}, { state: 'sent' }))).toEqual({ waiting: false, reasons: [], expiresAt: null });
    expect(whyWaiting(input({}, { state: 'error' })).waiting).toBe(false);
  });
});
