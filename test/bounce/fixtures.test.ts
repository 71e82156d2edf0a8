/**
 * The bounce parser against the project's own corpus (test/bounce/fixtures:
 * one .eml per case, expected.json holding what a correct parser must say).
 * Each is read as `mailproxy bounce parse` reads it (the parser, then the
 * output contract of src/bounce/parse-report.ts; test/bounce/parser.test.ts
 * runs the CLI itself), as written (LF) and with CRLF line ends, the form a
 * message has on the wire and in an IMAP mailbox.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { analyseBounce } from '../../src/bounce/bounce-parser.js';
import { parseReportOf } from '../../src/bounce/parse-report.js';

const FIXTURES = fileURLToPath(new URL('./fixtures/', import.meta.url));

/** One recipient's verdict, in the contract's names. */
interface Verdict {
  recipient: string | null;
  bounce_type: 'hard' | 'soft' | null;
  smtp_code: string | null;
  enhanced_status: string | null;
  reason: string | null;
}

interface Expected extends Verdict {
  description: string;
  is_bounce: boolean;
  /** How it was read: dsn, heuristic, arf, autoreply, none. */
  kind: string;
  /** What it is: bounce, delayed, complaint, auto_reply, delivered, not_bounce. */
  category: string;
  mail_id: string | null;
  original_message_id: string | null;
  feedback_type: string | null;
  /** Every bounced recipient, in report order; absent where there is one (or none). */
  recipients?: Verdict[];
}

/** What `bounce parse` prints: the contract's fields plus the parser's per-recipient verdicts. */
interface Printed extends Omit<Expected, 'description' | 'recipients'> {
  diagnostic: string | null;
  recipients: Array<{
    recipient: string | null;
    bounceType: Verdict['bounce_type'];
    replyCode: string | null;
    status: string | null;
    reason: string | null;
    diagnostic: string | null;
  }>;
}

const FIELDS = [
  'is_bounce',
  'kind',
  'category',
  'bounce_type',
  'smtp_code',
  'enhanced_status',
  'recipient',
  'reason',
  'mail_id',
  'original_message_id',
  'feedback_type',
] as const;

const expectations = JSON.parse(readFileSync(join(FIXTURES, 'expected.json'), 'utf8')) as Record<string, Expected>;
const fixtureNames = readdirSync(FIXTURES)
  .filter((file) => file.endsWith('.eml'))
  .map((file) => file.slice(0, -'.eml'.length))
  .sort();

/** Latin-1 keeps every byte as one char, so 8-bit fixtures survive the conversion unchanged. */
const withCrlf = (raw: Buffer): Buffer => Buffer.from(raw.toString('latin1').replace(/\r?\n/g, '\r\n'), 'latin1');

const ENDINGS = { LF: (raw: Buffer): Buffer => raw, CRLF: withCrlf } as const;

const toVerdict = (printed: Printed['recipients'][number]): Verdict => ({
  recipient: printed.recipient,
  bounce_type: printed.bounceType,
  smtp_code: printed.replyCode,
  enhanced_status: printed.status,
  reason: printed.reason,
});

describe('the fixture corpus', () => {
  it('has one expectation per fixture and one fixture per expectation', () => {
    expect(fixtureNames.length).toBeGreaterThanOrEqual(30);
    expect(Object.keys(expectations).sort()).toEqual(fixtureNames);
  });
});

describe('mailproxy bounce parse on the fixture corpus', () => {
  for (const name of fixtureNames) {
    for (const [ending, convert] of Object.entries(ENDINGS)) {
      it(`${name} (${ending})`, async () => {
        const expected = expectations[name];
        expect(expected, `expected.json has no entry for ${name}`).toBeDefined();
        if (expected === undefined) return;
        // Through JSON, as the CLI prints it: the contract is what a JSON reader sees.
        const printed = JSON.parse(
          JSON.stringify(parseReportOf(await analyseBounce(convert(readFileSync(join(FIXTURES, `${name}.eml`)))))),
        ) as Printed;

        // Soft assertions: one run names every wrong field, not just the first.
        for (const field of FIELDS) expect.soft(printed[field], field).toEqual(expected[field]);
        // The top-level diagnostic is the first bounced recipient's, as the other top-level fields are.
        expect
          .soft(printed.diagnostic, 'diagnostic')
          .toEqual(expected.is_bounce ? (printed.recipients[0]?.diagnostic ?? null) : null);
        if (expected.is_bounce && expected.category === 'bounce')
          expect.soft(printed.diagnostic, 'diagnostic of a bounce').toMatch(/\S/);
        if (expected.recipients !== undefined) {
          expect.soft(printed.recipients.map(toVerdict), 'recipients').toEqual(expected.recipients);
        } else if (expected.is_bounce) {
          const { recipient, bounce_type, smtp_code, enhanced_status, reason } = expected;
          expect
            .soft(printed.recipients.map(toVerdict), 'recipients')
            .toEqual([{ recipient, bounce_type, smtp_code, enhanced_status, reason }]);
        }
      });
    }
  }
});
