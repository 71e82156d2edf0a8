/**
 * DKIM signing on real peers: a tenant adds its sending domain (the daemon makes an RSA and an
 * Ed25519 key and answers the records to publish), the records are served by a real DNS server
 * (dnsmasq on a loopback port), and mail relayed to a real sink is verified as a receiver would:
 * mailauth's verifier, asking that DNS server. Mail from another domain goes unsigned; a message
 * changed after signing fails; no private key ever leaves the daemon.
 */
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import { afterEach, describe, expect, it } from 'vitest';
import { message, startSinkScenario } from '../helpers/queue-fixture.js';
import { api } from '../helpers/test-daemon.js';
import { startDnsServer, type DnsPeer, type TxtRecord } from '../peers/dns-server.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** What a receiver's verifier concludes of each signature, asking `dns`. */
async function verdicts(raw: Buffer, dns: DnsPeer): Promise<Array<{ algorithm: string; result: string }>> {
  // mailauth asks its resolver as node's dns does; only TXT records are served here.
  const resolver = async (name: string, type: string) => (type === 'TXT' ? dns.resolver.resolveTxt(name) : []);
  const verified = await dkimVerify(raw, { resolver } as unknown as Parameters<typeof dkimVerify>[1]);
  return verified.results.map((result) => ({
    algorithm: String((result as unknown as { algo?: string }).algo ?? ''),
    result: result.status.result,
  }));
}

describe('DKIM signing', () => {
  it('signs mail from a sending domain with RSA and Ed25519, verified against the published records', async () => {
    const { fx, sink, key } = await startSinkScenario(cleanups);
    const added = await fx.admin('POST', '/domains', {
      tenant_id: 'acme',
      domain: 'Example.com',
      selector: 'mp1',
      ed25519: true,
    });
    expect(added.status, added.text).toBe(201);
    expect(added.body.domain).toMatchObject({
      domain: 'example.com',
      keys: [
        { algorithm: 'rsa-sha256', selector: 'mp1' },
        { algorithm: 'ed25519-sha256', selector: 'mp1-ed25519' },
      ],
    });
    const records = added.body.domain.dns_records as Array<TxtRecord & { type: string }>;
    expect(records.map((record) => record.name)).toEqual([
      'mp1._domainkey.example.com',
      'mp1-ed25519._domainkey.example.com',
    ]);
    expect(records[0]!.value).toMatch(/^v=DKIM1; k=rsa; p=[A-Za-z0-9+/=]{300,}$/);
    expect(records[1]!.value).toMatch(/^v=DKIM1; k=ed25519; p=[A-Za-z0-9+/]{43}=$/);
    // The tenant's own key reads its domains; no answer carries a private key.
    const listed = await api(fx.t.url, 'GET', '/domains', { token: key });
    expect(listed.status).toBe(200);
    expect(listed.body.domains).toHaveLength(1);
    for (const answer of [added.text, listed.text]) expect(answer).not.toMatch(/PRIVATE KEY/);

    const dns = await startDnsServer(records);
    cleanups.push(() => dns.stop());
    const posted = await fx.post(key, [
      message('signed', { from: 'Billing <billing@example.com>', to: 'rcpt@example.net' }),
      message('unsigned', { from: 'app@other.example', to: 'rcpt@example.net' }),
    ]);
    expect(posted.status, posted.text).toBe(200);
    await fx.settle();
    expect(sink.messages).toHaveLength(2);
    const byId = (id: string) => sink.messages.find((received) => received.raw.includes(`X-Genro-Mail-ID: ${id}`))!.raw;

    const signed = byId('signed');
    expect(signed.toString('latin1').startsWith('DKIM-Signature: ')).toBe(true);
    expect(await verdicts(signed, dns)).toEqual([
      { algorithm: 'rsa-sha256', result: 'pass' },
      { algorithm: 'ed25519-sha256', result: 'pass' },
    ]);
    // A verifier that can fail: the same message with its subject changed after signing.
    const tampered = Buffer.from(
      signed.toString('latin1').replace('Subject: subject signed', 'Subject: changed'),
      'latin1',
    );
    expect((await verdicts(tampered, dns)).map((verdict) => verdict.result)).toEqual(['fail', 'fail']);

    expect(byId('unsigned').toString('latin1')).not.toMatch(/DKIM-Signature/i);
    expect(fx.t.logLines.filter((line) => line.includes('PRIVATE KEY'))).toEqual([]);

    // Removed: its mail is no longer signed.
    expect((await fx.admin('DELETE', '/domains/example.com?tenant_id=acme')).status).toBe(200);
    await fx.post(key, [message('after', { from: 'billing@example.com' })]);
    await fx.settle();
    expect(byId('after').toString('latin1')).not.toMatch(/DKIM-Signature/i);
  });

  it('refuses a bad domain or selector, a domain added twice, and another tenant', async () => {
    const { fx, key } = await startSinkScenario(cleanups);
    const add = (body: Record<string, unknown>) => fx.admin('POST', '/domains', { tenant_id: 'acme', ...body });
    expect((await add({ domain: 'not a domain', selector: 'mp1' })).status).toBe(400);
    expect((await add({ domain: 'example.com', selector: 'two.labels' })).status).toBe(400);
    expect((await add({ domain: 'example.com', selector: 'mp1' })).status).toBe(201);
    expect((await add({ domain: 'example.com', selector: 'mp2' })).status).toBe(409);
    await fx.createTenant('other');
    const elsewhere = await api(fx.t.url, 'GET', '/domains/example.com?tenant_id=other', { token: key });
    expect(elsewhere.status).toBe(404);
  });
});
