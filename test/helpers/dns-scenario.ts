/**
 * A daemon whose DNS is a real server of the test's (dnsmasq on a loopback port, `dns.servers`
 * pointing at it), a real sink as tenant `acme`'s default account `main` (its relay, 127.0.0.1, is
 * what SPF must authorise). Registers their teardown in `cleanups`, run after each test.
 */
import { startDnsServer, type DnsPeer, type DnsRecords, type TxtRecord } from '../peers/dns-server.js';
import { startSmtpSink, type SmtpSink } from '../peers/smtp-sink.js';
import { startQueueFixture, type QueueFixture } from './queue-fixture.js';

export interface DnsScenario {
  dns: DnsPeer;
  sink: SmtpSink;
  fx: QueueFixture;
  /** Tenant `acme`'s API key. */
  key: string;
}

export async function startDnsScenario(
  cleanups: Array<() => Promise<void>>,
  records: readonly TxtRecord[] | DnsRecords,
): Promise<DnsScenario> {
  const dns = await startDnsServer(records);
  cleanups.push(() => dns.stop());
  const sink = await startSmtpSink();
  cleanups.push(() => sink.stop());
  const fx = await startQueueFixture({ extraToml: `[dns]\nservers = ["127.0.0.1:${dns.port}"]\n` });
  cleanups.push(async () => {
    await fx.stop();
    fx.t.cleanup();
  });
  const key = await fx.createTenant('acme');
  await fx.createAccount('acme', 'main', sink, { is_default: true });
  return { dns, sink, fx, key };
}
