import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newSigningSecret, signReport, verifyReportSignature } from './report-signature.js';

describe('report signature', () => {
  const body = '{"delivery_report":[{"id":"m-1"}]}';

  it('is HMAC-SHA256 of "<t>.<body>", as a client would compute it by hand', () => {
    const header = signReport('s3cret', body, 1_700_000_000);
    const expected = createHmac('sha256', 's3cret').update(`1700000000.${body}`).digest('hex');
    expect(header).toBe(`t=1700000000,v1=${expected}`);
  });

  it('verifies within the tolerance only, with the right secret and the exact body', () => {
    const header = signReport('s3cret', body, 1_700_000_000);
    expect(verifyReportSignature('s3cret', body, header, 1_700_000_100)).toBe(true);
    expect(verifyReportSignature('s3cret', body, header, 1_700_000_301)).toBe(false);
    expect(verifyReportSignature('other', body, header, 1_700_000_000)).toBe(false);
    expect(verifyReportSignature('s3cret', `${body} `, header, 1_700_000_000)).toBe(false);
    expect(verifyReportSignature('s3cret', body, header.replace('t=1700000000', 't=1700000001'), 1_700_000_000)).toBe(
      false,
    );
    expect(verifyReportSignature('s3cret', body, 'garbage', 1_700_000_000)).toBe(false);
    expect(verifyReportSignature('s3cret', body, 't=1700000000,v1=zz', 1_700_000_000)).toBe(false);
  });

  it('generates distinct high-entropy secrets', () => {
    const a = newSigningSecret();
    expect(a).toMatch(/^mps_[A-Za-z0-9_-]{43}$/);
    expect(newSigningSecret()).not.toBe(a);
  });
});
