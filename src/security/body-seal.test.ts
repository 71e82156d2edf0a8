import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createBodySeal, keyEncryptionKey, PART_OVERHEAD_BYTES, WRAPPED_KEY_BYTES } from './body-seal.js';

const kek = () => keyEncryptionKey(randomBytes(32));

describe('body seal', () => {
  const seal = createBodySeal([kek()]);

  it('opens what it sealed, in parts, and the sealed bytes hold nothing of the body', () => {
    const key = seal.newKey();
    const parts = [Buffer.from('Subject: hello\r\n\r\n'), Buffer.from('the body of the message')];
    const sealed = parts.map((part, index) => seal.seal(key, 'acme', index, part));
    expect(key.wrapped.length).toBe(WRAPPED_KEY_BYTES);
    expect(sealed[1]?.length).toBe((parts[1]?.length ?? 0) + PART_OVERHEAD_BYTES);
    expect(Buffer.concat(sealed).includes('hello')).toBe(false);
    expect(seal.open({ tenantId: 'acme', key: key.wrapped, parts: sealed }).toString()).toBe(
      'Subject: hello\r\n\r\nthe body of the message',
    );
  });

  it('refuses a body moved to another tenant, parts reordered or altered, and another key', () => {
    const key = seal.newKey();
    const parts = ['one', 'two'].map((text, index) => seal.seal(key, 'acme', index, Buffer.from(text)));
    expect(() => seal.open({ tenantId: 'other', key: key.wrapped, parts })).toThrow();
    expect(() => seal.open({ tenantId: 'acme', key: key.wrapped, parts: [...parts].reverse() })).toThrow();
    const altered = Buffer.from(parts[0] as Buffer);
    altered[14] = (altered[14] ?? 0) ^ 1;
    expect(() => seal.open({ tenantId: 'acme', key: key.wrapped, parts: [altered] })).toThrow();
    expect(() => seal.open({ tenantId: 'acme', key: seal.newKey().wrapped, parts })).toThrow();
  });

  it('opens keys an older key-encryption key wrapped, rewraps them to the current one, and names an unknown one', () => {
    const old = kek();
    const before = createBodySeal([old]);
    const key = before.newKey();
    const part = before.seal(key, 'acme', 0, Buffer.from('kept'));
    const after = createBodySeal([kek(), old]);
    expect(after.open({ tenantId: 'acme', key: key.wrapped, parts: [part] }).toString()).toBe('kept');
    const rewrapped = after.rewrap(key.wrapped);
    expect(rewrapped).not.toBeNull();
    expect(after.rewrap(rewrapped as Buffer)).toBeNull();
    const onlyNew = createBodySeal([kek()]);
    expect(() => onlyNew.open({ tenantId: 'acme', key: key.wrapped, parts: [part] })).toThrow(/does not hold/);
    const current = createBodySeal([after === onlyNew ? old : kek()]);
    expect(() => current.open({ tenantId: 'acme', key: rewrapped as Buffer, parts: [part] })).toThrow(/does not hold/);
  });
});
