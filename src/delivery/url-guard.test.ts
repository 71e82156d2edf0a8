import { describe, expect, it } from 'vitest';
import { createGuardedLookup, FORBIDDEN_ADDRESS, isForbiddenAddress, refuseUrl } from './url-guard.js';

describe('the SSRF address policy', () => {
  it.each([
    '127.0.0.1',
    '127.255.255.254',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '100.127.255.255',
    '0.0.0.0',
    '0.1.2.3',
    '224.0.0.1',
    '239.255.255.250',
    '255.255.255.255',
    '::',
    '::1',
    'fe80::1',
    'febf::1',
    'fc00::1',
    'fd12:3456::1',
    'ff02::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    '::127.0.0.1',
    'not-an-ip',
  ])('refuses %s', (address) => expect(isForbiddenAddress(address)).toBe(true));

  it.each([
    '8.8.8.8',
    '1.1.1.1',
    '93.184.215.14',
    '172.15.255.255',
    '172.32.0.1',
    '100.63.255.255',
    '100.128.0.1',
    '192.169.0.1',
    '169.255.0.1',
    '11.0.0.1',
    '2001:4860:4860::8888',
    '2606:4700::1111',
    'fec0::1',
    '::ffff:8.8.8.8',
  ])('allows %s', (address) => expect(isForbiddenAddress(address)).toBe(false));
});

describe('URL refusal', () => {
  it('allows only http and https', () => {
    expect(refuseUrl(new URL('ftp://example.com/a'), null)).toMatch(/scheme ftp:/);
    expect(refuseUrl(new URL('file:///etc/passwd'), null)).toMatch(/scheme file:/);
    expect(refuseUrl(new URL('https://example.com/a'), isForbiddenAddress)).toBeNull();
  });

  it('checks IP literals, IPv6 ones included, unless the policy is off', () => {
    expect(refuseUrl(new URL('http://127.0.0.1:8080/'), isForbiddenAddress)).toMatch(/127\.0\.0\.1 not allowed/);
    expect(refuseUrl(new URL('http://[::ffff:10.0.0.1]/'), isForbiddenAddress)).toMatch(/not allowed/);
    expect(refuseUrl(new URL('http://0x7f000001/'), isForbiddenAddress)).toMatch(/127\.0\.0\.1 not allowed/);
    expect(refuseUrl(new URL('http://127.0.0.1/'), null)).toBeNull();
  });
});

describe('the guarded lookup', () => {
  it('refuses a host name that resolves to loopback', async () => {
    const lookup = createGuardedLookup(isForbiddenAddress);
    const error = await new Promise<NodeJS.ErrnoException | null>((resolve) =>
      lookup('localhost', { all: true }, (err) => resolve(err)),
    );
    expect(error?.code).toBe(FORBIDDEN_ADDRESS);
  });

  it('answers in the shape asked for when the addresses are allowed', async () => {
    const lookup = createGuardedLookup(() => false);
    const one = await new Promise<unknown[]>((resolve) =>
      lookup('localhost', { family: 4 }, (...args) => resolve(args)),
    );
    expect(one).toEqual([null, '127.0.0.1', 4]);
    const all = await new Promise<unknown[]>((resolve) =>
      lookup('localhost', { family: 4, all: true }, (...args) => resolve(args)),
    );
    expect(all).toEqual([null, [{ address: '127.0.0.1', family: 4 }]]);
  });
});
