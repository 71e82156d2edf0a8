import { describe, expect, it } from 'vitest';
import { AuthenticatedIdentity, parseUser, sessionIdentity } from './identity.js';

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
