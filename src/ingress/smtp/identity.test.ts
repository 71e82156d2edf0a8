import { describe, expect, it } from 'vitest';
import { AuthenticatedIdentity, parseUser, sessionIdentity, trustedNetworks } from './identity.js';

describe('the identity of an SMTP session', () => {
  const trusted = { tenantId: 'office', accountId: null };

  it('is the one a successful AUTH gave', () => {
    const signedIn = parseUser('acme/main');
    expect(signedIn).toBeInstanceOf(AuthenticatedIdentity);
    expect(sessionIdentity(signedIn, () => trusted)).toBe(signedIn);
  });

  it('is never read from what else smtp-server leaves in session.user (false after STARTTLS, undefined, a look-alike)', () => {
    for (const user of [false, undefined, null, '', { tenantId: 'acme', accountId: null }]) {
      expect(
        sessionIdentity(user, () => null),
        String(user),
      ).toBeNull();
      expect(
        sessionIdentity(user, () => trusted),
        String(user),
      ).toBe(trusted);
    }
  });
});

describe('trusted networks', () => {
  const lookup = trustedNetworks([
    { address: '10.1.0.0', prefix: 16, family: 'ipv4', tenantId: 'branch', accountId: 'main' },
    { address: '10.0.0.0', prefix: 8, family: 'ipv4', tenantId: 'office', accountId: null },
    { address: 'fd00::', prefix: 8, family: 'ipv6', tenantId: 'v6', accountId: null },
  ]);

  it('answers the first listed network holding the address, the same when asked again', () => {
    for (let round = 0; round < 2; round += 1) {
      expect(lookup('10.1.2.3')).toEqual({ tenantId: 'branch', accountId: 'main' });
      expect(lookup('::ffff:10.2.0.1')).toEqual({ tenantId: 'office', accountId: null });
      expect(lookup('fd12::1')).toEqual({ tenantId: 'v6', accountId: null });
      expect(lookup('192.0.2.1')).toBeNull();
      expect(lookup('::1')).toBeNull();
    }
  });

  it('stays right for addresses past what it remembers', () => {
    for (let i = 0; i < 3000; i += 1) expect(lookup(`10.3.${i >> 8}.${i & 255}`)?.tenantId).toBe('office');
    expect(lookup('10.1.2.3')?.tenantId).toBe('branch');
    expect(lookup('192.0.2.1')).toBeNull();
  });
});
