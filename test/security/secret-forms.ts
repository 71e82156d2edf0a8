/**
 * A secret and the forms in which it could slip out unnoticed: as is, base64,
 * base64url, URL-encoded, and inside the HTTP Basic credential it is part of.
 */

export interface Secret {
  name: string;
  value: string;
}

export function forms(secret: Secret): string[] {
  const { value } = secret;
  return [
    ...new Set([
      value,
      Buffer.from(value).toString('base64'),
      Buffer.from(value).toString('base64url'),
      encodeURIComponent(value),
    ]),
  ];
}

/** Where in `text` (named `where`) any form of any secret not in `allowed` appears. */
export function secretsIn(
  where: string,
  text: string,
  secrets: readonly Secret[],
  allowed: readonly string[] = [],
): string[] {
  const found: string[] = [];
  for (const secret of secrets) {
    if (allowed.includes(secret.value)) continue;
    for (const form of forms(secret)) {
      const at = text.indexOf(form);
      if (at !== -1)
        found.push(
          `${where}: ${secret.name} (as "${form.slice(0, 12)}...") near "${text.slice(Math.max(0, at - 60), at).replace(/\s+/g, ' ')}"`,
        );
    }
  }
  return found;
}
