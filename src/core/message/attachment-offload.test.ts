import { describe, expect, it } from 'vitest';
import { offloadNotice, offloadPlan, readableSize, type AttachmentOffload } from './attachment-offload.js';

const TENANT: AttachmentOffload = {
  baseUrl: 'https://mail.example.com',
  overBytes: 5_000_000,
  linkLifetimeSeconds: null,
};
const CONTEXT = { maxLifetimeSeconds: 86_400 };

describe('offloadPlan', () => {
  it("takes the tenant's size and the daemon's lifetime when the message says nothing", () => {
    expect(offloadPlan(TENANT, undefined, CONTEXT)).toEqual({
      baseUrl: 'https://mail.example.com',
      overBytes: 5_000_000,
      lifetimeMs: 86_400_000,
    });
  });

  it("lets a message set its own size and a shorter lifetime, never one past the daemon's", () => {
    expect(offloadPlan(TENANT, { overBytes: 1000, linkLifetimeSeconds: 600 }, CONTEXT)).toMatchObject({
      overBytes: 1000,
      lifetimeMs: 600_000,
    });
    expect(offloadPlan(TENANT, { linkLifetimeSeconds: 999_999 }, CONTEXT)?.lifetimeMs).toBe(86_400_000);
    expect(offloadPlan({ ...TENANT, linkLifetimeSeconds: 3600 }, undefined, CONTEXT)?.lifetimeMs).toBe(3_600_000);
  });

  it('offloads nothing for a tenant without the setting or a message relayed whole', () => {
    expect(offloadPlan(null, { overBytes: 1000 }, CONTEXT)).toBeNull();
    expect(offloadPlan(TENANT, { relayWhole: true, overBytes: 1000 }, CONTEXT)).toBeNull();
  });

  it('offloads only the messages that ask when the tenant sets no size', () => {
    const askOnly = { ...TENANT, overBytes: null };
    expect(offloadPlan(askOnly, undefined, CONTEXT)).toBeNull();
    expect(offloadPlan(askOnly, { overBytes: 2000 }, CONTEXT)?.overBytes).toBe(2000);
  });
});

describe('the notice', () => {
  it('says sizes as mail clients do', () => {
    expect(readableSize(812)).toBe('812 bytes');
    expect(readableSize(5_242_880)).toBe('5.2 MB');
    expect(readableSize(25_000_000)).toBe('25 MB');
    expect(readableSize(1_500)).toBe('1.5 KB');
  });

  it('names each file, its size and link, in text and in HTML with the names escaped', () => {
    const { text, html } = offloadNotice(
      [
        { filename: 'report.pdf', sizeBytes: 5_000_000, url: 'https://mail.example.com/files/abc' },
        { filename: '<b>x&y</b>.txt', sizeBytes: 2_000_000, url: 'https://mail.example.com/files/def' },
      ],
      Date.UTC(2026, 11, 30),
    );
    expect(text).toContain('until 2026-12-30:');
    expect(text).toContain('- report.pdf (5.0 MB): https://mail.example.com/files/abc');
    expect(html).toContain('<a href="https://mail.example.com/files/def">&lt;b&gt;x&amp;y&lt;/b&gt;.txt</a> (2.0 MB)');
    expect(html).not.toContain('<b>');
  });
});
