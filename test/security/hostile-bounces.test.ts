/**
 * Malformed DSNs that name a message we really sent, appended to a real
 * Dovecot: generated Status, Action, recipient and Diagnostic-Code fields
 * (impossible codes, SQL metacharacters, NULs, 100 KB values, encoded words),
 * returned headers only or the whole original, truncated or with the report
 * part repeated. (test/bounce/mailbox-hostile.test.ts covers garbage MIME that
 * names nothing.) Properties: every message is filed and the poller stays
 * connected without error; the message keeps a valid state and its bounce
 * fields stay well-formed (a hard or soft type, a reply code or an x.y.z
 * status) or empty.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dsnFor } from '../helpers/bounce-mail.js';
import { sqlText } from '../helpers/hostile-json.js';
import { hostileSeed, hostileRuns } from '../helpers/property-runs.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario } from '../helpers/report-fixture.js';
import { bounceToml, startDovecot } from '../peers/dovecot.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const RECIPIENT = 'ann@example.net';

const field = (valid: string[]) =>
  fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...valid) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '',
        '9.9.9',
        '5.1',
        '5.1.1.1',
        'x.y.z',
        '5.999999999.1',
        '0.0.0',
        '5.1.1 (extra)',
        '5.\u00001.1',
        '=?utf-8?B?NS4xLjE=?=',
      ),
    },
    { weight: 1, arbitrary: sqlText },
    { weight: 1, arbitrary: fc.constantFrom('\0\0', 'A'.repeat(100_000), 'é'.repeat(5000)) },
  );

const dsnSpec = fc.record({
  status: field(['5.1.1', '4.2.2', '5.7.1', '2.0.0']),
  action: field(['failed', 'delayed', 'delivered', 'relayed', 'expanded', 'FAILED']),
  recipient: fc.oneof(fc.constantFrom(RECIPIENT, 'ANN@EXAMPLE.NET', 'other@example.net', '<>', '', 'a@b'), sqlText),
  diagnostic: fc.oneof(
    fc.constantFrom('550 5.1.1 user unknown', '999 9.9.9 nonsense', '452', ''),
    sqlText,
    fc.constant('x'.repeat(100_000)),
  ),
  headersOnly: fc.boolean(),
  shape: fc.constantFrom('whole', 'truncated', 'report-twice'),
  cut: fc.double({ min: 0.5, max: 1, noNaN: true }),
});

type DsnSpec = typeof dsnSpec extends fc.Arbitrary<infer T> ? T : never;

function build(original: Buffer, spec: DsnSpec): Buffer {
  const raw = dsnFor(original, {
    recipient: spec.recipient,
    status: spec.status,
    action: spec.action as 'failed',
    diagnostic: spec.diagnostic,
    headersOnly: spec.headersOnly,
  });
  if (spec.shape === 'truncated') {
    // Cut after the returned original's id, so the DSN still names our message.
    const after = raw.indexOf('X-Genro-Mail-ID') + 40;
    return raw.subarray(0, Math.max(after, Math.floor(raw.length * spec.cut)));
  }
  if (spec.shape === 'report-twice') {
    const text = raw.toString('utf8');
    const part =
      /--dsn-boundary\r\nContent-Type: message\/delivery-status[\s\S]*?(?=--dsn-boundary)/.exec(text)?.[0] ?? '';
    return Buffer.from(text.replace(part, part + part), 'utf8');
  }
  return raw;
}

describe('malformed DSNs naming a real message, in a real bounce mailbox', () => {
  it('files every one, keeps the poller connected and the message consistent', async () => {
    const dovecot = await startDovecot();
    cleanups.push(() => dovecot.destroy());
    const s = await startReportScenario(cleanups, {
      extraToml: `\n${bounceToml(dovecot)}processed_folder = "Processed"\nunmatched_folder = "Unmatched"\nnot_bounce_folder = "NotBounce"\npoll_interval_seconds = 1\nparse_timeout_seconds = 10\n`,
    });
    const { key } = await s.addTenant('acme', '/acme');
    expect((await s.fx.post(key, [message('inv-1', { to: RECIPIENT })])).status).toBe(200);
    await s.fx.settle();
    const original = s.sink.messages[0]?.raw;
    if (original === undefined) throw new Error('the sink did not receive inv-1');

    const seed = hostileSeed();
    const specs = fc.sample(dsnSpec, { seed, numRuns: hostileRuns(30) });
    let stored = 0;
    for (const spec of specs) {
      try {
        await dovecot.append(build(original, spec));
        stored += 1;
      } catch {
        // Refused by Dovecot (its own rules on NULs): never reaches us.
      }
    }
    console.log(
      `[hostile] bounce mailbox: ${specs.length} malformed DSNs generated (seed ${seed}), ${stored} stored by Dovecot`,
    );
    expect(stored).toBeGreaterThan(specs.length / 2);

    await vi.waitFor(async () => expect(await dovecot.list('INBOX')).toEqual([]), { timeout: 60_000, interval: 200 });
    const folders = await dovecot.folders();
    let filed = 0;
    // A folder is created when the first message is filed there.
    for (const folder of ['Processed', 'Unmatched', 'NotBounce'])
      if (folders.includes(folder)) filed += (await dovecot.list(folder)).length;
    expect(filed).toBe(stored);
    const status = (await s.fx.admin('GET', '/bounce/status')).body.mailboxes[0];
    expect(status).toMatchObject({ connected: true, last_error: null });

    const { message: stored1, events } = await s.fx.detail('acme', 'inv-1');
    console.log(
      `[hostile] bounce mailbox: filed ${JSON.stringify(status.handled)}; inv-1 ended ${JSON.stringify({ state: stored1.state, bounce_type: stored1.bounce_type, bounce_code: stored1.bounce_code })}`,
    );
    expect(stored1.state).toBe('sent');
    expect([null, 'hard', 'soft']).toContain(stored1.bounce_type);
    // bounce_code is the reply code, or the enhanced status when the bounce gave none (core/bounce/bounce.ts).
    if (stored1.bounce_code !== null) expect(stored1.bounce_code).toMatch(/^(?:[245][0-5]\d|[245]\.\d{1,3}\.\d{1,3})$/);
    if (stored1.bounce_reason !== null) expect(typeof stored1.bounce_reason).toBe('string');
    for (const event of events.filter((e) => e.event_type === 'bounced'))
      expect(event.enhanced_status ?? null).toSatisfy(
        (code: string | null) => code === null || /^[245]\.\d{1,3}\.\d{1,3}$/.test(code),
      );
    expect((await s.fx.admin('GET', '/health')).status).toBe(200);
    const errors = s.fx.t.logLines
      .map((line) => JSON.parse(line) as { level: string | number; msg: string })
      .filter((entry) => entry.level === 'error' || entry.level === 'fatal' || Number(entry.level) >= 50);
    expect(errors).toEqual([]);
  }, 120_000);
});
