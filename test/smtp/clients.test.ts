/**
 * SMTP submission from clients nobody on the team wrote (nodemailer, Python's
 * smtplib, swaks): each message reaches the upstream sink with its body
 * byte-identical and only the documented header changes.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import {
  composeWithNodemailer,
  requireProgram,
  runProgram,
  runPython,
  runSwaks,
  sendRawWithNodemailer,
} from '../helpers/smtp-clients.js';
import { startSmtpSink, type SinkMessage, type SmtpSink } from '../peers/smtp-sink.js';
import { selfSigned } from '../peers/self-signed.js';

const CONTROL_HEADERS = [
  'x-mail-proxy-account',
  'x-mail-proxy-priority',
  'x-mail-proxy-batch',
  'x-mail-proxy-deferred-ts',
];

interface Field {
  name: string;
  /** Unfolded and trimmed. */
  value: string;
  start: number;
  end: number;
}

/** Splits at the first empty line: `head` ends with it, `body` is every byte after it. */
function splitMessage(raw: Buffer): { head: Buffer; body: Buffer } {
  for (let lineStart = 0; lineStart < raw.length;) {
    const newline = raw.indexOf(0x0a, lineStart);
    if (newline === -1) break;
    const line = raw.subarray(lineStart, newline + 1);
    if (line.length === 1 || (line.length === 2 && line[0] === 0x0d))
      return { head: raw.subarray(0, newline + 1), body: raw.subarray(newline + 1) };
    lineStart = newline + 1;
  }
  return { head: raw, body: Buffer.alloc(0) };
}

function headerFields(head: Buffer): Field[] {
  const fields: Field[] = [];
  for (let at = 0; at < head.length;) {
    const newline = head.indexOf(0x0a, at);
    const end = newline === -1 ? head.length : newline + 1;
    const line = head.toString('utf8', at, end);
    if (/^\r?\n$/.test(line)) break;
    const last = fields.at(-1);
    if (/^[ \t]/.test(line) && last !== undefined) {
      last.value += line;
      last.end = end;
    } else {
      fields.push({ name: line.slice(0, line.indexOf(':')), value: line.slice(line.indexOf(':') + 1), start: at, end });
    }
    at = end;
  }
  return fields.map((field) => ({ ...field, value: field.value.replace(/\r?\n/g, '').trim() }));
}

const fieldValue = (raw: Buffer, name: string): string | undefined =>
  headerFields(splitMessage(raw).head).find((field) => field.name.toLowerCase() === name.toLowerCase())?.value;

/** `head` without the control header fields, every other byte kept. */
function withoutControlHeaders(head: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (const field of headerFields(head).filter((candidate) =>
    CONTROL_HEADERS.includes(candidate.name.toLowerCase()),
  )) {
    parts.push(head.subarray(at, field.start));
    at = field.end;
  }
  parts.push(head.subarray(at));
  return Buffer.concat(parts);
}

const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

/**
 * The relayed message is the sent one with control headers removed and, on top,
 * only: Received (always, in this config), X-Genro-Mail-ID, Message-ID and Date
 * (each only when the client did not set it). The body is byte-identical.
 */
