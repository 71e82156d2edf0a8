/**
 * Hostile mail in the bounce mailbox (a real Dovecot): random bytes, truncated
 * and mutated DSNs, 500-deep multiparts, header bombs, a 30 MB bounce... Each
 * is filed `unmatched` or `not-bounce`, none stalls or crashes the poller, and
 * a genuine DSN appended after them all is still recorded.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { dsnFor } from '../helpers/bounce-mail.js';
import { hostileMessages, hugeMessage } from '../helpers/hostile-mime.js';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario } from '../helpers/report-fixture.js';
import { bounceToml, startDovecot } from '../peers/dovecot.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Enough to cycle through every generator of hostile-mime.ts at least once. */
const HOSTILE_COUNT = 30;
const SEED = 20261123;

describe('hostile mail in the bounce mailbox', () => {
  it('files every hostile message as unmatched or not-bounce and goes on to the next genuine bounce', async () => {
    const dovecot = await startDovecot();
    cleanups.push(() => dovecot.destroy());
    const s = await startReportScenario(cleanups, {
      extraToml: `
${bounceToml(dovecot)}processed_folder = "Processed"
unmatched_folder = "Unmatched"
not_bounce_folder = "NotBounce"
poll_interval_seconds = 3600
parse_timeout_seconds = 10
`,
    });
    const { key } = await s.addTenant('acme', '/acme');
    expect((await s.fx.post(key, [message('inv-1', { to: 'ann@example.net' })])).status).toBe(200);
    await s.fx.settle();
    const original = s.sink.messages[0]?.raw;
    if (original === undefined) throw new Error('the sink did not receive inv-1');

    // What the IMAP server refuses to store (it has its own rules about NULs and bare CRs) never reaches us.
    let stored = 0;
    for (const hostile of [
      ...hostileMessages(SEED, HOSTILE_COUNT),
      { name: 'huge-30mb', raw: hugeMessage(30 * 1024 * 1024) },
    ]) {
      try {
        await dovecot.append(hostile.raw);
        stored += 1;
      } catch {
        // refused by Dovecot: not part of the mailbox
      }
    }
    expect(stored).toBeGreaterThanOrEqual(HOSTILE_COUNT * 0.8);
    const genuine = dsnFor(original, { recipient: 'ann@example.net' });
    await dovecot.append(genuine);

    await vi.waitFor(async () => expect((await s.fx.detail('acme', 'inv-1')).message.bounce_type).toBe('hard'), {
      timeout: 60_000,
      interval: 100,
    });
    await vi.waitFor(async () => expect(await dovecot.list('INBOX')).toEqual([]), { timeout: 10_000, interval: 100 });
    const processed = await dovecot.list('Processed');
    expect(processed).toHaveLength(1);
    expect((await dovecot.list('Unmatched')).length + (await dovecot.list('NotBounce')).length).toBe(stored);

    const status = (await s.fx.admin('GET', '/bounce/status')).body.mailboxes[0];
    expect(status).toMatchObject({ connected: true, last_error: null, handled: { processed: 1 } });
    expect(status.handled.unmatched + status.handled.not_bounce).toBe(stored);
  }, 120_000);
});
