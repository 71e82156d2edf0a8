/**
 * A mailing-list server's refusal of a post: no DSN, only the
 * server's own notice. The messages are written here from fml's source
 * (fmlorg/fml4 kern/fml.pl: RejectHandler's subject "You <from> are not member
 * (<list> ML)" with its deny text, DupMessageIdP's "Loop Alert" warning), with
 * example.* names; none is taken from a sample corpus. LF and CRLF.
 */
import { describe, expect, it } from 'vitest';
import { analyseBounce } from '../../src/bounce/bounce-parser.js';
import { isListRefusalSubject, refusingListIn } from '../../src/core/bounce/list-server-refusals.js';

const both = (text: string): Buffer[] => [
  Buffer.from(text, 'utf8'),
  Buffer.from(text.replace(/\r?\n/g, '\r\n'), 'utf8'),
];

const notMember = `From: owls-admin@lists.example.net
To: app@acme.example
Subject: You app@acme.example are not member (owls ML)
X-MLServer: fml [fml 4.0.3 release]
Message-ID: <20240102030405.FMLAAA123.owls@lists.example.net>

You are not a member of this mailing list <owls@lists.example.net>.

If you know the general guide of this list, please send mail with
the mail body

	guide

to the address

	owls-ctl@lists.example.net
`;

const loopAlert = `From: owls-admin@lists.example.net
To: owls-admin@lists.example.net
Subject: Loop Alert: Duplicated Message-ID is detected (owls ML)
X-MLServer: fml [fml 4.0.3 release]

Duplicated Message-ID is detected in <owls@lists.example.net>.


Original mail as follows:

   From: app@acme.example
   To: owls@lists.example.net
   Subject: Minutes
   Message-ID: <minutes-7@acme.example>

   The minutes.
`;

describe("a mailing-list server's refusal of a post", () => {
  it('reads fml\'s "are not member" reply as a hard policy bounce of the list address', async () => {
    for (const raw of both(notMember)) {
      const analysis = await analyseBounce(raw);
      expect(analysis.kind).toBe('bounce');
      expect(analysis.recipients[0]).toMatchObject({
        recipient: 'owls@lists.example.net',
        bounceType: 'hard',
        reason: 'policy_block',
      });
    }
  });

  it("reads fml's loop alert as a system error of the list address, not of the address it names for help", async () => {
    for (const raw of both(loopAlert)) {
      const analysis = await analyseBounce(raw);
      expect(analysis.kind).toBe('bounce');
      expect(analysis.recipients[0]).toMatchObject({ recipient: 'owls@lists.example.net', reason: 'system_error' });
    }
  });

  it('knows the subjects only at their start, and names no list in ordinary mail', () => {
    expect(isListRefusalSubject('You ann@example.org are not member (owls ML)')).toBe(true);
    expect(isListRefusalSubject('Loop Alert: Duplicated Message-ID (owls ML)')).toBe(true);
    expect(isListRefusalSubject('Re: why you ann@example.org are not member')).toBe(false);
    expect(refusingListIn('Please join the mailing list <owls@lists.example.net>.')).toBeNull();
  });

  it('leaves an ordinary message from a list server alone', async () => {
    const digest = notMember
      .replace(/^Subject: .*$/m, 'Subject: owls digest, vol 3')
      .replace(/You are not a member[^\n]*\n/, 'Welcome.\n');
    expect((await analyseBounce(Buffer.from(digest))).kind).toBe('not_bounce');
  });
});
