import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { api } from '../helpers/test-daemon.js';
import { spawnDaemon, type DaemonProcess } from '../helpers/daemon-process.js';
import { startSmtpSink } from '../peers/smtp-sink.js';

const dirs: string[] = [];
const running: DaemonProcess[] = [];

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-e2e-'));
  dirs.push(dir);
  return dir;
}

function start(args: string[], cwd: string, env: Record<string, string> = {}): DaemonProcess {
  const daemon = spawnDaemon(args, { cwd, env });
  running.push(daemon);
  return daemon;
}

afterEach(() => {
  for (const daemon of running.splice(0)) if (daemon.child.exitCode === null) daemon.child.kill('SIGKILL');
});
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('mailproxy serve as a process', () => {
  it('starts on embedded defaults, answers /health, keeps the admin token out of the log, stops on SIGTERM', async () => {
    const cwd = tempDir();
    // Every default except the port, which must be free on a shared machine.
    const daemon = start(['serve'], cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
    const listening = await daemon.waitForLog((entry) => entry.msg === 'http listening');
    const url = `http://127.0.0.1:${listening.port as number}`;

    expect((await api(url, 'GET', '/health')).body).toEqual({ status: 'ok' });
    expect((await api(url, 'GET', '/ready')).status).toBe(200);

    const tokenFile = join(cwd, 'data', 'admin-token');
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(statSync(join(cwd, 'data', 'secret.key')).mode & 0o777).toBe(0o600);
    const token = readFileSync(tokenFile, 'utf8').trim();
    const told = daemon.entries.find((entry) => entry.msg.startsWith('admin token created'));
    expect(told).toMatchObject({ level: 'warn', path: 'data/admin-token' });
    expect((await api(url, 'GET', '/tenants', { token })).status).toBe(200);
    expect(daemon.stdout.join('\n')).not.toContain(token);

    daemon.child.kill('SIGTERM');
    expect(await daemon.exited).toEqual({ code: 0, signal: null });
    expect(daemon.entries.map((entry) => entry.msg)).toContain('stopped');
  });

  it('says in its ready line where the web console and the API docs are, as URLs that answer', async () => {
    const daemon = start(['serve'], tempDir(), { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
    const listening = await daemon.waitForLog((entry) => entry.msg === 'http listening');
    const url = `http://127.0.0.1:${listening.port as number}`;
    const ready = await daemon.waitForLog((entry) => entry.msg === 'ready');
    expect(ready).toMatchObject({ console: `${url}/ui`, docs: `${url}/docs` });
    expect(ready).not.toHaveProperty('note');
    const docs = await fetch(ready.docs as string);
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('/openapi.json');
    expect((await fetch(ready.console as string, { redirect: 'manual' })).headers.get('location')).toMatch(/^\/ui\//);
  });

  it('names loopback in the ready line when it listens on every address, and says so', async () => {
    const daemon = start(['serve'], tempDir(), { MAILPROXY_HTTP_LISTEN: '0.0.0.0:0' });
    const listening = await daemon.waitForLog((entry) => entry.msg === 'http listening');
    const ready = await daemon.waitForLog((entry) => entry.msg === 'ready');
    const url = `http://127.0.0.1:${listening.port as number}`;
    expect(ready).toMatchObject({
      console: `${url}/ui`,
      docs: `${url}/docs`,
      note: expect.stringContaining('listening on every address (0.0.0.0:'),
    });
    expect((await fetch(ready.docs as string)).status).toBe(200);
  });

  it('keeps the admin token across restarts and does not announce it again', async () => {
    const cwd = tempDir();
    const first = start(['serve'], cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
    await first.waitForLog((entry) => entry.msg === 'ready');
    const token = readFileSync(join(cwd, 'data', 'admin-token'), 'utf8').trim();
    first.child.kill('SIGTERM');
    await first.exited;

    const second = start(['serve'], cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
    const listening = await second.waitForLog((entry) => entry.msg === 'http listening');
    expect((await api(`http://127.0.0.1:${listening.port as number}`, 'GET', '/tenants', { token })).status).toBe(200);
    expect(second.entries.some((entry) => entry.msg.startsWith('admin token created'))).toBe(false);
  });

  it('lets the environment win over the config file', async () => {
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const taken = (blocker.address() as { port: number }).port;
    try {
      const cwd = tempDir();
      writeFileSync(join(cwd, 'mailproxy.toml'), `[http]\nlisten = "127.0.0.1:${taken}"\n[log]\nlevel = "silent"\n`);
      const daemon = start(['serve', '--config', 'mailproxy.toml'], cwd, {
        MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
        MAILPROXY_LOG_LEVEL: 'info',
      });
      const listening = await daemon.waitForLog((entry) => entry.msg === 'http listening');
      expect(listening.port).not.toBe(taken);
      expect((await api(`http://127.0.0.1:${listening.port as number}`, 'GET', '/health')).status).toBe(200);
    } finally {
      blocker.close();
    }
  });

  it('exits 78 listing every problem of an invalid config, naming each key', async () => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'bad.toml'), `dta_dir = "x"\n[http]\nlisten = "nowhere"\nmax_body_bytes = "big"\n`);
    const daemon = start(['serve', '--config', 'bad.toml'], cwd, { MAILPROXY_LOG_LEVEL: 'loud' });
    expect(await daemon.exited).toEqual({ code: 78, signal: null });
    const stderr = daemon.stderr.join('');
    expect(stderr).toContain('invalid configuration (4 problems)');
    for (const key of [
      'dta_dir: unknown key',
      'http.listen: expected host:port',
      'http.max_body_bytes:',
      'log.level (from MAILPROXY_LOG_LEVEL):',
    ]) {
      expect(stderr).toContain(key);
    }
  });

  it.each([
    [
      'a missing config file',
      ['serve', '--config', 'absent.toml'],
      'absent.toml: cannot read the config file (ENOENT)',
    ],
    ['broken TOML', ['serve', '--config', 'broken.toml'], 'broken.toml: not valid TOML at line 2'],
  ])('exits 78 on %s', async (_name, args, message) => {
    const cwd = tempDir();
    writeFileSync(join(cwd, 'broken.toml'), '[http]\nlisten = \n');
    const daemon = start(args, cwd);
    expect(await daemon.exited).toEqual({ code: 78, signal: null });
    expect(daemon.stderr.join('')).toContain(message);
  });

  it('exits 64 on a usage error and 1 when it cannot start', async () => {
    const cwd = tempDir();
    const usage = start(['serve', '--bogus'], cwd);
    expect((await usage.exited).code).toBe(64);
    expect(usage.stderr.join('')).toContain('unknown option for serve: --bogus');

    writeFileSync(join(cwd, 'not-a-dir'), 'x');
    const broken = start(['serve'], cwd, {
      MAILPROXY_DATA_DIR: 'not-a-dir/data',
      MAILPROXY_HTTP_LISTEN: '127.0.0.1:0',
    });
    expect((await broken.exited).code).toBe(1);
    expect(broken.entries.find((entry) => entry.level === 'fatal')?.msg).toBe('failed to start');
  });

  it('refuses a second daemon on the same data directory in one line and exit 1, while the first goes on and sends its message once', async () => {
    // The relay holds its answer: the first daemon's send (and its lease) is in flight while the second tries to start.
    const sink = await startSmtpSink({ answerDelayMs: 1500 });
    try {
      const cwd = tempDir();
      const first = start(['serve'], cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
      const listening = await first.waitForLog((entry) => entry.msg === 'http listening');
      await first.waitForLog((entry) => entry.msg === 'ready');
      const url = `http://127.0.0.1:${listening.port as number}`;
      const token = readFileSync(join(cwd, 'data', 'admin-token'), 'utf8').trim();
      const key = (await api(url, 'POST', '/tenant', { token, body: { id: 'acme' } })).body.api_key as string;
      const account = {
        id: 'main',
        tenant_id: 'acme',
        host: '127.0.0.1',
        port: sink.port,
        tls_mode: 'none',
        is_default: true,
      };
      expect((await api(url, 'POST', '/account', { token, body: account })).status).toBe(201);
      const message = {
        id: 'once-1',
        from: 'app@acme.example',
        to: 'someone@example.net',
        subject: 'once',
        body: 'once',
      };
      expect(
        (await api(url, 'POST', '/add-messages', { token: key, body: { messages: [message] } })).body,
      ).toMatchObject({ queued: 1 });
      await sink.waitForAnswering(1);

      const second = start(['serve'], cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
      expect(await second.exited).toEqual({ code: 1, signal: null });
      const said = second.stderr.join('').trimEnd().split('\n');
      expect(said).toEqual([
        expect.stringMatching(
          /^mailproxy: data directory \S+ is in use by another mailproxy: stop it first, or give this one another data_dir$/,
        ),
      ]);
      expect(second.entries.some((entry) => entry.msg === 'http listening')).toBe(false);

      await sink.waitForMessages(1);
      await expect
        .poll(async () => (await api(url, 'GET', '/messages/once-1?tenant_id=acme', { token })).body.message?.status, {
          timeout: 10_000,
        })
        .toBe('sent');
      expect((await api(url, 'GET', '/health')).status).toBe(200);
      expect(sink.messages).toHaveLength(1);
      expect(sink.unanswered).toHaveLength(0);

      // Once the first has stopped, the directory is free again.
      first.child.kill('SIGTERM');
      expect((await first.exited).code).toBe(0);
      const third = start(['serve'], cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
      await third.waitForLog((entry) => entry.msg === 'ready');
    } finally {
      await sink.stop();
    }
  });

  it('frees the data directory when the daemon is killed: the next start needs no clean-up', async () => {
    const cwd = tempDir();
    const first = start(['serve'], cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
    await first.waitForLog((entry) => entry.msg === 'ready');
    first.child.kill('SIGKILL');
    await first.exited;
    const second = start(['serve'], cwd, { MAILPROXY_HTTP_LISTEN: '127.0.0.1:0' });
    await second.waitForLog((entry) => entry.msg === 'ready');
  });
});
