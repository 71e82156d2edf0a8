import { describe, expect, it } from 'vitest';
import type { Account } from '../core/account/index.js';
import type { DkimSigner } from '../core/tenant/index.js';
import { contextHolder, contextShipper } from './relay-context.js';

const account = (id: string, host: string): Account => ({ tenantId: 't', id, host, port: 25 }) as unknown as Account;
const keys: DkimSigner[] = [{ domain: 'example.com', selector: 's1', algorithm: 'ed25519-sha256', privateKey: 'PEM' }];
const job = (from: Account, dkim: DkimSigner[] = keys) => ({ account: from, dkim, envelope: { mailFrom: 'a@b.c' } });

describe('relay contexts', () => {
  it('sends an account and its keys once, then names them; the thread fills them in', () => {
    const shipper = contextShipper();
    const holder = contextHolder();
    const main = account('main', 'relay.example');
    const first = shipper.pack(job(main));
    expect(first.whole).toEqual({ account: main, dkim: keys });
    expect(holder.unpack(first)).toEqual(job(main));
    // The next claim step reads the account again: another object, the same content.
    const named = shipper.pack(job(account('main', 'relay.example')));
    expect(named.whole).toBeNull();
    expect(named).not.toHaveProperty('account');
    expect(holder.unpack(named)).toEqual(job(main));
  });

  it('sends it whole again when the account or its keys changed, and keeps accounts apart', () => {
    const shipper = contextShipper();
    const holder = contextHolder();
    holder.unpack(shipper.pack(job(account('main', 'old.example'))));
    holder.unpack(shipper.pack(job(account('other', 'other.example'))));
    const moved = shipper.pack(job(account('main', 'new.example')));
    expect(moved.whole?.account.host).toBe('new.example');
    expect(holder.unpack(moved)?.account.host).toBe('new.example');
    const rekeyed = shipper.pack(job(account('main', 'new.example'), [{ ...keys[0]!, selector: 's2' }]));
    expect(rekeyed.whole?.dkim[0]?.selector).toBe('s2');
    expect(holder.unpack(shipper.pack(job(account('other', 'other.example'))))?.account.host).toBe('other.example');
  });

  it('a thread that does not hold the context named says so, and a whole job mends it', () => {
    const shipper = contextShipper();
    shipper.pack(job(account('main', 'relay.example')));
    // The thread was replaced: the new one holds nothing.
    const fresh = contextHolder();
    const named = shipper.pack(job(account('main', 'relay.example')));
    expect(fresh.unpack(named)).toBeNull();
    const whole = shipper.pack(job(account('main', 'relay.example')), true);
    expect(fresh.unpack(whole)?.account.host).toBe('relay.example');
    expect(fresh.unpack(shipper.pack(job(account('main', 'relay.example'))))?.account.host).toBe('relay.example');
  });
});
