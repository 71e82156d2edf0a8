/**
 * DKIM key rotation with two selectors against a real DNS server (dnsmasq) and a real sink: every
 * message relayed before, during and after the rotation verifies against what the DNS publishes
 * at that moment. The daemon's own check (the `domainChecks` loop) warns of a failing domain in
 * GET /status, switches to the new key once it sees it published, and drops the old one when its
 * retirement is over.
 */
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterEach, describe, expect, it } from 'vitest';
import { startDnsScenario } from '../helpers/dns-scenario.js';
import { message } from '../helpers/queue-fixture.js';
import type { DnsPeer, TxtRecord } from '../peers/dns-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const HOUR = 3_600_000;
const BASE: TxtRecord[] = [
  { name: 'example.com', value: 'v=spf1 ip4:127.0.0.1 -all' },
  { name: '_dmarc.example.com', value: 'v=DMARC1; p=quarantine' },
];

/** Each signature's selector and what a receiver's verifier concludes of it, asking `dns`. */
async function verdicts(raw: Buffer, dns: DnsPeer): Promise<string[]> {
  const resolver = async (name: string, type: string) => (type === 'TXT' ? dns.resolver.resolveTxt(name) : []);
  const verified = await dkimVerify(raw, { resolver } as unknown as Parameters<typeof dkimVerify>[1]);
  return verified.results.map((result) => `${result.selector ?? ''}:${result.status.result}`);
}

/** The console's overview page, signed in with `token`. */
async function overviewOf(url: string, token: string): Promise<string> {
  const login = await fetch(`${url}/ui/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    redirect: 'manual',
  });
  const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  return (await fetch(`${url}/ui/overview`, { headers: { cookie } })).text();
}

describe('DKIM key rotation', () => {
  it('never leaves a message that fails verification: old key until the new one is seen published, then the new one', async () => {
    const { dns, sink, fx, key } = await startDnsScenario(cleanups, BASE);
    const added = await fx.admin('POST', '/domains', { tenant_id: 'acme', domain: 'example.com', selector: 'mp1' });
    expect(added.status, added.text).toBe(201);
    const mp1 = added.body.domain.dns_records[0] as TxtRecord;

    // Not published yet: the daemon's own check says so in /status.
    await fx.t.daemon.domainChecks.tick();
    const warned = (await fx.admin('GET', '/status')).body.domains as Array<Record<string, unknown>>;
    expect(warned).toEqual([expect.objectContaining({ tenant_id: 'acme', domain: 'example.com', failing: ['dkim'] })]);
    // And the console's overview, first on the page.
    expect(await overviewOf(fx.t.url, fx.t.adminToken)).toContain('Sending domains failing their DNS checks');
    await dns.restart({ txt: [...BASE, mp1], mx: [{ name: 'example.com', host: 'mx.example.com', preference: 10 }] });
    await fx.t.daemon.domainChecks.tick();
    expect((await fx.admin('GET', '/status')).body.domains).toEqual([]);
    expect(await overviewOf(fx.t.url, fx.t.adminToken)).not.toContain('Sending domains failing their DNS checks');

    const relayed = async (id: string): Promise<Buffer> => {
      await fx.post(key, [message(id, { from: 'billing@example.com' })]);
      await fx.settle();
      return sink.messages.find((received) => received.raw.includes(`X-Genro-Mail-ID: ${id}`))!.raw;
    };
    expect(await verdicts(await relayed('before'), dns)).toEqual(['mp1:pass']);

    // The rotation begins: the new key is pending, and mail is still signed with the old one.
    const rotating = await fx.admin('POST', '/domains/example.com/rotate?tenant_id=acme', {
      selector: 'mp2',
      retire_after_seconds: 3600,
    });
    expect(rotating.status, rotating.text).toBe(200);
    expect(rotating.body.domain.keys).toEqual([
      { algorithm: 'rsa-sha256', selector: 'mp1', state: 'active', retire_ts: null },
      { algorithm: 'rsa-sha256', selector: 'mp2', state: 'pending', retire_ts: null },
    ]);
    const mp2 = (rotating.body.domain.dns_records as TxtRecord[]).find((record) => record.name.startsWith('mp2.'))!;
    await fx.t.daemon.domainChecks.tick(); // mp2 not published: nothing changes
    const during = await relayed('during');
    expect(await verdicts(during, dns)).toEqual(['mp1:pass']);

    // Published: the next check switches to it; the old key retires, still published.
    await dns.restart([...BASE, mp1, mp2]);
    await fx.t.daemon.domainChecks.tick();
    const switched = await fx.admin('GET', '/domains/example.com?tenant_id=acme');
    expect(switched.body.domain.keys).toEqual([
      expect.objectContaining({ selector: 'mp1', state: 'retiring', retire_ts: expect.any(Number) }),
      expect.objectContaining({ selector: 'mp2', state: 'active' }),
    ]);
    expect(await verdicts(await relayed('after'), dns)).toEqual(['mp2:pass']);
    expect(await verdicts(during, dns)).toEqual(['mp1:pass']); // mail signed before still verifies

    // The retirement is over: the old key goes, and its record may go with it.
    fx.clock.advance(HOUR + 1000);
    await fx.t.daemon.domainChecks.tick();
    const retired = await fx.admin('GET', '/domains/example.com?tenant_id=acme');
    expect(retired.body.domain.keys.map((k: { selector: string }) => k.selector)).toEqual(['mp2']);
    await dns.restart([...BASE, mp2]);
    expect(await verdicts(await relayed('later'), dns)).toEqual(['mp2:pass']);
  });
});
