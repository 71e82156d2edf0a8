import { describe, expect, it } from 'vitest';
import { defaultWarnings, isDefaultOnSave, pickAccount } from './default-account.js';

const a1 = { id: 'a1', isDefault: false };
const a2 = { id: 'a2', isDefault: false };
const marked = (account: { id: string }) => ({ ...account, isDefault: true });

describe('the account that serves a submission', () => {
  it('is the one named, or unknown when the tenant has no such account', () => {
    expect(pickAccount([a1, marked(a2)], 'a1')).toEqual({ kind: 'account', account: a1 });
    expect(pickAccount([a1, marked(a2)], 'nope')).toEqual({ kind: 'unknown' });
  });

  it("is the tenant's default when none is named", () => {
    expect(pickAccount([a1, marked(a2)], undefined)).toEqual({ kind: 'account', account: marked(a2) });
  });

  it('is none when no account is marked default, even when the tenant has only one, and names the accounts to pick from', () => {
    expect(pickAccount([a1], undefined)).toEqual({ kind: 'no-default', accountIds: ['a1'] });
    expect(pickAccount([a1, a2], undefined)).toEqual({ kind: 'no-default', accountIds: ['a1', 'a2'] });
    expect(pickAccount([], undefined)).toEqual({ kind: 'no-default', accountIds: [] });
  });
});

describe('the default mark of a saved account', () => {
  it("is set on a tenant's first account unless it is refused", () => {
    expect(isDefaultOnSave(undefined, undefined, [])).toBe(true);
    expect(isDefaultOnSave(false, undefined, [])).toBe(false);
  });

  it('is not set on a later account unless asked, and an update keeps the stored mark', () => {
    expect(isDefaultOnSave(undefined, undefined, [a1])).toBe(false);
    expect(isDefaultOnSave(true, undefined, [a1])).toBe(true);
    expect(isDefaultOnSave(undefined, true, [a1])).toBe(true);
    expect(isDefaultOnSave(false, true, [a1])).toBe(false);
  });
});

describe('the warnings of an account change', () => {
  it('say nothing when a default stays in place', () => {
    expect(defaultWarnings('acme', [marked(a1)], [marked(a1), a2])).toEqual([]);
    expect(defaultWarnings('acme', [], [marked(a1)])).toEqual([]);
  });

  it('warn NO_DEFAULT_ACCOUNT, naming the accounts, when the tenant is left without a default', () => {
    const [warning, ...rest] = defaultWarnings('acme', [a1], [a1, a2]);
    expect(rest).toEqual([]);
    expect(warning?.code).toBe('NO_DEFAULT_ACCOUNT');
    expect(warning?.message).toContain('tenant acme has no default account');
    expect(warning?.message).toContain('its accounts: a1, a2');
    expect(defaultWarnings('acme', [marked(a1), a2], [a1, a2]).map((w) => w.code)).toEqual(['NO_DEFAULT_ACCOUNT']);
  });

  it('warn when the default was deleted with it the last account, but not for a tenant that never had one', () => {
    expect(defaultWarnings('acme', [marked(a1)], [])).toEqual([
      {
        code: 'NO_DEFAULT_ACCOUNT',
        message: 'tenant acme has no account left; the next account added becomes its default',
      },
    ]);
    expect(defaultWarnings('acme', [a1], [])).toEqual([]);
  });

  it('tell DEFAULT_ACCOUNT_CHANGED when the default moved to another account', () => {
    expect(defaultWarnings('acme', [marked(a1), a2], [a1, marked(a2)])).toEqual([
      {
        code: 'DEFAULT_ACCOUNT_CHANGED',
        message: 'messages of tenant acme that name no account now go through a2 (before: a1)',
      },
    ]);
  });
});
