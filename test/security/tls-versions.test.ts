/**
 * TLS 1.2 minimum on SMTP, for STARTTLS and the implicit-TLS listener: a TLS
 * 1.0 or 1.1 client is refused, 1.2 and 1.3 are taken. A control server that
 * allows TLS 1.0 proves the old clients really can talk on this machine, so a
 * refusal is the daemon's doing and not OpenSSL's. (HTTP has no TLS listener:
 * it is served over plain HTTP on loopback, behind a proxy that terminates TLS.)
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect, createServer, type SecureVersion, type TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startQueueFixture, type QueueFixture } from '../helpers/queue-fixture.js';
import { selfSigned } from '../peers/self-signed.js';

// OpenSSL 3 refuses TLS 1.0/1.1 at its default security level; level 0 lets this client offer them.
const OLD_CIPHERS = 'DEFAULT@SECLEVEL=0';

/** Handshakes over `socket` with exactly `version`: the negotiated protocol, or the error text. */
function handshake(options: { socket?: Socket; port?: number }, version: SecureVersion): Promise<string> {
  return new Promise((resolve) => {
    const tls: TLSSocket = tlsConnect({
      ...(options.socket === undefined ? { host: '127.0.0.1', port: options.port } : { socket: options.socket }),
      minVersion: version,
      maxVersion: version,
      ciphers: OLD_CIPHERS,
      rejectUnauthorized: false,
      servername: 'localhost',
    });
    tls.once('secureConnect', () => {
      resolve(tls.getProtocol() ?? 'unknown');
      tls.destroy();
    });
    tls.once('error', (error) => resolve(`refused: ${error.message}`));
    tls.once('close', () => resolve('refused: closed'));
  });
}

/** A plain SMTP connection taken up to the STARTTLS go-ahead (220), ready for the handshake. */
async function starttls(port: number): Promise<Socket> {
  const socket = netConnect({ host: '127.0.0.1', port });
  let buffered = '';
  const replies: string[] = [];
  const next = async (): Promise<string> => {
    while (replies.length === 0) {
      const [chunk] = (await once(socket, 'data')) as [Buffer];
      buffered += chunk.toString('latin1');
      for (let end = buffered.indexOf('\r\n'); end !== -1; end = buffered.indexOf('\r\n')) {
        const line = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        if (line[3] !== '-') replies.push(line);
      }
    }
    return replies.shift() as string;
  };
  expect(await next()).toMatch(/^220 /);
  socket.write('EHLO tls-probe.example\r\n');
  expect(await next()).toMatch(/^250 /);
  socket.write('STARTTLS\r\n');
  expect(await next()).toMatch(/^220 /);
  socket.removeAllListeners('data');
  return socket;
}

const VERSIONS: Array<[SecureVersion, boolean]> = [
  ['TLSv1', false],
  ['TLSv1.1', false],
  ['TLSv1.2', true],
  ['TLSv1.3', true],
];

describe('TLS 1.2 minimum on SMTP', () => {
  let dir: string;
  let key: Buffer;
  let cert: Buffer;
  let fx: QueueFixture;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'mailproxy-tls-'));
    const made = await selfSigned(dir, 'localhost', 'localhost');
    const { keyFile, certFile } = made;
    [key, cert] = [made.key, made.cert];
    fx = await startQueueFixture({
      extraToml: `[smtp]\ntls_cert_file = "${certFile}"\ntls_key_file = "${keyFile}"\ntls_listen = "127.0.0.1:0"\n`,
    });
  });
  afterAll(async () => {
    await fx.stop();
    fx.t.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the old clients can talk here: a server that allows TLS 1.0 takes TLS 1.0 and 1.1', async () => {
    const server = createServer({ key, cert, minVersion: 'TLSv1', ciphers: OLD_CIPHERS }, (socket) => socket.end());
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    try {
      expect(await handshake({ port }, 'TLSv1')).toBe('TLSv1');
      expect(await handshake({ port }, 'TLSv1.1')).toBe('TLSv1.1');
    } finally {
      server.close();
    }
  });

  it.each(VERSIONS)('implicit TLS: %s taken: %s', async (version, taken) => {
    const result = await handshake({ port: fx.t.daemon.smtp?.implicitTls?.port ?? 0 }, version);
    if (taken) expect(result).toBe(version);
    else expect(result).toMatch(/^refused: /);
  });

  it.each(VERSIONS)('STARTTLS: %s taken: %s', async (version, taken) => {
    const result = await handshake({ socket: await starttls(fx.t.daemon.smtp?.plain?.port ?? 0) }, version);
    if (taken) expect(result).toBe(version);
    else expect(result).toMatch(/^refused: /);
  });

  it('still refuses TLS 1.1 after the certificate is reloaded (SIGHUP)', async () => {
    expect(fx.t.daemon.smtp?.reloadTls()).toBe(true);
    expect(await handshake({ port: fx.t.daemon.smtp?.implicitTls?.port ?? 0 }, 'TLSv1.1')).toMatch(/^refused: /);
    expect(await handshake({ socket: await starttls(fx.t.daemon.smtp?.plain?.port ?? 0) }, 'TLSv1.1')).toMatch(
      /^refused: /,
    );
    expect(await handshake({ port: fx.t.daemon.smtp?.implicitTls?.port ?? 0 }, 'TLSv1.2')).toBe('TLSv1.2');
  });
});
