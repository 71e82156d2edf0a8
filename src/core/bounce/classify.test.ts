import { describe, expect, it } from 'vitest';
import {
  bounceTypeOf,
  DECISIVE_PHRASES,
  dsnOutcomeOf,
  findCodes,
  findReplyCode,
  findStatus,
  GENERIC_REASON_PHRASES,
  PERMANENCE_PHRASES,
  permanenceOf,
  GROUP_POSTING_REFUSALS,
  REASON_OVERRIDES,
  REASON_PHRASES,
  reasonIn,
  reasonOf,
  reasonOfDiagnostic,
  ANY_VENDOR_PHRASE,
} from './classify.js';

describe('bounce classification', () => {
  it('finds the enhanced status and the reply code in a diagnostic', () => {
    expect(findStatus('550 5.1.1 <a@b.example>: user unknown')).toBe('5.1.1');
    expect(findReplyCode('550 5.1.1 <a@b.example>: user unknown')).toBe('550');
    expect(findStatus('no codes here, version 1.2.3.4')).toBeNull();
  });

  it('takes no port number for a reply code (RFC 5321: the second digit is 0 to 5)', () => {
    expect(findReplyCode('could not connect to port 587 on mx')).toBeNull();
    expect(findReplyCode('said: 452 too many recipients')).toBe('452');
    expect(findCodes('<a@b.example>: 550: 5.2.2 <a@b.example>... Mailbox Full')).toMatchObject({
      status: '5.2.2',
      replyCode: '550',
    });
    expect(findReplyCode('Invalid Address, ERROR_CODE :550, ERROR_CODE :Requested action not taken')).toBe('550');
  });

  it("prefers the remote server's own reply quoted inside a relay's summary, and returns its words", () => {
    expect(
      findCodes('554 4.4.7 Message expired: unable to deliver in 840 minutes.<421 4.4.2 Connection timed out>'),
    ).toEqual({
      status: '4.4.2',
      replyCode: '421',
      remoteWords: '421 4.4.2 Connection timed out>',
    });
    expect(findCodes("5.1.0 - Unknown address error 550-'5.7.1 Access denied'")).toMatchObject({
      status: '5.7.1',
      replyCode: '550',
    });
    expect(findCodes('Host not found')).toEqual({ status: null, replyCode: null, remoteWords: null });
  });

  it('judges hard or soft by the status first, then the reply code, then the reason', () => {
    expect(bounceTypeOf({ action: 'failed', status: '4.2.2', replyCode: '552', reason: 'mailbox_full' })).toBe('soft');
    expect(bounceTypeOf({ action: null, status: null, replyCode: '550', reason: 'mailbox_full' })).toBe('hard');
    expect(bounceTypeOf({ action: 'delayed', status: '5.4.7', replyCode: null, reason: 'expired' })).toBe('soft');
    expect(bounceTypeOf({ action: null, status: null, replyCode: null, reason: 'user_unknown' })).toBe('hard');
    expect(bounceTypeOf({ action: null, status: null, replyCode: null, reason: 'rate_limited' })).toBe('soft');
    expect(bounceTypeOf({ action: null, status: null, replyCode: null, reason: null })).toBeNull();
  });

  it('without codes, a returned message is hard unless its wording says the delivery goes on', () => {
    expect(
      bounceTypeOf({
        action: 'failed',
        status: null,
        replyCode: null,
        reason: 'expired',
        text: 'retry timeout exceeded',
      }),
    ).toBe('hard');
    expect(
      bounceTypeOf({
        action: 'failed',
        status: null,
        replyCode: null,
        reason: 'mailbox_full',
        text: 'THIS IS A WARNING MESSAGE ONLY. Message will be retried for 2 more days',
      }),
    ).toBe('soft');
    expect(
      bounceTypeOf({
        action: null,
        status: null,
        replyCode: null,
        reason: 'rate_limited',
        text: 'This is a permanent error.',
      }),
    ).toBe('hard');
    expect(permanenceOf('Please note that this is only a temporary failure report.')).toBe('soft');
    expect(permanenceOf('Hello')).toBeNull();
  });

  it("reads a vendor's code in a later text when an earlier one only looks like one in another case", () => {
    // Sophos's code keeps its case: "xgemail_0004" is no code, and Cox's code in the diagnostic decides.
    expect(
      reasonIn({
        status: null,
        primary: '550 refused, ticket xgemail_0004',
        texts: ['550 refused 192.0.2.40 AUP#CXBL'],
      }),
    ).toBe('spam_block');
  });

  it('names the reason from a definite status, then the wording, then the status class', () => {
    expect(reasonOf('5.1.1', 'whatever the text says')).toBe('user_unknown');
    expect(reasonOf('5.7.1', 'Message rejected as spam by Content Filtering')).toBe('spam_block');
    expect(reasonOf('5.0.0', 'The email account that you tried to reach does not exist')).toBe('user_unknown');
    expect(reasonOf(null, 'Recipient address rejected: Disabled recipient address')).toBe('account_disabled');
    expect(reasonOf(null, 'quota exceeded for this mailbox')).toBe('mailbox_full');
    expect(reasonOf('4.4.1', 'no answer')).toBe('system_error');
    expect(reasonOf(null, 'nothing recognisable')).toBeNull();
  });

  it('reads sender and authentication statuses (RFC 3463, RFC 7372) as what they are', () => {
    expect(reasonOf('5.1.8', 'Domain of sender address does not exist')).toBe('policy_block');
    expect(reasonOf('5.7.25', 'Reverse DNS validation failed')).toBe('spam_block');
    expect(reasonOf('5.7.23', 'SPF validation failed')).toBe('policy_block');
    expect(reasonOf('5.1.1', '550 5.1.1 Refused due to recipient preferences')).toBe('policy_block');
  });

  it("reads the remote server's words before a relay's summary, and precise phrases in any text before vague words", () => {
    expect(
      reasonIn({
        status: '5.7.1',
        primary: "550-'5.7.1 Access denied'",
        texts: ["5.1.0 - Unknown address error 550-'5.7.1 Access denied'"],
      }),
    ).toBe('policy_block');
    expect(
      reasonIn({
        status: '5.5.0',
        texts: ['554 <ann@example.net>... Service unavailable', 'mail.local: unknown user: ann'],
      }),
    ).toBe('user_unknown');
    expect(
      reasonIn({ status: null, texts: ['Name service error for domain example.net: Host not found, try again'] }),
    ).toBe('system_error');
    expect(reasonIn({ status: null, texts: ['User ann (ann@example.net) not listed in Domino Directory'] })).toBe(
      'user_unknown',
    );
    expect(
      reasonIn({
        status: null,
        texts: ['This message is not RFC 5322 compliant. To reduce the amount of spam, it has been blocked'],
      }),
    ).toBe('policy_block');
    expect(
      reasonIn({ status: null, texts: ['rejected due to spam classification. Set up SPF records for your domain'] }),
    ).toBe('spam_block');
  });

  it('a user-unknown answer to the message itself (end of DATA) is a content refusal, unless the RCPT was refused', () => {
    expect(
      reasonIn({
        status: '5.0.0',
        texts: ['550 Unknown user ann@example.net'],
        transcript: '550 Unknown user ann@example.net (in reply to end of DATA command)',
      }),
    ).toBe('policy_block');
    expect(
      reasonIn({
        status: '5.0.0',
        texts: ['550 Unknown user'],
        transcript: '>>> DATA\n<<< 550 Unknown user\n<<< 503 5.0.0 Need RCPT (recipient)',
      }),
    ).toBe('user_unknown');
    expect(
      reasonIn({ status: '5.0.0', texts: ['550 Unknown user'], transcript: '(in reply to RCPT TO command)' }),
    ).toBe('user_unknown');
  });

  it('a mailbox status (5.1.1) answered after DATA is the recipient filter refusing the message: the server took the RCPT (RFC 5321 §3.3)', () => {
    // Postfix's wording of the phase, Exim's, and a Sendmail transcript.
    expect(
      reasonIn({ status: '5.1.1', texts: ['550 Unknown user'], transcript: 'in reply to end of DATA command' }),
    ).toBe('policy_block');
    expect(
      reasonOf(
        '5.1.1',
        '550 5.1.1 <ann@example.net>: Recipient address rejected: User unknown (in reply to end of DATA command)',
      ),
    ).toBe('policy_block');
    expect(
      reasonIn({
        status: '5.1.1',
        texts: ['550 5.1.1 User unknown'],
        transcript: 'SMTP error from remote mail server after end of data:',
      }),
    ).toBe('policy_block');
    expect(
      reasonIn({
        status: '5.1.1',
        texts: ['550 5.1.1 User unknown'],
        transcript: '>>> DATA\n<<< 550 5.1.1 User unknown',
      }),
    ).toBe('policy_block');
    // Refused at RCPT, or read after DATA by a pipelining client that then hears "Need RCPT": the address.
    expect(
      reasonIn({ status: '5.1.1', texts: ['550 5.1.1 User unknown'], transcript: '(in reply to RCPT TO command)' }),
    ).toBe('user_unknown');
    expect(
      reasonIn({
        status: '5.1.1',
        texts: ['550 5.1.1 User unknown'],
        transcript: '>>> DATA\n<<< 550 5.1.1 User unknown\n<<< 503 5.0.0 Need RCPT',
      }),
    ).toBe('user_unknown');
  });

  it('a recipient refused at RCPT TO with only a vague word is an unknown address, unless a policy is named', () => {
    expect(
      reasonIn({
        status: '5.0.0',
        texts: ['550 <ann@example.net>: Recipient address rejected.'],
        transcript: '(in reply to RCPT TO command)',
      }),
    ).toBe('user_unknown');
    expect(
      reasonIn({ status: '5.0.0', texts: ['550 Denied by policy'], transcript: '(in reply to RCPT TO command)' }),
    ).toBe('policy_block');
    expect(reasonIn({ status: '5.0.0', texts: ['550 Recipient address rejected.'] })).toBe('policy_block');
  });

  it('a refusal of MAIL FROM is about the sender; a transient DNS failure is no unknown host unless the domain takes no mail', () => {
    expect(
      reasonIn({
        status: '5.0.0',
        texts: ['553 example.org does not exist'],
        transcript: 'SMTP error from remote mail server after MAIL FROM:<a@example.org>',
      }),
    ).toBe('policy_block');
    expect(
      reasonIn({
        status: '4.0.0',
        texts: ['DNS Error: lookup of example.net responded with code NXDOMAIN Domain name not found'],
      }),
    ).toBe('system_error');
    expect(reasonIn({ status: '5.0.0', texts: ['Domain name not found'] })).toBe('host_unknown');
    expect(
      reasonIn({ status: '4.0.0', texts: ["The domain example.net doesn't receive email: returned Null MX"] }),
    ).toBe('host_unknown');
  });

  it('reads Exim\'s bare "Unrouteable address" as a domain that does not resolve, a remote server\'s 5xx with it as an unknown user', () => {
    expect(reasonIn({ status: null, texts: ['  nina@no-such-domain.example\n    Unrouteable address'] })).toBe(
      'host_unknown',
    );
    expect(
      reasonIn({
        status: null,
        replyCode: '550',
        texts: ['SMTP error from remote mail server after RCPT TO:<nina@example.net>: 550 Unrouteable address'],
      }),
    ).toBe('user_unknown');
    expect(reasonIn({ status: '5.0.0', texts: ['550 Unroutable sender address'] })).toBe('policy_block');
  });

  it('a refused connection named in the diagnostic is a network error, even when the queue says how long it has waited', () => {
    expect(
      reasonIn({
        status: '4.4.1',
        texts: [
          'connect to mx.example.net[192.0.2.9]:25: Connection refused',
          'Your message could not be delivered for more than 4 hour(s).',
        ],
      }),
    ).toBe('system_error');
    expect(
      reasonIn({
        status: '4.4.1',
        texts: [
          'connect to mx.example.net[192.0.2.9]:25: Connection timed out',
          'Your message could not be delivered for more than 5 day(s).',
        ],
      }),
    ).toBe('expired');
    expect(reasonIn({ status: '4.4.7', texts: ['Deferred: Connection refused by mx.example.net.'] })).toBe('expired');
  });

  it("reads a network trouble as an expiry when the queue gave up after it, as sendmail's and a relay's summaries say", () => {
    // sendmail's queue.c: "Message could not be delivered for 5 days", the transcript's last "Deferred:" line before it.
    expect(
      reasonIn({
        status: null,
        texts: [
          'Deferred: Connection refused by mx.example.net.',
          'Message could not be delivered for 5 days\nMessage will be deleted from queue',
        ],
      }),
    ).toBe('expired');
    expect(
      reasonOfDiagnostic(
        '554 4.4.7 Message expired: unable to deliver in 840 minutes.<421 4.4.2 Connection timed out>',
      ),
    ).toBe('expired');
    // A directory server's trouble is the server's, not the way to it: the queue's giving up does not hide it.
    expect(
      reasonOf(
        null,
        "Unable to contact LDAP server. (#4.4.3) I'm not going to try again; this message has been in the queue too long.",
      ),
    ).toBe('system_error');
  });

  it('reads a connect timeout as an expiry only in a report that failed the delivery with a transient status', () => {
    const timeout = 'connect to mx.example.net[192.0.2.9]:25: Connection timed out';
    expect(reasonIn({ status: '4.4.1', action: 'failed', texts: [timeout] })).toBe('expired');
    expect(reasonIn({ status: '4.4.1', action: 'delayed', texts: [timeout] })).toBe('system_error');
    expect(reasonIn({ status: '4.4.1', texts: [timeout] })).toBe('system_error');
    const dropped = 'lost connection with mx.example.net[192.0.2.9] while performing the HELO handshake';
    expect(reasonIn({ status: '4.4.2', action: 'failed', texts: [dropped] })).toBe('system_error');
  });

  it('reads a count of delivery attempts as a queue giving up, in figures or in words, but not failed logins', () => {
    expect(reasonOf(null, 'Delivery failed 20 attempts: ann@example.net')).toBe('expired');
    expect(reasonOf(null, 'Failed four Attempts to connect to recipients mail server')).toBe('expired');
    expect(reasonOf(null, 'Too many failed login attempts from 192.0.2.1')).not.toBe('expired');
  });

  it("reads Google Groups' refusal to post in the sender's language as a list rule", () => {
    const refusals = [
      'The group may not exist, or you may not have permission to post messages to the group.',
      'Sie haben möglicherweise nicht die Berechtigung, in dieser Gruppe Nachrichten zu posten.',
      "Vous n'êtes peut-être pas autorisé à envoyer des messages à ce groupe.",
      'Es posible que no tengas permisos para publicar mensajes en este grupo.',
      'Nemáte oprávnění do této skupiny přidávat příspěvky.',
      'Ενδέχεται να μην έχετε δικαίωμα ανάρτησης σε αυτήν την ομάδα.',
      'आपको इस समूह में पोस्ट करने की अनुमति नहीं है.',
      'このグループに投稿する権限がありません。',
    ];
    for (const text of refusals) expect(reasonOf(null, text)).toBe('policy_block');
    expect(GROUP_POSTING_REFUSALS.length).toBeGreaterThanOrEqual(10);
  });

  // Catastrophic backtracking on a 1 MB line takes minutes or more; every unit here takes well under a
  // second on an idle machine. The bound is that far from both so that a loaded CI machine (2.2 s was
  // seen once at load 10) does not fail a pattern that is linear.
  it('no pattern backtracks on a long line of repeated characters', { timeout: 120_000 }, () => {
    const patterns = [...DECISIVE_PHRASES, ...REASON_PHRASES, ...GENERIC_REASON_PHRASES]
      .map(([, pattern]) => pattern)
      // The vendors' phrases as the one pattern that holds them all: it tries each of them at every position.
      .concat(
        PERMANENCE_PHRASES.map(([, pattern]) => pattern),
        [ANY_VENDOR_PHRASE],
      )
      .concat(
        REASON_OVERRIDES.flatMap((rule) =>
          [rule.when, rule.unless].filter((pattern): pattern is RegExp => pattern !== undefined),
        ),
      );
    for (const unit of ['a', ' ', '.', '5', 'a.', '>>> ', 'a@', 'x ']) {
      const line = unit.repeat(Math.ceil(1_000_000 / unit.length));
      const started = performance.now();
      for (const pattern of patterns) pattern.test(line);
      findCodes(line);
      reasonIn({ status: '4.0.0', texts: [line], transcript: line });
      expect(performance.now() - started).toBeLessThan(10_000);
    }
  });
});

