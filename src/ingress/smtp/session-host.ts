/**
 * SMTP sessions in processes of their own (`[smtp] session_processes`), so
 * that parsing, TLS and the DATA streams use the machine's other cores while
 * the main thread keeps the store. The daemon binds each listening socket and
 * shares it with every process, which accepts from it directly (Node 20 can
 * hand neither a listening socket nor a connection to a worker thread); a
 * connection the daemon's own loop happens to take is handed to a process.
 * Each process asks the daemon what the in-process listener asks its ports,
 * and the daemon answers from the same store and submission service. A
 * process that dies is replaced; stopping lets DATA in the middle finish.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { createServer, Socket, type AddressInfo, type Server } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { SmtpListener } from '../../core/index.js';
import { endOfTurn, respawnPause, workerScript } from '../../runtime/index.js';
import { readTls, type Endpoint, type SmtpIngress, type SmtpIngressOptions } from './server.js';
import { createSessionAnswers, type HostPorts } from './session-answers.js';
import { whenAnswered } from './session-deps.js';
import { toWire, type FromSession, type SessionSettings, type ToSession, type WireAnswer } from './session-protocol.js';

export interface SessionProcessOptions extends Omit<SmtpIngressOptions, 'session' | 'telemetry'> {
  processes: number;
  logLevel: string;
  ports: HostPorts;
  policy: SessionSettings['policy'];
  sealing?: SessionSettings['sealing'];
}

const START_TIMEOUT_MS = 15_000;
const script = fileURLToPath(workerScript(new URL('./sessions.process.js', import.meta.url)));

class SessionProcess {
  readonly child: ChildProcess;
  readonly startedAt = Date.now();
  /** The answers of a turn leave together, with whether the node drains. */
  private readonly answer = endOfTurn<WireAnswer>((answers) =>
    this.send({ t: 'answers', answers, draining: this.drainingNow() }),
  );
  private listening = 0;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;

  constructor(
    options: SessionProcessOptions,
    index: number,
    listeners: ReadonlyMap<SmtpListener, Server>,
    tlsReloaded: (ok: boolean) => void,
  ) {
    const answers = createSessionAnswers(options.ports);
    this.child = fork(script, [], { serialization: 'advanced', stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    this.exited = new Promise((resolve) => {
      const gone = (): void => {
        answers.forget();
        resolve();
      };
      this.child.once('exit', gone);
      // A process that could not be started (no pid) never exits: its error is its end.
      this.child.on('error', (error) => {
        options.log.error({ err: error, process: index }, 'smtp session process failed');
        if (this.child.pid === undefined) gone();
      });
    });
    this.drainingNow = () => options.ports.draining?.() === true;
    let started: () => void = () => undefined;
    let failed: (error: Error) => void = () => undefined;
    this.ready = new Promise<void>((resolve, reject) => {
      started = resolve;
      failed = reject;
    });
    const timer = setTimeout(() => failed(new Error('an SMTP session process did not start')), START_TIMEOUT_MS);
    timer.unref();
    void this.exited.then(() => failed(new Error('an SMTP session process exited while starting')));
    // A replacement's start is not awaited by anyone: its failure is its exit, handled by the host.
    this.ready.then(
      () => clearTimeout(timer),
      () => clearTimeout(timer),
    );
    this.child.on('message', (batch: FromSession) => {
      for (const entry of batch) {
        if ('tell' in entry) {
          const news = entry.tell;
          if ('op' in news && news.op === 'listening') {
            if (++this.listening === listeners.size) started();
          } else if ('op' in news && news.op === 'tls-reloaded') tlsReloaded(news.ok);
          else answers.hear(news);
          continue;
        }
        whenAnswered(
          () => answers.answer(entry.ask),
          (value) => this.answer({ id: entry.id, ok: true, value }),
          (error) => this.answer({ id: entry.id, ok: false, error: toWire(error) }),
        );
      }
    });
    const settings: SessionSettings = {
      index,
      tls: options.tls,
      maxConnections: options.maxConnections,
      commandTimeoutMs: options.commandTimeoutMs,
      policy: options.policy,
      logLevel: options.logLevel,
      ...(options.sealing === undefined ? {} : { sealing: options.sealing }),
    };
    this.send({ t: 'start', settings });
    for (const [listener, server] of listeners) this.send({ t: 'listen', listener }, server);
  }

  private readonly drainingNow: () => boolean;

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null && this.child.connected;
  }

  send(message: ToSession, handle?: Server | Socket): void {
    // A connection that cannot be handed on is closed; a listening socket stays the daemon's.
    const drop = (): void => {
      if (handle instanceof Socket) handle.destroy();
    };
    if (!this.child.connected) return drop();
    this.child.send(message, handle as never, (error) => {
      // The process went away with the message in flight; its exit is handled there.
      if (error !== null && error !== undefined) drop();
    });
  }
}

