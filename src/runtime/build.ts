/** The running build's version, from the package it was installed with (read once). */
import { readFileSync } from 'node:fs';

let version: string | null = null;

export function mailproxyVersion(): string {
  version ??= (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
  return version;
}
