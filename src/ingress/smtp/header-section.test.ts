import { describe, expect, it } from 'vitest';
import { headerEnd, parseFields, rewriteHead } from './header-section.js';
import { decideHeaders } from './submission-headers.js';
import { SmtpReply } from './replies.js';

const HEAD =
  'Subject: =?utf-8?B?Q2Fmw6kg4pyT?=\r\nX-Mail-Proxy-Priority: high\r\nTo: a@example.net,\r\n b@example.net\r\nX-Mail-Proxy-Batch: spring\r\n\tcampaign\r\n\r\n';

describe('the header section', () => {
  it('finds its end across chunks, with CRLF or bare LF', () => {
    const crlf = Buffer.from('A: 1\r\nB: 2\r\n\r\nbody');
    expect(headerEnd(crlf.subarray(0, 8), 0)).toEqual({ end: -1, scanned: 6 });
    expect(headerEnd(crlf, 6).end).toBe(14);
    expect(headerEnd(Buffer.from('A: 1\nB: 2\n\nbody'), 0).end).toBe(11);
    expect(headerEnd(Buffer.from('\r\nbody'), 0).end).toBe(2);
  });

  it('unfolds field values and keeps their byte ranges', () => {
    const fields = parseFields(Buffer.from(HEAD));
    expect(fields.map((field) => [field.name, field.value])).toEqual([
      ['Subject', '=?utf-8?B?Q2Fmw6kg4pyT?='],
      ['X-Mail-Proxy-Priority', 'high'],
      ['To', 'a@example.net, b@example.net'],
      ['X-Mail-Proxy-Batch', 'spring\tcampaign'],
    ]);
    expect(Buffer.from(HEAD).subarray(fields[2]?.start, fields[2]?.end).toString()).toBe(
      'To: a@example.net,\r\n b@example.net\r\n',
    );
  });

  it('removes fields with their continuation lines and leaves every other byte, bare LF included', () => {
    const head = Buffer.from('A: 1\nDrop: x\n  y\nB: \xe9\n\n', 'latin1');
    const fields = parseFields(head);
    const out = rewriteHead(
      head,
      fields.filter((field) => field.name === 'Drop'),
      'New: 1\r\n',
    );
    expect(out.toString('latin1')).toBe('New: 1\r\nA: 1\nB: \xe9\n\n');
  });
});

describe('the documented header changes', () => {
  const context = {
    newId: () => 'new-id',
    now: Date.UTC(2026, 10, 21, 10, 0, 0),
    mailFrom: 'app@acme.example',
    received: (id: string) => `Received: by test id ${id}`,
  };

  it('reads and drops the control headers, decodes the subject, adds what is missing on top', () => {
    const decided = decideHeaders(parseFields(Buffer.from(HEAD)), context);
    if (decided instanceof SmtpReply) throw decided;
    expect(decided).toMatchObject({
      id: 'new-id',
      priority: 1,
      batchCode: 'spring\tcampaign',
      accountId: null,
      deferredUntil: null,
      subject: 'Café ✓',
      messageId: '<new-id@acme.example>',
    });
    expect(decided.drop.map((field) => field.name)).toEqual(['X-Mail-Proxy-Priority', 'X-Mail-Proxy-Batch']);
    expect(decided.prepend).toBe(
      'Received: by test id new-id\r\nX-Genro-Mail-ID: new-id\r\nMessage-ID: <new-id@acme.example>\r\nDate: Sat, 21 Nov 2026 10:00:00 +0000\r\n',
    );
  });

  it('keeps a client X-Genro-Mail-ID, Message-ID and Date, and adds nothing then but the trace', () => {
    const head = Buffer.from(
      'X-Genro-Mail-ID: client-7\r\nMessage-ID: <m@x.example>\r\nDate: Fri, 20 Nov 2026 09:00:00 +0100\r\nX-Mail-Proxy-Deferred-Ts: 1795000000\r\n\r\n',
    );
    const decided = decideHeaders(parseFields(head), { ...context, received: null });
    if (decided instanceof SmtpReply) throw decided;
    expect(decided).toMatchObject({
      id: 'client-7',
      messageId: '<m@x.example>',
      deferredUntil: 1_795_000_000_000,
      prepend: '',
    });
  });

  it('refuses an invalid control header or a repeated X-Genro-Mail-ID', () => {
    const refused = (head: string) => decideHeaders(parseFields(Buffer.from(`${head}\r\n\r\n`)), context);
    expect(refused('X-Mail-Proxy-Priority: 7')).toMatchObject({ responseCode: 554, status: '5.6.0' });
    expect(refused('X-Mail-Proxy-Deferred-Ts: soon')).toMatchObject({ responseCode: 554 });
    expect(refused('X-Genro-Mail-ID: a\r\nX-Genro-Mail-ID: b')).toMatchObject({ responseCode: 554 });
    expect(refused('X-Genro-Mail-ID: has space')).toMatchObject({ responseCode: 554 });
  });
});