const listenOn = (endpoint: Endpoint): Promise<Server> =>
  new Promise((resolve, reject) => {
    // Paused: a connection the daemon takes is handed on unread.
    const server = createServer({ pauseOnConnect: true });
    server.once('error', reject);
    server.listen(endpoint.port, endpoint.host, () => {
      server.off('error', reject);
      resolve(server);
    });
  });

const addressOf = (server: Server | undefined): Endpoint | null => {
  if (server === undefined) return null;
  const address = server.address() as AddressInfo;
  return { host: address.address, port: address.port };
};

export async function startSessionProcesses(options: SessionProcessOptions): Promise<SmtpIngress> {
  const { log } = options;
  const listeners = new Map<SmtpListener, Server>();
  const processes: SessionProcess[] = [];
  const tls = tlsReloads(options);
  let closing = false;
  let turn = 0;

  const spawn = (index: number): SessionProcess => {
    const made = new SessionProcess(options, index, listeners, tls.reloaded);
    processes[index] = made;
    void made.exited.then(() => {
      if (closing || processes[index] !== made) return;
      log.warn(
        { process: index, code: made.child.exitCode, signal: made.child.signalCode },
        'smtp session process exited; starting another',
      );
      options.ports.telemetry?.sessionProcessLost();
      setTimeout(() => closing || spawn(index), respawnPause(made.startedAt)).unref();
    });
    return made;
  };

  /** A connection the daemon took: to the next live process, in turn. */
  const handOn = (listener: SmtpListener, socket: Socket): void => {
    for (let tries = 0; tries < processes.length; tries += 1) {
      const candidate = processes[turn++ % processes.length];
      if (candidate?.alive === true) return candidate.send({ t: 'socket', listener }, socket);
    }
    socket.destroy();
  };

  const close = async (deadlineMs: number): Promise<void> => {
    closing = true;
    for (const server of listeners.values()) server.close();
    for (const running of processes) running.send({ t: 'close', deadlineMs });
    const exited = Promise.all(processes.map((running) => running.exited));
    const timer = setTimeout(() => processes.forEach((running) => running.child.kill('SIGKILL')), deadlineMs + 2000);
    await exited;
    clearTimeout(timer);
  };

  try {
    for (const [listener, endpoint] of [
      ['plain', options.listen],
      ['implicit-tls', options.tlsListen],
    ] as const) {
      if (endpoint === null) continue;
      const server = await listenOn(endpoint);
      server.on('connection', (socket: Socket) => handOn(listener, socket));
      listeners.set(listener, server);
    }
    for (let index = 0; index < options.processes; index += 1) spawn(index);
    await Promise.all(processes.map((running) => running.ready));
  } catch (error) {
    await close(0);
    throw error;
  }
  log.info({ processes: options.processes }, 'smtp sessions run in processes of their own');
  return {
    plain: addressOf(listeners.get('plain')),
    implicitTls: addressOf(listeners.get('implicit-tls')),
    reloadTls: () => tls.reload(processes),
    close,
    processes: () => ({
      configured: options.processes,
      running: processes.filter((running) => running.alive).length,
    }),
  };
}

/**
 * SIGHUP's certificate reload over the processes: read here first, so that a bad pair is
 * reported and no process is told; logged once every process has read it again.
 */
function tlsReloads(options: SessionProcessOptions) {
  let round: { waiting: number; failed: number } | null = null;
  const { log, tls } = options;
  return {
    reload(processes: readonly SessionProcess[]): boolean {
      if (tls === null) return false;
      try {
        readTls(tls);
      } catch (error) {
        log.error({ err: error, cert: tls.certFile }, 'smtp tls certificate not reloaded: keeping the current one');
        return false;
      }
      const live = processes.filter((running) => running.alive);
      round = { waiting: live.length, failed: 0 };
      for (const running of live) running.send({ t: 'reload-tls' });
      return true;
    },
    /** A process read the pair again (or kept its own: it logged why). */
    reloaded(ok: boolean): void {
      if (round === null) return;
      if (!ok) round.failed += 1;
      round.waiting -= 1;
      if (round.waiting > 0) return;
      if (round.failed === 0) log.info({ cert: tls?.certFile }, 'smtp tls certificate reloaded');
      else log.error({ cert: tls?.certFile, processes: round.failed }, 'smtp tls certificate not reloaded everywhere');
      round = null;
    },
  };
}
