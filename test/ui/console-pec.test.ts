/**
 * The console's PEC panel end to end: a real Dovecot holds a PEC account's
 * mailbox, a receipt for a message the sink received is appended, and a real
 * headless Chromium signed in with the tenant's key reads what the receipt
 * proved and downloads the receipt, byte for byte. Another tenant's session
 * gets nothing. Screenshot: test-artifacts/ui/pec-message.png.
 */
import { readFile } from 'node:fs/promises';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { message } from '../helpers/queue-fixture.js';
import { startReportScenario, type ReportScenario } from '../helpers/report-fixture.js';
import { startDovecot, type DovecotPeer } from '../peers/dovecot.js';
import { PEC_USER, pecAccountFields, relayedMessageId } from '../pec/pec-peers.js';
import { buildReceipt } from '../pec/receipt-fixtures.js';
import { launchChromium, screenshot, signIn } from './console-browser.js';

const cleanups: Array<() => Promise<void>> = [];
let s: ReportScenario;
let dovecot: DovecotPeer;
let browser: Browser;
let acmeKey: string;
let betaKey: string;
let receipt: Buffer;

beforeAll(async () => {
  [dovecot, browser] = await Promise.all([startDovecot({ users: [PEC_USER] }), launchChromium()]);
  cleanups.push(
    () => dovecot.destroy(),
    () => browser.close(),
  );
  s = await startReportScenario(cleanups, { extraToml: '[pec]\npoll_interval_seconds = 3600\n' });
  acmeKey = (await s.addTenant('acme', '/acme')).key;
  betaKey = (await s.addTenant('beta', '/beta')).key;
  await s.fx.createAccount('acme', 'pec', s.sink, pecAccountFields(dovecot));
  await s.fx.post(acmeKey, [message('atto-1', { to: 'ann@pec.dest.example', account_id: 'pec', subject: 'Diffida' })]);
  await s.fx.settle();
  receipt = buildReceipt({
    type: 'avvenuta-consegna',
    referencedMessageId: relayedMessageId(s.sink, 'atto-1'),
    recipient: 'ann@pec.dest.example',
    mailId: 'atto-1',
  });
  await dovecot.append(receipt);
  await vi.waitFor(async () => expect((await s.fx.detail('acme', 'atto-1')).message.pec_rdc_ts).not.toBeNull(), {
    timeout: 15_000,
    interval: 50,
  });
});

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('the console on a PEC message', () => {
  it('shows what the receipts proved and downloads a receipt as its original bytes; another tenant gets nothing', async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
    context.setDefaultTimeout(8000);
    const page = await context.newPage();
    await signIn(page, s.fx.t.url, acmeKey);
    await page.goto(`${s.fx.t.url}/ui/messages/acme/atto-1`);
    const panel = page.getByRole('region', { name: 'PEC receipts' });
    await panel.waitFor();
    expect(await panel.textContent()).toContain('avvenuta-consegna');
    expect(await panel.textContent()).toContain('ann@pec.dest.example');
    expect(await panel.textContent()).toContain('no acceptance receipt yet');
    await screenshot(page, 'pec-message');

    const [download] = await Promise.all([
      page.waitForEvent('download'),
      panel.getByRole('link', { name: 'download .eml' }).click(),
    ]);
    expect((await readFile(await download.path())).equals(receipt)).toBe(true);
    const href = await panel.getByRole('link', { name: 'download .eml' }).getAttribute('href');
    await context.close();

    // Beta's session, the same link: as if it did not exist.
    const other = await browser.newContext();
    const otherPage = await other.newPage();
    await signIn(otherPage, s.fx.t.url, betaKey);
    const answer = await otherPage.request.get(`${s.fx.t.url}${String(href)}`);
    expect(answer.status()).toBe(404);
    expect((await answer.body()).includes(receipt.subarray(0, 200))).toBe(false);
    await other.close();
  });
});
