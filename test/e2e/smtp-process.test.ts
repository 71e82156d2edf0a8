/**
 * SMTP ingress of the real process: a 250 survives SIGKILL, and SIGHUP takes a
 * renewed certificate without closing the listener or its sessions.
 */
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { describe, expect, it } from 'vitest';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { tearDownProcesses } from '../helpers/process-teardown.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';
import { selfSigned } from '../peers/self-signed.js';
import { startSmtpSink } from '../peers/smtp-sink.js';

const { dirs, running, sinks } = tearDownProcesses();

interface Started {
  daemon: DaemonProcess;
  url: string;
  smtpPort: number;
}

async function start(cwd: string, processes: number, env: Record<string, string> = {}): Promise<Started> {
  const daemon = spawnDaemon(['serve'], {
    cwd,
    env: { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0', MAILPROXY_SMTP_SESSION_PROCESSES: String(processes), ...env },
  });
  running.push(daemon);
  const http = await daemon.waitForLog((entry) => entry.msg === 'http listening');
  const smtp = await daemon.waitForLog((entry) => entry.msg === 'smtp listening' && entry.listener === 'plain');
  await daemon.waitForLog((entry) => entry.msg === 'ready');
  return { daemon, url: `http://127.0.0.1:${http.port as number}`, smtpPort: smtp.port as number };
}

function workdir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-smtp-'));
  dirs.push(dir);
  return dir;
}

const sha256 = (bytes: Buffer | string): string => createHash('sha256').update(bytes).digest('hex');

// Sessions on the main thread, and in processes of their own (`[smtp] session_processes`).
describe.each([0, 2])('SMTP ingress of the real process (session processes: %i)', (processes) => {
  it('delivers a message whose 250 was the last thing the process did before SIGKILL', async () => {
    const sink = await startSmtpSink();
    sinks.push(sink);
    const cwd = workdir();
    const first = await start(cwd, processes);
    const token = readFileSync(join(cwd, 'data', 'admin-token'), 'utf8').trim();
    const admin = (url: string, method: string, path: string, body?: unknown) =>
      api(url, method, path, { token, body });
    const tenant = await admin(first.url, 'POST', '/tenant', { id: 'acme' });
    await admin(first.url, 'POST', '/account', {
      id: 'main',
      tenant_id: 'acme',
      host: '127.0.0.1',
      port: sink.port,
      tls_mode: 'none',
      is_default: true,
    });
    // Held, so that only the restarted process can have sent it.
    await admin(first.url, 'POST', '/commands/suspend', { tenant_id: 'acme' });

    const body = `${'The body, byte for byte.\r\n'.repeat(200)}caffè ✓\r\n`;
    const raw = `From: app@acme.example\r\nTo: someone@example.net\r\nSubject: survive\r\nX-Genro-Mail-ID: kill-after-250\r\n\r\n${body}`;
    const session = await openSubmission(first.smtpPort);
    await session.login('acme', tenant.body.api_key as string);
    const info = await session.send({ from: 'app@acme.example', to: ['someone@example.net'] }, raw);
    first.daemon.child.kill('SIGKILL');
    expect(info.response).toBe('250 2.0.0 Ok: queued as kill-after-250');
    expect(await first.daemon.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const second = await start(cwd, processes);
    await admin(second.url, 'POST', '/commands/activate', { tenant_id: 'acme' });
    await sink.waitForMessages(1, 20_000);
    const relayed = sink.messages[0]?.raw ?? Buffer.alloc(0);
    expect(relayed.toString()).toContain('X-Genro-Mail-ID: kill-after-250');
    expect(sha256(relayed.subarray(relayed.indexOf('\r\n\r\n') + 4))).toBe(sha256(body));
  }, 60_000);

  it('takes a renewed certificate on SIGHUP without closing the listener or an open session', async () => {
    const cwd = workdir();
    const [cert, key] = [join(cwd, 'cert.pem'), join(cwd, 'key.pem')];
    const first = await selfSigned(cwd, 'first', 'first');
    const renewed = await selfSigned(cwd, 'renewed', 'renewed');
    copyFileSync(first.certFile, cert);
    copyFileSync(first.keyFile, key);
    const started = await start(cwd, processes, {
      MAILPROXY_SMTP_TLS_CERT_FILE: cert,
      MAILPROXY_SMTP_TLS_KEY_FILE: key,
    });

    expect(await certificateName(started.smtpPort)).toBe('first');
    const open = await dialog(started.smtpPort);
    expect(await open.say('EHLO before.example')).toMatch(/250[ -]STARTTLS/);

    copyFileSync(renewed.certFile, cert);
    copyFileSync(renewed.keyFile, key);
    started.daemon.child.kill('SIGHUP');
    await started.daemon.waitForLog((entry) => entry.msg === 'smtp tls certificate reloaded');

    expect(await certificateName(started.smtpPort)).toBe('renewed');
    // The session opened before the reload is still served.
    expect(await open.say('NOOP')).toMatch(/^250 /);
    open.socket.destroy();
  }, 60_000);
});

/** A plain SMTP dialog: `say` writes a command and answers the complete (multi-line) reply. */
async function dialog(port: number): Promise<{ socket: Socket; say(command: string): Promise<string> }> {
  const socket = connect({ host: '127.0.0.1', port });
  let buffered = '';
  let waiting: ((reply: string) => void) | null = null;
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    buffered += chunk;
    // A reply is complete at a line "NNN text" (no dash after the code).
    const complete = /(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(buffered);
    if (complete && waiting !== null) {
      const reply = buffered;
      buffered = '';
      const resolve = waiting;
      waiting = null;
      resolve(reply);
    }
  });
  const next = (): Promise<string> => new Promise((resolve) => (waiting = resolve));
  const greeting = next();
  await once(socket, 'connect');
  expect(await greeting).toMatch(/^220 /);
  return {
    socket,
    say: (command) => {
      const reply = next();
      socket.write(`${command}\r\n`);
      return reply;
    },
  };
}

/** The common name of the certificate the listener presents after STARTTLS. */
async function certificateName(port: number): Promise<string> {
  const { socket, say } = await dialog(port);
  await say('EHLO probe.example');
  expect(await say('STARTTLS')).toMatch(/^220 /);
  socket.removeAllListeners('data');
  const secure = tlsConnect({ socket, rejectUnauthorized: false, minVersion: 'TLSv1.2' });
  await once(secure, 'secureConnect');
  const name = String(secure.getPeerCertificate().subject.CN);
  secure.destroy();
  return name;
}
