/**
 * SMTP clients that nobody on the team wrote, driven from tests: nodemailer (in
 * process), Python's smtplib and swaks (child processes). Each reports the bytes
 * it put on the wire as DATA and the server's final reply.
 */
import { execFileSync, spawn } from 'node:child_process';
import { format } from 'node:util';
import nodemailer from 'nodemailer';
import MailComposer from 'nodemailer/lib/mail-composer/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';

export interface ProgramResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A missing client fails the run with the line that installs it (REAL-PEERS.md). */
export function requireProgram(command: string, probe: string[], expected: RegExp, install: string): void {
  let output: string;
  try {
    output = execFileSync(command, probe, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    throw new Error(`${command} is needed by this test: ${install} (${(error as Error).message})`);
  }
  if (!expected.test(output)) throw new Error(`${command} lacks a feature this test needs: ${install}\n${output}`);
}

export function runProgram(
  command: string,
  args: string[],
  options: { stdin?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<ProgramResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...process.env, ...options.env }, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 30_000);
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout: Buffer.concat(stdout).toString('utf8'), stderr: Buffer.concat(stderr).toString('utf8') });
    });
    child.stdin.end(options.stdin ?? '');
  });
}

/** What a Python client script prints as its last stdout line (see PYTHON_PRELUDE). */
export interface PythonSubmission {
  /** The bytes smtplib was given as DATA (before dot-stuffing). */
  sent: Buffer;
  replyCode: number;
  replyText: string;
  /** smtplib's debug transcript (stderr). */
  transcript: string;
  rcptTo: string[];
}

/**
 * Defines `connect()` (an SMTP to 127.0.0.1:$PORT whose DATA is recorded, named
 * python.client.test), `TLS` (a context that accepts the test certificate) and
 * `report()`; the test's script body follows it.
 */
const PYTHON_PRELUDE = `
import base64, json, os, smtplib, ssl, sys
from email.message import EmailMessage
PORT = int(os.environ['PORT'])
KEY = os.environ['KEY']
TLS = ssl.create_default_context()
TLS.check_hostname = False
TLS.verify_mode = ssl.CERT_NONE
records = []
def connect():
    smtp = smtplib.SMTP('127.0.0.1', PORT, local_hostname='python.client.test', timeout=30)
    smtp.set_debuglevel(1)
    original_data, original_rcpt = smtp.data, smtp.rcpt
    def data(msg):
        reply = original_data(msg)
        records.append({'sent': base64.b64encode(msg).decode(), 'code': reply[0], 'text': reply[1].decode()})
        return reply
    def rcpt(address, options=()):
        records.append({'rcpt': address})
        return original_rcpt(address, options)
    smtp.data, smtp.rcpt = data, rcpt
    return smtp
def report():
    print(json.dumps(records))
`;

export async function runPython(
  body: string,
  env: { PORT: string; KEY: string } & Record<string, string>,
): Promise<PythonSubmission> {
  const script = `${PYTHON_PRELUDE}\n${body.replace(/^\n/, '')}\nreport()\n`;
  const result = await runProgram('python3', ['-'], { stdin: script, env });
  if (result.code !== 0) throw new Error(`python3 exited ${result.code}:\n${result.stderr}`);
  const records = JSON.parse(result.stdout.trim().split('\n').at(-1) ?? '[]') as Array<{
    sent?: string;
    code?: number;
    text?: string;
    rcpt?: string;
  }>;
  const data = records.find((record) => record.sent !== undefined);
  if (data === undefined) throw new Error(`python3 sent no DATA:\n${result.stderr}`);
  return {
    sent: Buffer.from(data.sent ?? '', 'base64'),
    replyCode: data.code ?? 0,
    replyText: data.text ?? '',
    transcript: result.stderr,
    rcptTo: records.flatMap((record) => (record.rcpt === undefined ? [] : [record.rcpt])),
  };
}

/** swaks' transcript is on stdout; it exits 0 only when the whole transaction succeeded. */
export function runSwaks(args: string[]): Promise<ProgramResult> {
  return runProgram('swaks', ['--timeout', '30', ...args]);
}

export interface NodemailerSubmission {
  /** The server's reply to the final dot. */
  response: string;
  accepted: string[];
  /** nodemailer's debug log: `C: ` what it sent, `S: ` what it read (credentials hidden). */
  transcript: string[];
}

/** Sends `raw` as it is to the envelope's recipients; `use8BitMime` asks for BODY=8BITMIME. */
export async function sendRawWithNodemailer(
  options: SMTPTransport.Options,
  envelope: { from: string; to: string[]; use8BitMime?: boolean },
  raw: Buffer,
): Promise<NodemailerSubmission> {
  const transcript: string[] = [];
  const record = (data: { tnx?: string } | undefined, message: string, ...args: unknown[]): void => {
    const direction = data?.tnx === 'client' ? 'C: ' : data?.tnx === 'server' ? 'S: ' : '';
    transcript.push(direction + format(message, ...args));
  };
  const logger = {
    level: () => undefined,
    trace: record,
    debug: record,
    info: record,
    warn: record,
    error: record,
    fatal: record,
  };
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    name: 'nodemailer.client.test',
    logger,
    debug: true,
    ...options,
  } as SMTPTransport.Options);
  try {
    const info = await transport.sendMail({ envelope: envelope as never, raw });
    return { response: info.response, accepted: info.accepted.map(String), transcript };
  } finally {
    transport.close();
  }
}

/** nodemailer's own composer (the one its SMTP transport uses): the exact MIME bytes and the envelope, Bcc in it but not in the bytes. */
export async function composeWithNodemailer(
  mail: Mail.Options,
): Promise<{ raw: Buffer; envelope: { from: string; to: string[] } }> {
  // CRLF throughout: nodemailer's SMTP client turns a bare LF into CRLF on the wire, so `raw` is what is sent.
  const node = new MailComposer({ newline: 'windows', ...mail } as Mail.Options).compile();
  const raw = await node.build();
  const envelope = node.getEnvelope();
  return { raw, envelope: { from: envelope.from || '', to: envelope.to } };
}
