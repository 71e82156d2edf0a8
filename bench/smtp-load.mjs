// SMTP load generator in its own process, on raw node:net sockets so that the
// generator is not the bottleneck: MAIL, RCPT and DATA leave in one write
// (PIPELINING, RFC 2920), the message after the 354. Every reply code is checked.
//
// argv: port user password mode concurrency bytes [seconds warmupSeconds]   (user '-': no AUTH,
//   e.g. against bench/sink.mjs for a reference figure)
//   mode keepalive:   `concurrency` sessions, each AUTH once, then messages back to back
//                     for warmup + seconds; replies counted in the last `seconds`.
//   mode per-message: the same, but each message on a new connection
//                     (greeting, EHLO, AUTH, MAIL, RCPT, DATA, QUIT).
//   mode large:       `concurrency` connections at once, each sending one message of `bytes`.
// Prints one JSON line: {accepted, errors, rate, p50, p99, ...}.
import { connect } from 'node:net';

const [portText, user, password, mode, concurrencyText, bytesText, secondsText = '10', warmupText = '2'] =
  process.argv.slice(2);
const port = Number(portText);
const concurrency = Number(concurrencyText);
const bytes = Number(bytesText);
const seconds = Number(secondsText);
const warmup = Number(warmupText);
const authPlain = `AUTH PLAIN ${Buffer.from(`\0${user}\0${password}`).toString('base64')}\r\n`;
const ENVELOPE = 'MAIL FROM:<bench@example.com>\r\nRCPT TO:<sink@example.net>\r\nDATA\r\n';

// --- messages: realistic headers, text in lines of at most 72 characters, CRLF, no line starting with '.'
const WORDS = 'the quick brown fox jumps over a lazy dog while mail relays keep every message safe and sound'.split(
  ' ',
);
function textOf(size) {
  const lines = [];
  let line = '';
  let total = 0;
  for (let index = 0; total < size; index += 1) {
    const word = WORDS[(index * 7) % WORDS.length];
    if (line.length + word.length + 1 > 72) {
      lines.push(line);
      total += line.length + 2;
      line = '';
    }
    line = line === '' ? word : `${line} ${word}`;
  }
  return lines;
}
const date = new Date().toUTCString().replace(/GMT$/, '+0000');
const tag = `${process.pid}.${Date.now().toString(36)}`;
const headerOf = (sequence) =>
  [
    'From: Bench Sender <bench@example.com>',
    'To: Sink Recipient <sink@example.net>',
    `Subject: Bench message ${String(sequence).padStart(8, '0')}`,
    `Date: ${date}`,
    `Message-ID: <${tag}.${String(sequence).padStart(8, '0')}@bench.example.com>`,
    'MIME-Version: 1.0',
    'Content-Type: text/plain; charset=utf-8',
    'Content-Transfer-Encoding: 7bit',
    '',
    '',
  ].join('\r\n');
/** The text after the header, sized so that header + text + final dot is `total` bytes. */
function bodyFor(total) {
  const wanted = Math.max(0, total - headerOf(0).length - 3);
  let text = `${textOf(wanted).join('\r\n')}\r\n`;
  if (text.length > wanted) text = `${text.slice(0, Math.max(0, wanted - 2)).replace(/ +$/, '')}\r\n`;
  return `${text}.\r\n`;
}
const smallBody = mode === 'large' ? '' : bodyFor(bytes);
const messageOf = (sequence) => headerOf(sequence) + smallBody;

// --- a minimal SMTP client: replies are matched in order to the commands sent
class Client {
  constructor(socket) {
    this.socket = socket;
    this.pending = [];
    this.buffered = '';
    this.failure = null;
    socket.setNoDelay(true);
    socket.setEncoding('latin1');
    socket.on('data', (text) => this.onData(text));
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  static open() {
    return new Promise((resolve, reject) => {
      const socket = connect({ port, host: '127.0.0.1' });
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new Client(socket));
      });
      socket.once('error', reject);
    });
  }

  onData(text) {
    this.buffered += text;
    let newline;
    while ((newline = this.buffered.indexOf('\n')) !== -1) {
      const line = this.buffered.slice(0, newline);
      this.buffered = this.buffered.slice(newline + 1);
      if (line.charCodeAt(3) === 45 /* '-' */) continue; // a continuation of a multi-line reply
      const waiter = this.pending.shift();
      if (waiter !== undefined) waiter.resolve({ code: Number(line.slice(0, 3)), text: line.trimEnd() });
    }
  }

  fail(error) {
    this.failure ??= error;
    for (const waiter of this.pending.splice(0)) waiter.reject(error);
  }

  /** The next reply. */
  reply() {
    if (this.failure !== null) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => this.pending.push({ resolve, reject }));
  }

  /** Writes `text` and returns the next `count` replies. */
  send(text, count = 1) {
    const replies = Array.from({ length: count }, () => this.reply());
    this.socket.write(text);
    return count === 1 ? replies[0] : Promise.all(replies);
  }

  async expect(promise, code, what) {
    const reply = await promise;
    if (reply.code !== code) throw new Error(`${what}: ${reply.text}`);
    return reply;
  }

  /** Greeting, EHLO, AUTH PLAIN. */
  async login() {
    await this.expect(this.reply(), 220, 'greeting');
    const ehlo = this.reply();
    this.socket.write('EHLO bench.example.com\r\n');
    await this.expect(ehlo, 250, 'EHLO');
    if (user !== '-') await this.expect(this.send(authPlain), 235, 'AUTH');
  }

  /** One message: MAIL, RCPT, DATA pipelined, then the content after the 354. Returns the final reply. */
  async transaction(content) {
    const [mail, rcpt, data] = await this.send(ENVELOPE, 3);
    if (data.code === 354) {
      const done = this.send(content);
      const final = await done;
      if (mail.code !== 250 || rcpt.code !== 250)
        return { code: 0, text: `accepted DATA after ${mail.text} / ${rcpt.text}` };
      return final;
    }
    await this.send('RSET\r\n');
    return mail.code !== 250 ? mail : rcpt.code !== 250 ? rcpt : data;
  }

  async quit() {
    try {
      await this.send('QUIT\r\n');
    } catch {
      // closed already
    }
    this.socket.end();
  }

  destroy() {
    this.socket.destroy();
  }
}