describe('what a DSN says happened to a recipient', () => {
  const outcome = (action: string | null, status: string | null, evidence = '') =>
    dsnOutcomeOf({ action, status, evidence });

  it('is a delivery only on positive evidence', () => {
    expect(outcome('delivered', '2.0.0')).toBe('delivered');
    expect(outcome('relayed', '2.1.5')).toBe('delivered');
    expect(outcome('delivered', null)).toBe('delivered');
    expect(outcome(null, null, '250 2.0.0 Ok: queued')).toBe('delivered');
    expect(outcome(null, null)).toBe('failed');
  });

  it('is a failure when the status, the diagnostic or the wording says so, whatever the action', () => {
    expect(outcome('delivered', '5.1.1')).toBe('failed');
    expect(outcome('expanded', '4.4.7')).toBe('failed');
    expect(outcome('delivered', null, '550 5.1.1 user unknown')).toBe('failed');
    expect(outcome('delivered', 'unknown', 'Your message could not be delivered')).toBe('failed');
    expect(outcome(null, '', '451 try later')).toBe('failed');
    expect(outcome('delayed', '2.0.0')).toBe('delayed');
    expect(outcome('failed', '2.0.0')).toBe('failed');
  });
});

describe("an MTA's expiry", () => {
  it("is soft, though Exim's text around it says permanent", () => {
    const exim =
      'This is a permanent error. The following address(es) failed:\n\n  lena@example.de\n    retry timeout exceeded';
    expect(bounceTypeOf({ action: 'failed', status: null, replyCode: null, reason: 'expired', text: exim })).toBe(
      'soft',
    );
    expect(
      bounceTypeOf({
        action: 'failed',
        status: null,
        replyCode: null,
        reason: 'expired',
        text: "all hosts for 'x.example' have been failing for a long time (and retry time not reached)",
      }),
    ).toBe('soft');
    // Another MTA's "delivery retry timeout exceeded" after a refusal keeps its hard.
    expect(
      bounceTypeOf({
        action: 'failed',
        status: null,
        replyCode: null,
        reason: 'expired',
        text: '<a@b.example>\n\nReason:\ndelivery retry timeout exceeded\npermanent error',
      }),
    ).toBe('hard');
  });
});
