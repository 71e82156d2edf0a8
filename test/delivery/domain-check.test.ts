/**
 * The DNS preflight of a sending domain against a real DNS server (dnsmasq on a loopback port,
 * `dns.servers` pointing at it): first a domain set up wrong (an SPF record without the relay,
 * no DMARC, a stale DKIM key, no MX), reported finding by finding with its fix; then the same
 * domain set up right, reported clean.
 */
import { generateKeyPairSync } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli-process.js';
import { startDnsScenario } from '../helpers/dns-scenario.js';

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Another key than ours, as a record left from an earlier setup would publish. */
const staleKey = (): string =>
  generateKeyPairSync('rsa', { modulusLength: 2048 })
    .publicKey.export({ type: 'spki', format: 'der' })
    .toString('base64');

interface Finding {
  check: string;
  status: string;
  message: string;
  fix: string | null;
}

describe('sending domain DNS checks', () => {
  it('reports a missing DMARC, an SPF without the relay and a stale DKIM key with their fixes, then a clean domain', async () => {
    const { dns, fx } = await startDnsScenario(cleanups, {
      txt: [
        { name: 'example.com', value: 'v=spf1 ip4:192.0.2.1 -all' },
        { name: 'mp1._domainkey.example.com', value: `v=DKIM1; k=rsa; p=${staleKey()}` },
      ],
    });
    const added = await fx.admin('POST', '/domains', { tenant_id: 'acme', domain: 'example.com', selector: 'mp1' });
    expect(added.status, added.text).toBe(201);
    const ours = added.body.domain.dns_records[0] as { name: string; value: string };

    const first = await fx.admin('GET', '/domains/example.com/check?tenant_id=acme');
    expect(first.status, first.text).toBe(200);
    expect(first.body.ok).toBe(false);
    const findings = first.body.findings as Finding[];
    const of = (check: string) => findings.filter((finding) => finding.check === check);
    expect(of('spf')).toEqual([
      expect.objectContaining({ status: 'fail', message: expect.stringContaining('does not authorise 127.0.0.1') }),
    ]);
    expect(of('spf')[0]!.fix).toContain('ip4:127.0.0.1');
    expect(of('dkim')).toEqual([
      expect.objectContaining({ status: 'fail', message: expect.stringContaining('not the one we sign with') }),
    ]);
    expect(of('dkim')[0]!.fix).toContain(ours.value);
    expect(of('dmarc')).toEqual([
      expect.objectContaining({ status: 'fail', message: expect.stringContaining('no DMARC record') }),
    ]);
    expect(of('dmarc')[0]!.fix).toContain('_dmarc.example.com');
    expect(of('mx')).toEqual([expect.objectContaining({ status: 'warn' })]);
    // The same from the command line: each finding with its fix, and exit 1 while one fails.
    const env = { MAILPROXY_URL: fx.t.url, MAILPROXY_TOKEN: fx.t.adminToken };
    const failing = await runCli(['domains', 'check', 'example.com', '--tenant', 'acme'], { env });
    expect(failing.code, failing.stderr).toBe(1);
    expect(failing.stdout).toMatch(/^example\.com: FAILING$/m);
    expect(failing.stdout).toMatch(/^ {2}fail dmarc .*\n {13}fix: publish TXT at _dmarc\.example\.com/m);

    // Set up right: the relay in SPF, our key, a DMARC policy, an MX.
    await dns.restart({
      txt: [
        { name: 'example.com', value: 'v=spf1 ip4:127.0.0.1 -all' },
        ours,
        { name: '_dmarc.example.com', value: 'v=DMARC1; p=quarantine; rua=mailto:dmarc@example.com' },
      ],
      mx: [{ name: 'example.com', host: 'mx.example.com', preference: 10 }],
    });
    const second = await fx.admin('GET', '/domains/example.com/check?tenant_id=acme');
    expect(second.body.ok).toBe(true);
    expect((second.body.findings as Finding[]).map((finding) => [finding.check, finding.status])).toEqual([
      ['spf', 'pass'],
      ['dkim', 'pass'],
      ['dmarc', 'pass'],
      ['mx', 'pass'],
    ]);
    const clean = await runCli(['domains', 'check', 'example.com', '--tenant', 'acme'], { env });
    expect(clean.code, clean.stderr).toBe(0);
    expect(clean.stdout).toMatch(/^example\.com: ok$/m);
  });

  it('says SPF cannot be evaluated past its 10 DNS lookups', async () => {
    // A chain of 11 includes: each costs a lookup, the last one past the limit.
    const chain = Array.from({ length: 11 }, (_, index) => ({
      name: `s${index}.example.com`,
      value: index < 10 ? `v=spf1 include:s${index + 1}.example.com -all` : 'v=spf1 ip4:127.0.0.1 -all',
    }));
    const { fx } = await startDnsScenario(cleanups, [
      { name: 'example.com', value: 'v=spf1 include:s0.example.com -all' },
      ...chain,
    ]);
    await fx.admin('POST', '/domains', { tenant_id: 'acme', domain: 'example.com', selector: 'mp1' });
    const checked = await fx.admin('GET', '/domains/example.com/check?tenant_id=acme');
    const spf = (checked.body.findings as Finding[]).filter((finding) => finding.check === 'spf');
    expect(spf).toEqual([expect.objectContaining({ status: 'fail', message: expect.stringContaining('permerror') })]);
    expect(spf[0]!.fix).toContain('10 DNS lookups');
  });
});