// --- the runs
let sequence = 0;
let accepted = 0;
/** Every 250 to a message, in the window or not (for CPU per message). */
let completed = 0;
let errors = 0;
const errorSamples = new Map();
const latencies = [];
const noteError = (text) => {
  errors += 1;
  const key = String(text).slice(0, 120);
  errorSamples.set(key, (errorSamples.get(key) ?? 0) + 1);
};

const startedAt = performance.now();
const windowStart = startedAt + warmup * 1000;
const windowEnd = windowStart + seconds * 1000;

/** Counts a 250 that arrived inside the measurement window; any other reply, at any time, is an error. */
function record(reply, sentAt) {
  const at = performance.now();
  if (reply.code !== 250) noteError(reply.text);
  else completed += 1;
  if (reply.code === 250 && at >= windowStart && at < windowEnd) {
    accepted += 1;
    latencies.push(at - sentAt);
  }
}

async function keepAliveSession() {
  let client;
  try {
    client = await Client.open();
    await client.login();
  } catch (error) {
    noteError(error.message);
    client?.destroy();
    return;
  }
  while (performance.now() < windowEnd) {
    const sentAt = performance.now();
    try {
      record(await client.transaction(messageOf(sequence++)), sentAt);
    } catch (error) {
      noteError(error.message);
      client.destroy();
      return;
    }
  }
  await client.quit();
}

async function perMessageSession() {
  while (performance.now() < windowEnd) {
    const sentAt = performance.now();
    let client;
    try {
      client = await Client.open();
      await client.login();
      const reply = await client.transaction(messageOf(sequence++));
      await client.expect(client.send('QUIT\r\n'), 221, 'QUIT');
      client.socket.end();
      record(reply, sentAt);
    } catch (error) {
      noteError(error.message);
      client?.destroy();
      await new Promise((resolve) => setTimeout(resolve, 10)); // no tight loop against a refusing port
    }
  }
}

/** One message of `size` bytes: one Buffer, shared by every connection (written, never copied). */
function largeMessage(size) {
  const head = headerOf(0);
  const line = `${textOf(200)[0]}\r\n`;
  const lines = Math.floor((size - head.length - 3) / line.length);
  const buffer = Buffer.allocUnsafe(head.length + lines * line.length + 3);
  let offset = buffer.write(head, 0, 'latin1');
  const lineBytes = Buffer.from(line, 'latin1');
  for (let index = 0; index < lines; index += 1) offset += lineBytes.copy(buffer, offset);
  buffer.write('.\r\n', offset, 'latin1');
  return buffer;
}

async function largeSession(content, times) {
  let client;
  const sentAt = performance.now();
  try {
    client = await Client.open();
    await client.login();
    const reply = await client.transaction(content);
    if (reply.code === 250) accepted += 1;
    else noteError(reply.text);
    times.push(performance.now() - sentAt);
    await client.quit();
  } catch (error) {
    noteError(error.message);
    client?.destroy();
  }
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
};
const samples = () => Object.fromEntries(errorSamples);

// A daemon that stops answering must not hang the bench: report what was counted and leave.
const limitSeconds = mode === 'large' ? 900 : warmup + seconds + 120;
setTimeout(() => {
  noteError(`timed out after ${limitSeconds} s`);
  process.stdout.write(
    `${JSON.stringify({ accepted, errors, elapsed: limitSeconds, seconds, rate: accepted / seconds, 'MB/s': 0, p50: 0, p99: 0, errorSamples: samples() })}\n`,
  );
  process.exit(1);
}, limitSeconds * 1000).unref();

if (mode === 'large') {
  const content = largeMessage(bytes);
  const times = [];
  const began = performance.now();
  await Promise.all(Array.from({ length: concurrency }, () => largeSession(content, times)));
  const elapsed = (performance.now() - began) / 1000;
  process.stdout.write(
    `${JSON.stringify({ accepted, errors, elapsed, messageBytes: content.length, 'MB/s': (accepted * content.length) / 1e6 / elapsed, p50: pct(times, 0.5), max: pct(times, 1), errorSamples: samples() })}\n`,
  );
} else {
  const session = mode === 'per-message' ? perMessageSession : keepAliveSession;
  await Promise.all(Array.from({ length: concurrency }, session));
  process.stdout.write(
    `${JSON.stringify({ accepted, completed, errors, seconds, rate: accepted / seconds, p50: pct(latencies, 0.5), p99: pct(latencies, 0.99), messageBytes: Buffer.byteLength(messageOf(0)), sent: sequence, errorSamples: samples() })}\n`,
  );
}
process.exit(0);
