/**
 * Headless Debian chromium driven by playwright-core (REAL-PEERS.md, "Browsers"),
 * and where the console tests put their screenshots (test-artifacts/ui/, gitignored).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

export const ARTIFACTS = join(process.cwd(), 'test-artifacts', 'ui');

export async function launchChromium(): Promise<Browser> {
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

export async function signIn(page: Page, url: string, token: string): Promise<void> {
  await page.goto(`${url}/ui/sign-in`);
  await page.getByLabel('Tenant API key or admin token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page
    .getByRole('heading', { name: 'Overview', level: 1 })
    .waitFor()
    .catch(async (error: Error) => {
      throw new Error(
        `${error.message}\nthe page (${page.url()}) was:\n${(await page.textContent('main').catch(() => null)) ?? (await page.content())}`,
      );
    });
}
