/**
 * The `stream` plugin must not change a byte on the wire: the same raw messages go through a real
 * nodemailer transport to a real smtp-server sink with nodemailer's own stream and with ours.
 */
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startSmtpSink, type SmtpSink } from '../../test/peers/smtp-sink.js';
import { builtBytes, endingInLineBreak, streamWholeMessages } from './whole-message-stream.js';

const HEAD = 'From: a@sender.test\r\nTo: b@rcpt.test\r\nSubject: ends\r\n\r\n';
/** Every way a message can end, dots at line starts (the wire stuffs them), and 8-bit bytes. */
const CASES: Record<string, Buffer> = {
  crlf: Buffer.from(`${HEAD}body\r\n`),
  lf: Buffer.from(`${HEAD}body\n`),
  'lone cr': Buffer.from(`${HEAD}body\r`),
  'no line break': Buffer.from(`${HEAD}body`),
  dots: Buffer.from(`${HEAD}.\r\n..\r\n.leading dot\r\nlast`),
  '8-bit': Buffer.concat([Buffer.from(HEAD), Buffer.from([0xc3, 0xa8, 0x0d, 0x0a, 0xff, 0x00, 0x41])]),
  empty: Buffer.alloc(0),
};

describe('whole messages streamed from their bytes', () => {
  let sink: SmtpSink | null = null;
  afterEach(async () => {
    await sink?.stop();
    sink = null;
  });

  it('ends a message as nodemailer does: LF after a lone CR, CRLF after anything else, as it is after LF', () => {
    expect(endingInLineBreak(Buffer.from('a\n')).toString()).toBe('a\n');
    expect(endingInLineBreak(Buffer.from('a\r')).toString()).toBe('a\r\n');
    expect(endingInLineBreak(Buffer.from('a')).toString()).toBe('a\r\n');
    expect(endingInLineBreak(Buffer.alloc(0)).toString()).toBe('\r\n');
    const whole = Buffer.from('a\r\n');
    expect(endingInLineBreak(whole)).toBe(whole);
  });

  it('puts on the wire exactly what nodemailer would, for every ending, dot and 8-bit byte', async () => {
    sink = await startSmtpSink();
    const port = sink.port;
    const transport = (ours: boolean) => {
      const made = nodemailer.createTransport({ host: '127.0.0.1', port, ignoreTLS: true, logger: false });
      return ours ? streamWholeMessages(made) : made;
    };
    let replaced = 0;
    const received = async (ours: boolean): Promise<Record<string, string>> => {
      // Runs after ours: counts the messages whose stream is the plugin's (an own property, not MimeNode's method).
      const sender = transport(ours).use('stream', (mail, done) => {
        if (Object.hasOwn(mail.message, 'createReadStream')) replaced += 1;
        done();
      });
      const out: Record<string, string> = {};
      try {
        for (const [name, raw] of Object.entries(CASES)) {
          const before = sink?.messages.length ?? 0;
          await sender.sendMail({
            envelope: { from: 'a@sender.test', to: ['b@rcpt.test'] },
            raw,
            messageId: '<ends@sender.test>',
          });
          out[name] = sink?.messages[before]?.raw.toString('hex') ?? 'missing';
        }
      } finally {
        sender.close();
      }
      return out;
    };
    const theirs = await received(false);
    expect(replaced).toBe(0);
    const ours = await received(true);
    expect(replaced).toBe(Object.keys(CASES).length);
    expect(Object.keys(ours)).toEqual(Object.keys(CASES));
    expect(Object.values(ours)).not.toContain('missing');
    expect(ours).toEqual(theirs);
  });

  it("builds the bytes MimeNode's build() builds, for plain, alternative, non-ASCII and attached messages", async () => {
    const fixed: Mail.Options = {
      from: 'Ann <ann@sender.test>',
      to: 'bob@rcpt.test',
      bcc: 'hidden@rcpt.test',
      subject: 'Résumé of the quarter',
      date: new Date('2026-11-30T10:00:00Z'),
      messageId: '<built@sender.test>',
      baseBoundary: 'b0undary',
    };
    const messages: Mail.Options[] = [
      { ...fixed, text: 'plain\r\n.\r\nno line break at the end' },
      { ...fixed, text: 'text part', html: '<p>html part è</p>', textEncoding: 'base64' },
      {
        ...fixed,
        text: 'with files',
        attachments: [
          { filename: 'a.bin', content: Buffer.from([0, 1, 2, 255]) },
          { filename: 'note è.txt', content: 'x'.repeat(5000), contentType: 'text/plain' },
        ],
      },
      { ...fixed, headers: { 'X-Genro-Mail-ID': 'id-1' }, text: '' },
    ];
    for (const options of messages) {
      const theirs = await new MailComposer(options).compile().build();
      const ours = await builtBytes(new MailComposer(options).compile());
      expect(ours.toString('latin1')).toBe(theirs.toString('latin1'));
      expect(ours.toString()).not.toContain('hidden@rcpt.test');
    }
  });
});
