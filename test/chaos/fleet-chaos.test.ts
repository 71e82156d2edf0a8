/**
 * Issue 25's chaos run: three fleet nodes on a three-server cluster take HTTP
 * and SMTP mail on whichever node is up while nodes are SIGKILLed at random
 * (half of them with their data directory deleted), restarted before or after
 * a survivor adopted their spool, and one nats server is SIGKILLed and
 * restarted. Then every promise is checked: each acknowledged message reached
 * the relay, a copy more than one only of a send in flight at a kill, nothing
 * waits anywhere, the spool holds nothing, no node logged a fatal error.
 *
 * CI-sized; FLEET_CHAOS_KILLS=20 for a longer local run, FLEET_CHAOS_SEED to
 * replay a plan (the kills' choices; timings stay real).
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { afterAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, provisionTenant, startFleet, type TestFleet } from '../helpers/fleet.js';
import { copiesById } from '../helpers/outage-checks.js';
import { seededRng } from '../helpers/seeded-rng.js';
import { openSubmission } from '../helpers/smtp-submit.js';
import { api } from '../helpers/test-daemon.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { eventually } from '../helpers/eventually.js';

const KILLS = Number(process.env.FLEET_CHAOS_KILLS ?? 3);
const SEED = Number(process.env.FLEET_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
const TENANT = 'acme';
const ADOPT_AFTER_SECONDS = 3;
/**
 * A copy more than one is a send whose end the cluster had not recorded when its node died: in
 * flight, or finished this shortly before (a finished entry goes within 100 ms), or finished
 * while the cluster could not record anything (a nats server killed shortly before: its streams
 * electing new leaders).
 */
const IN_FLIGHT_BEFORE_MS = 1000;
const IN_FLIGHT_AFTER_MS = 500;
const ELECTION_MS = 30_000;

let fleet: TestFleet | undefined;
let sink: SmtpSink | undefined;
afterAll(async () => {
  await fleet?.destroy();
  await sink?.stop();
});

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mailIdOf = (raw: Buffer): string | undefined =>
  /^X-Genro-Mail-ID: (.+)$/m.exec(raw.toString('utf8'))?.[1]?.trim();