function expectOnlyDocumentedChanges(
  sent: Buffer,
  relayed: Buffer,
  expected: { id: string; helo: string; via: string },
): void {
  const before = splitMessage(sent);
  const after = splitMessage(relayed);
  expect(after.body.length).toBe(before.body.length);
  expect(sha256(after.body)).toBe(sha256(before.body));

  const kept = withoutControlHeaders(before.head);
  expect(after.head.length).toBeGreaterThan(kept.length);
  const added = after.head.subarray(0, after.head.length - kept.length);
  expect(after.head.subarray(added.length).toString('latin1')).toBe(kept.toString('latin1'));

  const sentNames = new Set(headerFields(before.head).map((field) => field.name.toLowerCase()));
  const addedFields = headerFields(added);
  expect(addedFields.map((field) => field.name)).toEqual([
    'Received',
    ...(sentNames.has('x-genro-mail-id') ? [] : ['X-Genro-Mail-ID']),
    ...(sentNames.has('message-id') ? [] : ['Message-ID']),
    ...(sentNames.has('date') ? [] : ['Date']),
  ]);
  expect(addedFields[0]?.value).toMatch(
    new RegExp(
      `^from ${expected.helo.replace(/\./g, '\\.')} \\(127\\.0\\.0\\.1\\)\\s+by \\S+ \\(mailproxy\\) with ${expected.via} id ${expected.id};\\s+\\w{3}, \\d{2} \\w{3} \\d{4} \\d{2}:\\d{2}:\\d{2} \\+0000$`,
    ),
  );
  expect(fieldValue(relayed, 'X-Genro-Mail-ID')).toBe(expected.id);
  if (!sentNames.has('message-id')) expect(fieldValue(relayed, 'Message-ID')).toMatch(/^<[^<>@\s]+@[^<>@\s]+>$/);
  if (!sentNames.has('date'))
    expect(fieldValue(relayed, 'Date')).toMatch(/^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
}

const queuedId = (reply: string): string => {
  const match = /250[ -]2\.0\.0 Ok: queued as (\S+)/.exec(reply);
  if (match === null) throw new Error(`no "queued as" reply in:\n${reply}`);
  return match[1] as string;
};

describe('submission from SMTP clients nobody on the team wrote', () => {
  let fx: QueueFixture;
  let sink: SmtpSink;
  let key: string;
  let dir: string;
  let plainPort: number;
  let tlsPort: number;

  beforeAll(async () => {
    requireProgram('python3', ['--version'], /Python 3/, 'python3 is needed (apt-get install -y python3)');
    requireProgram('swaks', ['--support'], /TLS supported/, 'apt-get install -y swaks libnet-ssleay-perl');
    dir = await mkdtemp(join(tmpdir(), 'smtp-clients-'));
    const { keyFile, certFile } = await selfSigned(dir, 'localhost', 'localhost');
    sink = await startSmtpSink();
    fx = await startQueueFixture({
      // Relaying the 27 MB message can outlast the fixture's 2 s send timeout.
      dispatch: { send_timeout_seconds: '60' },
      // The default max_message_bytes (25 MiB) refuses a 20 MB attachment: base64 makes it about 27.4 MB.
      extraToml: `[smtp]\ntls_cert_file = "${certFile}"\ntls_key_file = "${keyFile}"\ntls_listen = "127.0.0.1:0"\nmax_message_bytes = ${32 * 1024 * 1024}\n`,
    });
    key = await fx.createTenant('acme');
    await fx.createAccount('acme', 'main', sink, { is_default: true });
    plainPort = fx.t.daemon.smtp?.plain?.port ?? 0;
    tlsPort = fx.t.daemon.smtp?.implicitTls?.port ?? 0;
    expect(plainPort).toBeGreaterThan(0);
    expect(tlsPort).toBeGreaterThan(0);
  });

  afterAll(async () => {
    await fx?.stop();
    fx?.t.cleanup();
    await sink?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** The message with this X-Genro-Mail-ID, once the dispatcher has relayed it to the sink. */
  const relayed = async (id: string, timeoutMs = 10_000): Promise<SinkMessage> => {
    await fx.settle();
    const find = () => sink.messages.find((message) => fieldValue(message.raw, 'X-Genro-Mail-ID') === id);
    for (let count = sink.messages.length; find() === undefined; count += 1)
      await sink.waitForMessages(count + 1, timeoutMs);
    return find() as SinkMessage;
  };

  describe('nodemailer', () => {
    it('submits over STARTTLS with AUTH PLAIN to 50 recipients and a Bcc, which is in no relayed byte', async () => {
      const to = Array.from({ length: 30 }, (_, index) => `to-${index}@example.net`);
      const cc = Array.from({ length: 20 }, (_, index) => `cc-${index}@example.org`);
      const mail = await composeWithNodemailer({
        from: 'Sender <sender@example.com>',
        to,
        cc,
        bcc: 'hidden.nodemailer@example.com',
        subject: 'Fifty recipients',
        text: 'Hello all fifty.\n',
        html: '<p>Hello <b>all</b> fifty.</p>',
      });
      expect(mail.envelope.to).toHaveLength(51);
      expect(mail.raw.includes('hidden.nodemailer')).toBe(false);

      const submission = await sendRawWithNodemailer(
        {
          port: plainPort,
          requireTLS: true,
          tls: { rejectUnauthorized: false },
          auth: { user: 'acme', pass: key },
          authMethod: 'PLAIN',
        },
        mail.envelope,
        mail.raw,
      );
      expect(submission.transcript.join('\n')).toMatch(/C: STARTTLS[\s\S]*C: AUTH PLAIN/);
      // PIPELINING: all 51 RCPT TO commands, and DATA closing the group (RFC 2920 §3.1), go out
      // before the first reply to one of them is read.
      const firstRcpt = submission.transcript.findIndex((line) => line.startsWith('C: RCPT TO:'));
      expect(submission.transcript.slice(firstRcpt, firstRcpt + 53).map((line) => line.slice(0, 11))).toEqual([
        ...Array(51).fill('C: RCPT TO:'),
        'C: DATA',
        'S: 250 2.1.',
      ]);
      expect(submission.accepted).toHaveLength(51);
      const id = queuedId(submission.response);

      const message = await relayed(id);
      expect([...message.rcptTo].sort()).toEqual([...mail.envelope.to].sort());
      expect(message.rcptTo).toContain('hidden.nodemailer@example.com');
      expect(message.raw.includes('hidden.nodemailer')).toBe(false);
      expectOnlyDocumentedChanges(mail.raw, message.raw, { id, helo: 'nodemailer.client.test', via: 'ESMTPSA' });
    });

    it('submits 8-bit text to an SMTPUTF8 address with AUTH LOGIN, announcing BODY=8BITMIME and SMTPUTF8', async () => {
      const raw = Buffer.from(
        [
          'From: Jörg Sender <sender@example.com>',
          'To: Jörg <jörg@exämple.de>',
          'Subject: Grüße in 8-bit',
          'Message-ID: <utf8-nodemailer@example.com>',
          'Date: Sat, 21 Nov 2026 10:00:00 +0000',
          'MIME-Version: 1.0',
          'Content-Type: text/plain; charset=utf-8',
          'Content-Transfer-Encoding: 8bit',
          '',
          'Grüße aus Köln: ä ö ü ß € ✓',
          '.a line that starts with a dot',
          '.',
          'trailing spaces   ',
          '',
        ].join('\r\n'),
      );
      const submission = await sendRawWithNodemailer(
        { port: plainPort, ignoreTLS: true, auth: { user: 'acme', pass: key }, authMethod: 'LOGIN' },
        { from: 'sender@example.com', to: ['jörg@exämple.de'], use8BitMime: true },
        raw,
      );
      const transcript = submission.transcript.join('\n');
      expect(transcript).toContain('C: AUTH LOGIN');
      expect(transcript).toMatch(/C: MAIL FROM:<sender@example\.com> SMTPUTF8 BODY=8BITMIME/);
      const id = queuedId(submission.response);

      // The local part needs SMTPUTF8 anyway, so nodemailer keeps the domain a U-label (RFC 6531 §3.2).
      expect(transcript).toContain('C: RCPT TO:<jörg@exämple.de>');
      const message = await relayed(id);
      expect(message.rcptTo).toEqual(['jörg@exämple.de']);
      expectOnlyDocumentedChanges(raw, message.raw, { id, helo: 'nodemailer.client.test', via: 'UTF8SMTPA' });
    });

    it('reads an IDNA A-label domain back as its U-label: relayed to joerg@exämple.de', async () => {
      // An ASCII local part needs no SMTPUTF8, so nodemailer sends the domain as the A-label it is given.
      const raw = Buffer.from(
        ['From: sender@example.com', 'To: joerg@exämple.de', 'Subject: A-label', '', 'Hallo', ''].join('\r\n'),
      );
      const submission = await sendRawWithNodemailer(
        { port: plainPort, ignoreTLS: true, auth: { user: 'acme', pass: key }, authMethod: 'LOGIN' },
        { from: 'sender@example.com', to: ['joerg@xn--exmple-cua.de'] },
        raw,
      );
      expect(submission.transcript.join('\n')).toContain('C: RCPT TO:<joerg@xn--exmple-cua.de>');
      const message = await relayed(queuedId(submission.response));
      expect(message.rcptTo).toEqual(['joerg@exämple.de']);
    });

    it('submits a 20 MB attachment on the implicit-TLS listener, relayed byte for byte', async () => {
      const attachment = randomBytes(20 * 1024 * 1024);
      const mail = await composeWithNodemailer({
        from: 'sender@example.com',
        to: 'big@example.net',
        subject: 'Twenty megabytes',
        text: 'See the attachment.',
        attachments: [{ filename: 'big.bin', content: attachment, contentType: 'application/octet-stream' }],
      });
      const submission = await sendRawWithNodemailer(
        { port: tlsPort, secure: true, tls: { rejectUnauthorized: false }, auth: { user: 'acme', pass: key } },
        mail.envelope,
        mail.raw,
      );
      const id = queuedId(submission.response);

      const message = await relayed(id, 30_000);
      expect(message.rcptTo).toEqual(['big@example.net']);
      expect(message.raw.length).toBeGreaterThan(20 * 1024 * 1024);
      expectOnlyDocumentedChanges(mail.raw, message.raw, { id, helo: 'nodemailer.client.test', via: 'ESMTPSA' });
    }, 60_000);

    it('honours and removes the control headers, and keeps a client X-Genro-Mail-ID as the id', async () => {
      const raw = Buffer.from(
        [
          'X-Genro-Mail-ID: client-id-7f3a',
          'From: sender@example.com',
          'X-Mail-Proxy-Priority: high',
          'To: control@example.net',
          'X-Mail-Proxy-Batch: spring-sale',
          'X-Mail-Proxy-Account: main',
          'Subject: control headers',
          'Message-ID: <control@example.com>',
          'Date: Sat, 21 Nov 2026 10:00:00 +0000',
          '',
          'Body of the control header test.',
          '',
        ].join('\r\n'),
      );
      const submission = await sendRawWithNodemailer(
        { port: plainPort, ignoreTLS: true, auth: { user: 'acme', pass: key } },
        { from: 'sender@example.com', to: ['control@example.net'] },
        raw,
      );
      expect(submission.response).toMatch(/^250 2\.0\.0 Ok: queued as client-id-7f3a$/);

      const stored = await fx.detail('acme', 'client-id-7f3a');
      expect(stored.message).toMatchObject({
        id: 'client-id-7f3a',
        source: 'smtp',
        priority: 1,
        batch_code: 'spring-sale',
        account_id: 'main',
        message_id: '<control@example.com>',
      });

      const message = await relayed('client-id-7f3a');
      expect(message.raw.toString('latin1')).not.toMatch(/x-mail-proxy-/i);
      expect(message.raw.toString('latin1').match(/^X-Genro-Mail-ID:/gim)).toHaveLength(1);
      expectOnlyDocumentedChanges(raw, message.raw, {
        id: 'client-id-7f3a',
        helo: 'nodemailer.client.test',
        via: 'ESMTPA',
      });
    });
  });

  describe("Python's smtplib", () => {
    it('submits an EmailMessage with an 8-bit body over STARTTLS, login() choosing AUTH PLAIN, with BODY=8BITMIME and a Bcc', async () => {
      const submission = await runPython(
        `
smtp = connect()
smtp.starttls(context=TLS)
smtp.login('acme', KEY)
msg = EmailMessage()
msg['From'] = 'Python Sender <sender@example.com>'
msg['To'] = 'Anna <anna@example.net>, bob@example.net'
msg['Bcc'] = 'hidden.python@example.org'
msg['Subject'] = 'Grüße from smtplib'
msg.set_content('Grüße aus Köln!\\nÜmlaute und ein Euro: €\\n.a line that starts with a dot\\n', cte='8bit')
smtp.send_message(msg, mail_options=['BODY=8BITMIME'])
smtp.quit()
`,
        { PORT: String(plainPort), KEY: key },
      );
      expect(submission.transcript).toMatch(/send: 'STARTTLS[\s\S]*send: 'AUTH PLAIN /);
      expect(submission.transcript).toMatch(/send: 'mail FROM:<sender@example\.com> size=\d+ BODY=8BITMIME/);
      expect(submission.replyCode).toBe(250);
      expect(submission.sent.includes(Buffer.from('Grüße aus Köln!\r\n'))).toBe(true);
      const id = queuedId(`250 ${submission.replyText}`);

      const message = await relayed(id);
      expect(message.rcptTo).toEqual(['anna@example.net', 'bob@example.net', 'hidden.python@example.org']);
      expect(message.raw.includes('hidden.python')).toBe(false);
      expectOnlyDocumentedChanges(submission.sent, message.raw, { id, helo: 'python.client.test', via: 'ESMTPSA' });
    });

    it('submits to jörg@exämple.de with SMTPUTF8 after AUTH LOGIN', async () => {
      const raw = Buffer.from(
        [
          'From: sender@example.com',
          'To: Jörg <jörg@exämple.de>',
          'Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=',
          'X-Folded: first part',
          '\tsecond part',
          '',
          'Hallo Jörg, ein UTF-8-Empfänger.',
          '',
        ].join('\r\n'),
      );
      const submission = await runPython(
        `
smtp = connect()
smtp.ehlo()
# What login() would set; auth_login reads them.
smtp.user, smtp.password = 'acme', KEY
smtp.auth('LOGIN', smtp.auth_login)
smtp.sendmail('sender@example.com', ['jörg@exämple.de'], base64.b64decode(os.environ['RAW']), mail_options=['SMTPUTF8', 'BODY=8BITMIME'])
smtp.quit()
`,
        { PORT: String(plainPort), KEY: key, RAW: raw.toString('base64') },
      );
      expect(submission.transcript).toMatch(/send: 'AUTH LOGIN /);
      expect(submission.transcript).toMatch(/send: 'mail FROM:<sender@example\.com> size=\d+ SMTPUTF8 BODY=8BITMIME/);
      expect(submission.sent.equals(raw)).toBe(true);
      const id = queuedId(`250 ${submission.replyText}`);

      const message = await relayed(id);
      expect(message.rcptTo).toEqual(['jörg@exämple.de']);
      expectOnlyDocumentedChanges(raw, message.raw, { id, helo: 'python.client.test', via: 'UTF8SMTPA' });
    });
  });

  describe('swaks', () => {
    const RAW = Buffer.from(
      [
        'From: Swaks Sender <sender@example.com>',
        'To: a@example.net, b@example.net',
        'Subject: swaks over',
        '\tseveral lines',
        'X-Custom:   spaced   value  ',
        'MIME-Version: 1.0',
        'Content-Type: text/plain; charset=utf-8',
        'Content-Transfer-Encoding: 8bit',
        '',
        'Grüße aus Köln, 8-bit body',
        '.a line that starts with a dot',
        '..two dots',
        '',
        'trailing spaces   ',
        '',
      ].join('\r\n'),
    );

    const swaks = async (args: string[]) => {
      const file = join(dir, `swaks-${Date.now()}-${Math.random()}.eml`);
      // swaks ends DATA with CRLF . CRLF after the file's last byte: the file leaves out RAW's final CRLF.
      await writeFile(file, RAW.subarray(0, RAW.length - 2));
      const result = await runSwaks([
        '--server',
        `127.0.0.1:${plainPort}`,
        '--helo',
        'swaks.client.test',
        '--from',
        'sender@example.com',
        '--to',
        'a@example.net,b@example.net',
        '--data',
        `@${file}`,
        ...args,
      ]);
      expect(result.code, result.stdout + result.stderr).toBe(0);
      return result.stdout;
    };

    it('submits with PIPELINING and AUTH PLAIN', async () => {
      const output = await swaks(['--pipeline', '--auth', 'PLAIN', '--auth-user', 'acme', '--auth-password', key]);
      expect(output).toMatch(/<- {2}250-PIPELINING/);
      expect(output).toMatch(/-> AUTH PLAIN/);
      // Pipelined: the envelope and DATA go out before any of their replies come back.
      expect(output).toMatch(
        / -> MAIL FROM:<sender@example\.com>\n -> RCPT TO:<a@example\.net>\n -> RCPT TO:<b@example\.net>\n -> DATA\n<- {2}250/,
      );
      expect(output).toMatch(/<- {2}250 2\.0\.0 Ok: queued as /);
      const id = queuedId(output);

      const message = await relayed(id);
      expect(message.rcptTo).toEqual(['a@example.net', 'b@example.net']);
      expectOnlyDocumentedChanges(RAW, message.raw, { id, helo: 'swaks.client.test', via: 'ESMTPA' });
    });

    it('submits over STARTTLS with AUTH LOGIN as tenant/account', async () => {
      const output = await swaks([
        '--tls',
        '--pipeline',
        '--auth',
        'LOGIN',
        '--auth-user',
        'acme/main',
        '--auth-password',
        key,
      ]);
      expect(output).toMatch(/-> STARTTLS\n<- {2}220 /);
      expect(output).toMatch(/=== TLS started with cipher/);
      expect(output).toMatch(/~> AUTH LOGIN/);
      expect(output).toMatch(/<~ {2}250 2\.0\.0 Ok: queued as /);
      const id = queuedId(output);

      const message = await relayed(id);
      expect(message.rcptTo).toEqual(['a@example.net', 'b@example.net']);
      expectOnlyDocumentedChanges(RAW, message.raw, { id, helo: 'swaks.client.test', via: 'ESMTPSA' });
    });
  });

  // STARTTLS once let a session without AUTH through to the account check (550 5.7.1):
  // smtp-server leaves `session.user` false after the handshake, and that was read as a tenant.
  describe('without AUTH, on every listener', () => {
    const listeners = [
      {
        name: 'plain',
        swaks: [] as string[],
        python: "smtp = smtplib.SMTP('127.0.0.1', PORT, timeout=30)\nsmtp.ehlo()",
      },
      {
        name: 'STARTTLS-upgraded',
        swaks: ['--tls'],
        python: "smtp = smtplib.SMTP('127.0.0.1', PORT, timeout=30)\nsmtp.starttls(context=TLS)\nsmtp.ehlo()",
      },
      {
        name: 'implicit TLS',
        swaks: ['--tlsc'],
        python: "smtp = smtplib.SMTP_SSL('127.0.0.1', PORT, context=TLS, timeout=30)\nsmtp.ehlo()",
      },
    ];
    const portOf = (name: string): number => (name === 'implicit TLS' ? tlsPort : plainPort);
    /** A Python script's first lines: the port from the environment, and TLS that takes the test certificate. */
    const PYTHON_PRELUDE = [
      'import json, os, smtplib, ssl',
      "PORT = int(os.environ['PORT'])",
      'TLS = ssl.create_default_context()',
      'TLS.check_hostname = False',
      'TLS.verify_mode = ssl.CERT_NONE',
    ];

    it.each(listeners)('swaks is answered 530 5.7.0 at MAIL on the $name listener', async ({ name, swaks }) => {
      const result = await runSwaks([
        '--server',
        `127.0.0.1:${portOf(name)}`,
        '--helo',
        'swaks.client.test',
        '--from',
        'sender@example.com',
        '--to',
        'a@example.net',
        ...swaks,
      ]);
      expect(result.code, result.stdout).not.toBe(0);
      if (name !== 'plain') expect(result.stdout).toMatch(/=== TLS started with cipher/);
      // swaks marks what crosses TLS with ~, what crosses in the clear with - (a refusal read: <** and <~*).
      const [sent, read] = name === 'plain' ? [' ->', '<\\*\\*'] : [' ~>', '<~\\*'];
      expect(result.stdout).toMatch(
        new RegExp(`${sent} MAIL FROM:<sender@example\\.com>\\n${read} 530 5\\.7\\.0 Authentication required\\n`),
      );
      expect(result.stdout).not.toMatch(/RCPT TO/);
    });

    it.each(listeners)(
      'Python smtplib is answered 530 5.7.0 at MAIL on the $name listener',
      async ({ name, python }) => {
        const script = [
          ...PYTHON_PRELUDE,
          python,
          "code, text = smtp.mail('sender@example.com')",
          "print(json.dumps({'code': code, 'text': text.decode(), 'tls': smtp.sock.version() if hasattr(smtp.sock, 'version') else None}))",
          'smtp.quit()',
        ].join('\n');
        const result = await runProgram('python3', ['-'], { stdin: script, env: { PORT: String(portOf(name)) } });
        expect(result.code, result.stderr).toBe(0);
        const reply = JSON.parse(result.stdout.trim()) as { code: number; text: string; tls: string | null };
        expect(reply).toEqual({
          code: 530,
          text: '5.7.0 Authentication required',
          tls: name === 'plain' ? null : expect.stringMatching(/^TLSv1\.[23]$/),
        });
      },
    );

    it('forgets an AUTH made before STARTTLS (RFC 3207 §4.2): MAIL after the upgrade is answered 530 until AUTH again', async () => {
      const script = [
        ...PYTHON_PRELUDE,
        "smtp = smtplib.SMTP('127.0.0.1', PORT, timeout=30)",
        "smtp.login('acme', os.environ['KEY'])",
        'smtp.starttls(context=TLS)',
        'smtp.ehlo()',
        "before = smtp.mail('sender@example.com')",
        'smtp.rset()',
        "smtp.login('acme', os.environ['KEY'])",
        "after = smtp.mail('sender@example.com')",
        'print(json.dumps([[code, text.decode()] for code, text in [before, after]]))',
        'smtp.quit()',
      ].join('\n');
      const result = await runProgram('python3', ['-'], { stdin: script, env: { PORT: String(plainPort), KEY: key } });
      expect(result.code, result.stderr).toBe(0);
      expect(JSON.parse(result.stdout.trim())).toEqual([
        [530, '5.7.0 Authentication required'],
        [250, expect.stringMatching(/^2\.1\.0 /)],
      ]);
    });
  });
});
