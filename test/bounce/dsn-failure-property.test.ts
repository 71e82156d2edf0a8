/**
 * A DSN is never read as a delivery notice when its recipient group says the
 * delivery failed, in whatever words: RFC 3464's Action "failed" or "delayed",
 * a vendor's action ("Failure", "bounce", "Transient-Failure"), a 4.x.x or
 * 5.x.x Status, or, when the Status is empty or broken, a 4yz or 5yz reply in
 * Diagnostic-Code. Lost that way, a bounce never reaches its message and its
 * address is never suppressed. Generated with fast-check, LF and CRLF alike.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { analyseBounce } from '../../src/bounce/bounce-parser.js';
import { hostileRuns, hostileSeed } from '../helpers/property-runs.js';

const crlf = (text: string): string => text.replace(/\r?\n/g, '\r\n');

/** What an Action field may hold: the five, vendors' words, with case and extra words varied. */
const FAILURE_ACTIONS = [
  'failed',
  'Failed',
  'FAILED',
  'failure',
  'Failure (permanent)',
  'bounce',
  'Bounced',
  'undeliverable',
  'rejected',
  'delayed',
  'Delayed - will retry',
  'Transient-Failure',
  'deferred',
  'failed; permanent',
];
const OTHER_ACTIONS = ['delivered', 'relayed', 'expanded', 'Delivered', 'unknown', 'x-vendor-state', '', 'notified'];
const BROKEN_STATUSES = ['', ' ', 'unknown', 'n/a', '4.x.x', '5.?.?', 'failed', '550'];

/** A recipient group and whether its fields, read as RFC 3464 means them, say the delivery failed. */
const group = fc
  .record({
    local: fc.stringMatching(/^[a-z][a-z0-9.]{0,11}$/),
    action: fc.oneof(fc.constantFrom(...FAILURE_ACTIONS), fc.constantFrom(...OTHER_ACTIONS)),
    status: fc.oneof(
      fc.constantFrom(...BROKEN_STATUSES),
      fc
        .tuple(fc.constantFrom('2', '4', '5'), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 9 }))
        .map(([klass, subject, detail]) => `${klass}.${subject}.${detail}`),
    ),
    diagnostic: fc.option(
      fc.tuple(
        fc.constantFrom(250, 421, 450, 451, 452, 550, 551, 552, 553, 554),
        fc.constantFrom('Mailbox unavailable', 'Requested action not taken', 'Ok', 'Try again later'),
      ),
      { nil: null },
    ),
  })
  .map((fields) => {
    const statusClass = /^\s*([245])\.\d{1,3}\.\d{1,3}\s*$/.exec(fields.status)?.[1] ?? null;
    const saysFailure =
      FAILURE_ACTIONS.includes(fields.action) ||
      statusClass === '4' ||
      statusClass === '5' ||
      (statusClass === null && fields.diagnostic !== null && fields.diagnostic[0] >= 400);
    return { ...fields, recipient: `${fields.local}@example.net`, saysFailure };
  });

function dsn(
  groups: Array<{ recipient: string; action: string; status: string; diagnostic: [number, string] | null }>,
): string {
  const fields = groups
    .map((entry) =>
      [
        `Final-Recipient: rfc822; ${entry.recipient}`,
        `Action: ${entry.action}`,
        `Status: ${entry.status}`,
        ...(entry.diagnostic === null ? [] : [`Diagnostic-Code: smtp; ${entry.diagnostic[0]} ${entry.diagnostic[1]}`]),
      ].join('\n'),
    )
    .join('\n\n');
  return `From: Mail Delivery System <MAILER-DAEMON@mx.relay.example>
To: bounces@acme.example
Subject: Delivery Status Notification
MIME-Version: 1.0
Content-Type: multipart/report; report-type=delivery-status; boundary="B"

--B
Content-Type: text/plain

This is an automatically generated Delivery Status Notification.

--B
Content-Type: message/delivery-status

Reporting-MTA: dns; mx.relay.example

${fields}

--B
Content-Type: text/rfc822-headers

From: app@acme.example
Subject: hello
Message-ID: <m-1@acme.example>
X-Genro-Mail-ID: m-1

--B--
`;
}

describe('a DSN whose recipient fields say failure', () => {
  it('is never classified delivered, and each failed recipient is named', async () => {
    let failing = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(group, { minLength: 1, maxLength: 3 }), fc.boolean(), async (groups, useCrlf) => {
        const text = dsn(groups);
        const analysis = await analyseBounce(Buffer.from(useCrlf ? crlf(text) : text, 'utf8'));
        const failed = groups.filter((entry) => entry.saysFailure);
        if (failed.length === 0) return;
        failing += 1;
        expect(analysis.kind, text).not.toBe('delivered');
        expect(['bounce', 'delayed']).toContain(analysis.kind);
        const named = analysis.recipients.map((verdict) => verdict.recipient);
        for (const entry of failed) expect(named, text).toContain(entry.recipient);
      }),
      { seed: hostileSeed(), numRuns: hostileRuns(400) },
    );
    // The generator must reach the property: most inputs hold a failing group.
    expect(failing).toBeGreaterThan(200);
  });

  it('a group that says delivered, with a 2.x.x status, is still a delivery', async () => {
    const analysis = await analyseBounce(
      Buffer.from(
        crlf(dsn([{ recipient: 'ok@example.net', action: 'delivered', status: '2.0.0', diagnostic: [250, 'Ok'] }])),
        'utf8',
      ),
    );
    expect(analysis.kind).toBe('delivered');
  });
});