/** `work`, or an error naming `what` (with what `describe` says of the state then) once it takes longer than `timeoutMs`. */
async function bounded<T>(work: Promise<T>, what: string, timeoutMs: number, describe: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took over ${timeoutMs} ms\n${describe()}`)), timeoutMs);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Each check asks the nodes over HTTP: every 100 ms. */
const until = (check: () => Promise<boolean> | boolean, what: string, timeoutMs: number): Promise<void> =>
  eventually(check, what, timeoutMs, 100);

describe('fleet chaos: nodes and a nats server killed at random under load', () => {
  it(
    `keeps every acknowledged message across ${KILLS} node kills and one nats server kill (seed ${SEED})`,
    async () => {
      console.log(`fleet chaos: seed ${SEED} (replay with FLEET_CHAOS_SEED=${SEED}), ${KILLS} node kills`);
      const rng = seededRng(SEED);
      sink = await startSmtpSink({ answerDelayMs: 20 });
      fleet = await startFleet(['n1', 'n2', 'n3'], {
        MAILPROXY_FLEET_ADOPT_AFTER_SECONDS: String(ADOPT_AFTER_SECONDS),
      });
      const theFleet = fleet;
      const key = await provisionTenant(theFleet, TENANT, { host: '127.0.0.1', port: sink.port, tls_mode: 'none' });
      const nodeOf = (id: string) => theFleet.nodes.find((node) => node.id === id)!;

      // The load: each worker sends to a node that is up, picked at random.
      const live = new Set(['n1', 'n2', 'n3']);
      const acknowledged = new Map<string, string>();
      let stopping = false;
      let sequence = 0;
      const pick = () => [...live][Math.floor(Math.random() * live.size)];
      /** What each worker waits on now: a load that does not stop names the request, its node and since when. */
      const doing = new Map<string, { node: string; what: string; since: number }>();
      const track = async <T>(worker: string, node: string, what: string, work: Promise<T>): Promise<T> => {
        doing.set(worker, { node, what, since: Date.now() });
        try {
          return await work;
        } finally {
          doing.delete(worker);
        }
      };
      const waiting = () =>
        [...doing]
          .map(
            ([worker, entry]) =>
              `${worker} waits on ${entry.node} for ${entry.what} since ${Date.now() - entry.since} ms ago`,
          )
          .join('\n');
      const httpWorker = async (worker: string) => {
        while (!stopping) {
          const id = pick();
          if (id !== undefined) {
            const ids = Array.from({ length: 5 }, () => `h-${(sequence += 1)}`);
            const messages = ids.map((messageId) => ({
              id: messageId,
              from: 'app@acme.example',
              to: `${messageId}@example.net`,
              subject: messageId,
              body: 'chaos',
            }));
            const answer = await track(
              worker,
              id,
              'POST /add-messages',
              api(nodeOf(id).url, 'POST', '/add-messages', { token: key, body: { messages } }).catch(() => null),
            );
            if (answer?.status === 200) {
              const rejected = new Set((answer.body.rejected as Array<{ id: string }>).map((entry) => entry.id));
              for (const messageId of ids) if (!rejected.has(messageId)) acknowledged.set(messageId, id);
            }
          }
          await pause(50);
        }
      };
      const smtpWorker = async (worker: string) => {
        while (!stopping) {
          const id = pick();
          if (id !== undefined) {
            const messageId = `s-${(sequence += 1)}`;
            const session = await track(
              worker,
              id,
              'the SMTP greeting',
              openSubmission(nodeOf(id).smtpPort).catch(() => null),
            );
            if (session !== null) {
              try {
                await track(worker, id, 'the SMTP login', session.login(TENANT, key));
                await track(
                  worker,
                  id,
                  `the SMTP send of ${messageId}`,
                  session.send(
                    { from: 'app@acme.example', to: [`${messageId}@example.net`] },
                    `From: app@acme.example\r\nTo: ${messageId}@example.net\r\nSubject: ${messageId}\r\nX-Genro-Mail-ID: ${messageId}\r\n\r\nchaos\r\n`,
                  ),
                );
                acknowledged.set(messageId, id);
              } catch {
                // Refused or cut by a kill: no promise was made.
              } finally {
                session.close();
              }
            }
          }
          await pause(50);
        }
      };
      const workers = [httpWorker('http-1'), httpWorker('http-2'), smtpWorker('smtp')];

      const kills: Array<{ node: string; at: number; wiped: boolean; back: 'before adoption' | 'after adoption' }> = [];
      let natsKilledAt: number | null = null;
      const adoptionsOf = (node: string, instance: string) =>
        theFleet.nodes.some((survivor) =>
          survivor.daemon.entries.some(
            (entry) => entry.msg === 'lost node’s spool adopted' && entry.node === node && entry.instance === instance,
          ),
        );
      try {
        for (let round = 0; round < KILLS; round += 1) {
          await pause(rng.int(1000, 2500));
          if (round === Math.floor(KILLS / 2)) {
            const server = rng.pick(theFleet.cluster.servers);
            console.log(`fleet chaos: nats server ${server.name} killed`);
            natsKilledAt = Date.now();
            await server.kill();
            await pause(2000);
            server.start();
          }
          const victim = rng.pick([...live].sort());
          const node = nodeOf(victim);
          const identity = JSON.parse(readFileSync(join(node.cwd, 'data', 'fleet-node.json'), 'utf8')) as {
            instance: string;
          };
          const wiped = rng.next() < 0.5;
          const back = rng.next() < 0.5 ? 'before adoption' : 'after adoption';
          live.delete(victim);
          node.daemon.child.kill('SIGKILL');
          await node.daemon.exited;
          kills.push({ node: victim, at: Date.now(), wiped, back });
          if (wiped) rmSync(node.cwd, { recursive: true, force: true });
          console.log(`fleet chaos: ${victim} killed${wiped ? ' and its disk deleted' : ''}; back ${back}`);
          if (back === 'after adoption')
            await until(() => adoptionsOf(victim, identity.instance), `a survivor to adopt ${victim}`, 60_000);
          else await pause(rng.int(0, 1000));
          // A start that never listens would otherwise only show as the test's timeout: its last log lines say where it waits.
          await bounded(theFleet.startNode(victim, wiped ? {} : { cwd: node.cwd }), `${victim}'s restart`, 90_000, () =>
            (theFleet.running.at(-1)?.entries ?? [])
              .slice(-30)
              .map((entry) => JSON.stringify(entry))
              .join('\n'),
          );
          live.add(victim);
        }
        await pause(1000);
      } finally {
        stopping = true;
        await bounded(Promise.all(workers), 'the load to stop', 60_000, () =>
          [
            waiting(),
            ...[...doing.values()].flatMap((entry) =>
              nodeOf(entry.node)
                .daemon.entries.slice(-20)
                .map((line) => `${entry.node}: ${JSON.stringify(line)}`),
            ),
          ].join('\n'),
        );
      }

      // Settled: nothing waits on any node, and the spool holds nothing.
      for (const id of ['n1', 'n2', 'n3'])
        await until(
          async () => (await api(nodeOf(id).url, 'GET', '/status', { token: FLEET_TOKEN })).body.queue.waiting === 0,
          `${id} to send all`,
          120_000,
        );
      const nc = await connect({ servers: theFleet.cluster.urls.split(',') });
      try {
        await until(
          async () => (await (await jetstreamManager(nc)).streams.info('MAILPROXY_FLEET_SPOOL')).state.messages === 0,
          'the spool to empty',
          30_000,
        );
      } finally {
        await nc.close();
      }

      const copies = copiesById(sink.messages);
      const ids = [...acknowledged.keys()];
      const firstSeen = new Map<string, number>();
      for (const message of sink.messages) {
        const id = mailIdOf(message.raw);
        if (id !== undefined && !firstSeen.has(id)) firstSeen.set(id, message.receivedAt);
      }
      const unrecordedSince = (killAt: number): number =>
        natsKilledAt !== null && natsKilledAt <= killAt && killAt - natsKilledAt <= ELECTION_MS
          ? natsKilledAt - IN_FLIGHT_BEFORE_MS
          : killAt - IN_FLIGHT_BEFORE_MS;
      const inFlightAtAKill = (id: string) =>
        kills.some(
          (kill) =>
            (firstSeen.get(id) ?? 0) >= unrecordedSince(kill.at) &&
            (firstSeen.get(id) ?? 0) <= kill.at + IN_FLIGHT_AFTER_MS,
        );
      const lost = ids.filter((id) => !copies.has(id));
      const twice = ids.filter((id) => (copies.get(id) ?? 0) > 1);
      console.log(
        `fleet chaos: ${kills.length} node kills (${kills.filter((kill) => kill.wiped).length} with the disk), ${ids.length} acknowledged, ` +
          `${sink.messages.length} copies at the relay, ${twice.length} sent twice, ${lost.length} lost`,
      );
      // A duplicate outside the kills' windows: when each copy came, against the plan.
      const started = kills[0]?.at ?? 0;
      for (const id of twice.filter((twiceId) => !inFlightAtAKill(twiceId)))
        console.log(
          `fleet chaos: ${id} acknowledged by ${acknowledged.get(id)}, copies at ` +
            sink.messages
              .filter((message) => mailIdOf(message.raw) === id)
              .map((message) => message.receivedAt - started)
              .join(', ') +
            ` ms; kills at ${kills.map((kill) => `${kill.node} ${kill.at - started}`).join(', ')} ms, nats server at ${natsKilledAt === null ? '-' : natsKilledAt - started} ms`,
        );
      // And what the survivors adopted, when: a duplicate outside the windows comes from one of these.
      if (twice.some((id) => !inFlightAtAKill(id)))
        theFleet.running.forEach((daemon, life) => {
          for (const entry of daemon.entries.filter((line) => /adopt|given up/.test(String(line.msg))))
            console.log(
              `fleet chaos: daemon ${life} at ${Date.parse(String(entry.time)) - started} ms: ${String(entry.msg)} ` +
                JSON.stringify({
                  node: entry.node,
                  instance: entry.instance,
                  adopted: entry.adopted,
                  surrendered: entry.surrendered,
                }),
            );
        });
      expect(ids.length, 'the load made promises').toBeGreaterThan(KILLS * 20);
      expect(lost, `acknowledged and never delivered (seed ${SEED})`).toEqual([]);
      expect(
        twice.filter((id) => !inFlightAtAKill(id)),
        `sent twice, not in flight at a kill (seed ${SEED})`,
      ).toEqual([]);
      const fatal = theFleet.nodes.flatMap((node) => node.daemon.entries.filter((entry) => entry.level === 'fatal'));
      expect(fatal, 'fatal log lines').toEqual([]);
    },
    180_000 + KILLS * 40_000,
  );
});
