/**
 * A real DNS server for tests: Debian's dnsmasq on 127.0.0.1 and a random port, answering the TXT
 * records it was started with (DKIM keys, SPF, DMARC) and nothing else (no upstream, no hosts
 * file). `restart` serves another set of records on the same port (a key rotation's publishing).
 * `resolver` asks it, as a receiver's verifier would.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { Resolver } from 'node:dns/promises';
import { existsSync } from 'node:fs';
import { closedPort } from '../helpers/cli-process.js';

export interface TxtRecord {
  name: string;
  value: string;
}

/** What the server answers: TXT records, and MX records (a domain's mail hosts). */
export interface DnsRecords {
  txt: readonly TxtRecord[];
  mx?: ReadonlyArray<{ name: string; host: string; preference: number }>;
}

export interface DnsPeer {
  port: number;
  /** A resolver asking only this server. */
  resolver: Resolver;
  /** Serves these records from now on, on the same port. */
  restart(records: readonly TxtRecord[] | DnsRecords): Promise<void>;
  stop(): Promise<void>;
}

const BINARY = existsSync('/usr/sbin/dnsmasq') ? '/usr/sbin/dnsmasq' : 'dnsmasq';

/**
 * A TXT value as DNS carries it: strings of at most 255 characters (RFC 1035 §3.3.14), each an
 * argument of its own after a comma (spawned without a shell: quotes would be part of the value).
 * A value with a comma cannot be served this way; DKIM, SPF and DMARC records have none.
 */
const txtArgument = (record: TxtRecord): string => {
  if (record.value.includes(',')) throw new Error(`a TXT value with a comma: ${record.value}`);
  const chunks = record.value.match(/.{1,255}/g) ?? [''];
  return `--txt-record=${record.name},${chunks.join(',')}`;
};

/** The zones of the served names (their last two labels), `example.com` always among them. */
const zonesOf = (served: DnsRecords): string[] => [
  ...new Set([
    'example.com',
    ...[...served.txt, ...(served.mx ?? [])].map((record) => record.name.split('.').slice(-2).join('.')),
  ]),
];

const recordsOf = (given: readonly TxtRecord[] | DnsRecords): DnsRecords =>
  'txt' in given ? given : { txt: given as readonly TxtRecord[] };

export async function startDnsServer(given: readonly TxtRecord[] | DnsRecords): Promise<DnsPeer> {
  const records = recordsOf(given);
  const port = await closedPort();
  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers([`127.0.0.1:${port}`]);
  let child: ChildProcess | null = null;

  const start = async (served: DnsRecords): Promise<void> => {
    let stderr = '';
    const started = spawn(
      BINARY,
      [
        '--keep-in-foreground',
        '--conf-file=/dev/null',
        '--no-resolv',
        '--no-hosts',
        '--no-poll',
        '--bind-interfaces',
        '--listen-address=127.0.0.1',
        `--port=${port}`,
        '--pid-file=',
        '--log-facility=-',
        // Authoritative for the zones it serves: a name there without a record is NXDOMAIN, not REFUSED.
        `--local=/${zonesOf(served).join('/')}/`,
        ...served.txt.map(txtArgument),
        ...(served.mx ?? []).map((mx) => `--mx-host=${mx.name},${mx.host},${mx.preference}`),
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    started.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child = started;
    // Ready once it answers (a record it serves, or a name it does not: NXDOMAIN is an answer too).
    const probe = served.txt[0]?.name ?? 'ready.invalid';
    const deadline = Date.now() + 10_000;
    for (;;) {
      if (started.exitCode !== null) throw new Error(`dnsmasq exited ${started.exitCode}: ${stderr}`);
      try {
        await resolver.resolveTxt(probe);
        return;
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOTFOUND' || (error as { code?: string }).code === 'ENODATA')
          return;
      }
      if (Date.now() > deadline) throw new Error(`dnsmasq did not answer on port ${port}: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  };

  const stop = async (): Promise<void> => {
    const running = child;
    child = null;
    if (running === null || running.exitCode !== null) return;
    running.kill('SIGTERM');
    await once(running, 'exit');
  };

  await start(records);
  return {
    port,
    resolver,
    async restart(next) {
      await stop();
      await start(recordsOf(next));
    },
    stop,
  };
}
