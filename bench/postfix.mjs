// Postfix as a bench peer: Debian's `postfix` package, installed by scripts/bench-setup.sh
// when missing, run as a private instance (its own config, queue and data directories under the
// bench's temporary directory, its own port; the system instance is never touched), relaying to a
// sink; Postfix's own `smtp-sink` as that sink (its running counter read from stdout), and its
// `smtp-source` as the load generator.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { children, root } from './harness.mjs';

const SBIN = '/usr/sbin';

/** Installs Postfix (its binaries only; the system instance stays stopped and unconfigured) when missing. */
export function ensurePostfix() {
  if (existsSync(join(SBIN, 'postfix')) && existsSync(join(SBIN, 'smtp-source'))) return;
  execFileSync('bash', [join(root, 'scripts/bench-setup.sh')], { stdio: 'inherit' });
}

/** A free TCP port on loopback. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * Postfix's smtp-sink on a free port, counting messages (`-c`: `sess=N quit=N mesg=N` after each
 * event). `waitFor(n)` resolves with the time the n-th message ended, after `since` counts.
 */
export async function startPostfixSink() {
  const port = await freePort();
  const child = spawn(join(SBIN, 'smtp-sink'), ['-u', 'nobody', '-c', `127.0.0.1:${port}`, '1024'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(child);
  let messages = 0;
  let lastAt = 0;
  const waiters = new Set();
  let buffered = '';
  child.stdout.setEncoding('latin1').on('data', (text) => {
    buffered += text;
    const updates = buffered.split('\r');
    buffered = updates.pop() ?? '';
    for (const update of updates) {
      const count = Number(/mesg=(\d+)/.exec(update)?.[1] ?? NaN);
      if (Number.isFinite(count) && count > messages) {
        messages = count;
        lastAt = Date.now();
      }
    }
    for (const waiter of waiters) waiter();
  });
  let stderr = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  await waitForPort(port, () => stderr);
  return {
    port,
    count: () => messages,
    /** Resolves with the time the sink had `target` messages in all. */
    waitFor(target, timeoutMs) {
      return new Promise((resolve, reject) => {
        const check = () => {
          if (messages < target) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(lastAt);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`smtp-sink had ${messages} of ${target} messages after ${timeoutMs} ms`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    stop() {
      child.kill('SIGTERM');
      children.delete(child);
    },
  };
}

async function waitForPort(port, context) {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const open = await new Promise((resolve) => {
      const socket = connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}: ${context()}`);
}

/** master.cf with smtpd on our port only, every service out of chroot (a private instance has no chroot tree). */
function masterCf(port) {
  return readFileSync('/etc/postfix/master.cf', 'utf8')
    .split('\n')
    .map((line) => {
      if (line.startsWith('#') || /^\s/.test(line) || line.trim() === '') return line;
      const fields = line.split(/\s+/);
      if (fields.length < 8) return line;
      if (fields[0] === 'smtp' && fields[1] === 'inet') fields[0] = `127.0.0.1:${port}`;
      fields[4] = 'n';
      return fields.join(' ');
    })
    .join('\n');
}

/**
 * A private Postfix relaying everything from loopback to `relayPort` with `concurrency` connections,
 * its queue on the same filesystem as the daemon's database (the bench's temporary directory).
 */
export async function startPrivatePostfix(relayPort, concurrency) {
  const dir = mkdtempSync(join(tmpdir(), 'mailproxy-bench-postfix-'));
  // Postfix's own processes (the postfix user) open files under it: mkdtemp's 0700 would shut them out.
  chmodSync(dir, 0o755);
  const etc = join(dir, 'etc');
  mkdirSync(etc);
  const port = await freePort();
  const settings = {
    compatibility_level: '3.6',
    // The package's own files (postfix-files, which its integrity check reads), not this instance's.
    meta_directory: '/etc/postfix',
    queue_directory: join(dir, 'queue'),
    data_directory: join(dir, 'data'),
    mail_owner: 'postfix',
    setgid_group: 'postdrop',
    inet_interfaces: '127.0.0.1',
    inet_protocols: 'ipv4',
    myhostname: 'postfix-bench.localdomain',
    mydestination: '',
    local_recipient_maps: '',
    alias_maps: '',
    alias_database: '',
    mynetworks: '127.0.0.0/8',
    relayhost: `[127.0.0.1]:${relayPort}`,
    smtpd_relay_restrictions: 'permit_mynetworks, reject',
    smtpd_recipient_restrictions: 'permit_mynetworks, reject',
    default_destination_concurrency_limit: String(concurrency),
    smtp_destination_concurrency_limit: String(concurrency),
    initial_destination_concurrency: String(concurrency),
    default_process_limit: '200',
    smtpd_client_connection_count_limit: '0',
    smtp_tls_security_level: 'none',
    smtpd_tls_security_level: 'none',
    smtp_dns_support_level: 'disabled',
    biff: 'no',
    // Its log goes to a file of its own (postlogd), not the machine's syslog.
    maillog_file: join(dir, 'maillog'),
    maillog_file_prefixes: dir,
  };
  writeFileSync(
    join(etc, 'main.cf'),
    `${Object.entries(settings)
      .map(([key, value]) => `${key} = ${value}`)
      .join('\n')}\n`,
  );
  writeFileSync(join(etc, 'master.cf'), masterCf(port));
  // The queue directory is root's (postfix-script makes its subdirectories); the data directory is Postfix's own.
  mkdirSync(settings.queue_directory);
  mkdirSync(settings.data_directory);
  execFileSync('chown', ['postfix:postfix', settings.data_directory]);
  const postfix = (command) => execFileSync(join(SBIN, 'postfix'), ['-c', etc, command], { stdio: 'pipe' });
  try {
    postfix('start');
  } catch (error) {
    const log = existsSync(settings.maillog_file) ? readFileSync(settings.maillog_file, 'utf8').slice(-2000) : '';
    if (process.env.BENCH_KEEP_POSTFIX === undefined) rmSync(dir, { recursive: true, force: true });
    throw new Error(`the private Postfix did not start: ${log || error.message}`);
  }
  await waitForPort(port, () =>
    existsSync(join(dir, 'maillog')) ? readFileSync(join(dir, 'maillog'), 'utf8').slice(-2000) : 'no maillog',
  );
  return {
    port,
    stop() {
      try {
        postfix('stop');
      } catch {
        // Already gone: the directory goes all the same.
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * Postfix's smtp-source: `count` messages of `bytes` from `sessions` parallel sessions, each message
 * on a new connection unless `keepAlive` (`-d`). Resolves with the seconds it took.
 */
export function smtpSource(port, { sessions, count, bytes, keepAlive }) {
  const args = [
    ...(keepAlive ? ['-d'] : []),
    '-s',
    String(sessions),
    '-m',
    String(count),
    '-l',
    String(bytes),
    '-f',
    'bench@example.com',
    '-t',
    'sink@example.net',
  ];
  return new Promise((resolve, reject) => {
    const startedAt = Date.now();
    const child = spawn(join(SBIN, 'smtp-source'), [...args, `127.0.0.1:${port}`], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.add(child);
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('exit', (code) => {
      children.delete(child);
      if (code === 0) resolve({ seconds: (Date.now() - startedAt) / 1000, startedAt });
      else reject(new Error(`smtp-source exited ${code}: ${stderr.slice(-500)}`));
    });
  });
}
