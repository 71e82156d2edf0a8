/**
 * VERP (variable envelope return path): the envelope sender of a relayed
 * message names the message, e.g. `bounces+4711@bounce.example.com`, so that a
 * bounce is tied to it by the address it was sent back to, even when the
 * bounce quotes nothing of the original. `{id}` in the template stands for
 * the message's pk (our row id: unique across tenants, unlike the client id).
 */
import { isAddrSpec } from '../address.js';

const PLACEHOLDER = '{id}';

/** Null when the template is usable; otherwise what is wrong with it. */
export function verpTemplateProblem(template: string): string | null {
  if (template === '') return null;
  if (template.split(PLACEHOLDER).length !== 2) return `must contain ${PLACEHOLDER} exactly once`;
  if (template.indexOf(PLACEHOLDER) > template.lastIndexOf('@')) return `${PLACEHOLDER} must be in the local part`;
  if (!isAddrSpec(template.replace(PLACEHOLDER, '1')))
    return 'must be an address such as bounces+{id}@bounce.example.com';
  return null;
}

export function verpAddress(template: string, messagePk: number): string {
  return template.replace(PLACEHOLDER, String(messagePk));
}

/** The pk a bounce's recipient addresses name through `template`, or null. */
export function verpMessagePk(template: string, addresses: readonly string[]): number | null {
  if (template === '') return null;
  const [before, after] = template.toLowerCase().split(PLACEHOLDER) as [string, string];
  for (const address of addresses) {
    const lower = address.toLowerCase();
    if (!lower.startsWith(before) || !lower.endsWith(after) || lower.length <= before.length + after.length) continue;
    const token = lower.slice(before.length, lower.length - after.length);
    if (/^[1-9]\d{0,15}$/.test(token)) return Number(token);
  }
  return null;
}

/** The envelope sender of each tenant's relayed mail: a tenant with a mailbox of its own uses its template, the others the instance's (`tenantId` null). */
export function verpReturnPathOf(
  mailboxes: ReadonlyArray<{ tenantId: string | null; verpReturnPath: string }>,
): ((tenantId: string, messagePk: number) => string | null) | undefined {
  const byTenant = new Map(
    mailboxes.flatMap((mailbox) =>
      mailbox.tenantId !== null && mailbox.verpReturnPath !== ''
        ? [[mailbox.tenantId, mailbox.verpReturnPath] as const]
        : [],
    ),
  );
  const instance = mailboxes.find((mailbox) => mailbox.tenantId === null)?.verpReturnPath ?? '';
  if (byTenant.size === 0 && instance === '') return undefined;
  return (tenantId, messagePk) => {
    const template = byTenant.get(tenantId) ?? instance;
    return template === '' ? null : verpAddress(template, messagePk);
  };
}
