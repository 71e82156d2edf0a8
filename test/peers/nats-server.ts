/**
 * A real nats-server with JetStream on 127.0.0.1, its own store directory and
 * a random port, that a test can stop and start again (same port, same store)
 * to play a broker outage. Plus a reader of what a stream holds.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { jetstreamManager } from '@nats-io/jetstream';

export interface NatsPeer {
  url: string;
  port: number;
  /** The monitoring endpoint (`/connz`, `/jsz`), when asked for at the start; it moves at each start. */
  monitorUrl: string | null;
  stop(): Promise<void>;
  /** Starts again on the same port with the same store. */
  start(): Promise<void>;
  /** Stops and removes the store directory. */
  destroy(): Promise<void>;
}

const BINARY = existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';

/** A ports file's content, or null while it is not whole yet. */
function parsedPorts(text: string): { nats: string[]; monitoring?: string[] } | null {
  try {
    const ports = JSON.parse(text) as { nats?: string[]; monitoring?: string[] };
    return Array.isArray(ports.nats) && ports.nats.length > 0
      ? (ports as { nats: string[]; monitoring?: string[] })
      : null;
  } catch {
    return null;
  }
}

async function waitForPortsFile(
  dir: string,
  child: ChildProcess,
  stderr: () => string,
): Promise<{ port: number; monitorUrl: string | null }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new NatsExit(child.exitCode, stderr());
    const file = readdirSync(dir).find((name) => name.endsWith('.ports') && name.includes(String(child.pid)));
    // nats-server writes the file in place: seen half-written (empty) by a CI run, it is read again.
    const ports = file === undefined ? null : parsedPorts(readFileSync(join(dir, file), 'utf8'));
    if (ports !== null)
      return {
        port: Number(new URL((ports.nats[0] as string).replace('nats://', 'http://')).port),
        monitorUrl: ports.monitoring?.[0] ?? null,
      };
    if (Date.now() > deadline) throw new Error('nats-server did not write its ports file');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

class NatsExit extends Error {
  constructor(
    code: number,
    readonly stderr: string,
  ) {
    super(`nats-server exited with ${code}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`);
  }
}

/**
 * Whether a restart found its port taken. A client that redials a stopped
 * server on loopback can be handed that very port as its own source port and
 * connect to itself (TCP self-connect) until it gives up on the garbage it
 * reads; so can any process picking an ephemeral port meanwhile.
 */
function portTaken(error: unknown): boolean {
  return error instanceof NatsExit && /address already in use/i.test(error.stderr);
}

/** A server and one client of it, for tests that talk to JetStream directly; `close` ends both. */
export async function startNatsServerWithClient(): Promise<{
  server: NatsPeer;
  nc: NatsConnection;
  close(): Promise<void>;
}> {
  const server = await startNatsServer();
  const nc = await connect({ servers: server.url });
  return {
    server,
    nc,
    async close() {
      await nc.close();
      await server.destroy();
    },
  };
}

/** `monitoring`: also serve the monitoring endpoint, on a random port. */
export async function startNatsServer(options: { monitoring?: boolean } = {}): Promise<NatsPeer> {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-nats-'));
  let child: ChildProcess | null = null;
  let port = -1;
  let monitorUrl: string | null = null;

  const startOnce = async (): Promise<void> => {
    const args = ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', join(dir, 'js'), '--ports_file_dir', dir];
    const spawned = spawn(BINARY, options.monitoring === true ? [...args, '-m', '-1'] : args, {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    spawned.stderr?.on('data', (chunk: Buffer) => void (stderr = (stderr + chunk.toString()).slice(-4096)));
    child = spawned;
    ({ port, monitorUrl } = await waitForPortsFile(dir, spawned, () => stderr));
  };
  // A restart keeps its port (clients redial it), so a port taken meanwhile is waited out.
  const start = async (): Promise<void> => {
    const deadline = Date.now() + 15_000;
    for (;;) {
      try {
        return await startOnce();
      } catch (error) {
        if (!portTaken(error) || Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  };
  const stop = async (): Promise<void> => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGTERM');
    await exited;
    for (const name of readdirSync(dir)) if (name.endsWith('.ports')) rmSync(join(dir, name));
  };

  await start();
  return {
    get url() {
      return `nats://127.0.0.1:${port}`;
    },
    get port() {
      return port;
    },
    get monitorUrl() {
      return monitorUrl;
    },
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface StoredEvent {
  seq: number;
  subject: string;
  msgId: string | undefined;
  body: Record<string, any>;
  /** When the server stored it (ms). */
  storedAt: number;
}

/** A message's JSON body, or `{ raw }` for one that is not JSON (a poison command, say). */
function parsedOrRaw(text: string): Record<string, any> {
  try {
    return JSON.parse(text) as Record<string, any>;
  } catch {
    return { raw: text };
  }
}

/** Every message the stream holds now, in stream order. */
export async function readStream(url: string, stream: string): Promise<StoredEvent[]> {
  const nc: NatsConnection = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    const events: StoredEvent[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq += 200) {
      const last = Math.min(info.state.last_seq, seq + 199);
      const chunk = await Promise.all(
        Array.from({ length: last - seq + 1 }, (_, index) => jsm.streams.getMessage(stream, { seq: seq + index })),
      );
      for (const message of chunk) {
        // A sequence between the first and the last with no message: the stream lost one.
        if (message === null) throw new Error(`stream ${stream} has no message between its first and last`);
        events.push({
          seq: message.seq,
          subject: message.subject,
          msgId: message.header?.get('Nats-Msg-Id'),
          body: parsedOrRaw(message.string()),
          storedAt: message.time.getTime(),
        });
      }
    }
    return events;
  } finally {
    await nc.close();
  }
}
