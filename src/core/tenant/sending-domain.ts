/**
 * A tenant's sending domains: the domains its mail is DKIM-signed for, each with its keys (RSA,
 * and Ed25519 as a second signature where asked: RFC 8463). A message whose From domain is one of
 * them is signed by each of its keys, after every header the proxy adds. The private keys are
 * decrypted only inside the process (the tenant row seals them); what is shown is the DNS record
 * to publish. Pure.
 */
import { AppError } from '../app-error.js';

export type DkimAlgorithm = 'rsa-sha256' | 'ed25519-sha256';

export interface DkimKey {
  algorithm: DkimAlgorithm;
  /** The DNS label under `_domainkey.<domain>` where its public key is published. */
  selector: string;
  /** PKCS#8 PEM; decrypted only inside the process. */
  privateKey: string;
  /** What the DNS record's `p=` carries: the SPKI DER (RSA) or the raw 32-byte key (Ed25519), base64. */
  publicKey: string;
  /**
   * A rotation's stages: `pending` (made, to be published; not used until it is seen in DNS),
   * `active` (signs; absent means active), `retiring` (replaced: no longer signs, its record kept
   * published until `retireAt` so that mail signed with it still verifies, then removed).
   */
  state?: 'pending' | 'active' | 'retiring';
  retireAt?: number;
}

export const keyState = (key: DkimKey): 'pending' | 'active' | 'retiring' => key.state ?? 'active';

export interface SendingDomain {
  /** Lower case. */
  domain: string;
  keys: DkimKey[];
  createdAt: number;
  /** During a rotation: how long the replaced keys stay published once the new ones sign. */
  retireAfterMs?: number;
}

/** How long a replaced key stays published by default: a week covers mail delayed and forwarded. */
export const DEFAULT_RETIRE_AFTER_MS = 7 * 86_400_000;

/** What signs one message: a key with the domain it signs for (plain data: it crosses to the relay thread). */
export interface DkimSigner {
  domain: string;
  selector: string;
  algorithm: DkimAlgorithm;
  privateKey: string;
}

/** Makes a key pair (node:crypto in src/security): the core decides which, never how. */
export interface DkimKeyMaker {
  generate(algorithm: DkimAlgorithm): { privateKey: string; publicKey: string };
}

export const MAX_SENDING_DOMAINS = 100;

const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
/** A DNS label of letters, digits and hyphens (RFC 6376 §3.1 allows dots too; one label is what operators use). */
const SELECTOR = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** The selector of a domain's Ed25519 key beside its RSA one: a record of its own (RFC 8463 §4). */
export const ed25519Selector = (selector: string): string => `${selector}-ed25519`;

/** `value` in lower case when `pattern` takes it; VALIDATION_FAILED naming `path` otherwise. */
const lowerMatching =
  (pattern: RegExp, path: string, message: string) =>
  (value: string): string => {
    const lower = value.toLowerCase();
    if (!pattern.test(lower))
      throw new AppError('VALIDATION_FAILED', 'invalid request body', { details: [{ path, message }] });
    return lower;
  };

export const checkDomainName = lowerMatching(DOMAIN, 'domain', 'must be a domain name, e.g. example.com');
export const checkSelector = lowerMatching(SELECTOR, 'selector', 'must be one DNS label: letters, digits and hyphens');

/** The TXT record that publishes a key: its name and its value (RFC 6376 §3.6.1, RFC 8463 §4.2). */
export function dkimRecord(domain: string, key: Pick<DkimKey, 'algorithm' | 'selector' | 'publicKey'>) {
  const k = key.algorithm === 'rsa-sha256' ? 'rsa' : 'ed25519';
  return {
    name: `${key.selector}._domainkey.${domain}`,
    type: 'TXT' as const,
    value: `v=DKIM1; k=${k}; p=${key.publicKey}`,
  };
}

/** Every key of every sending domain, as signers: the thread that sends picks those of the message's From domain. */
export const dkimSigners = (domains: readonly SendingDomain[]): DkimSigner[] =>
  domains.flatMap((domain) =>
    domain.keys
      .filter((key) => keyState(key) === 'active')
      .map((key) => ({
        domain: domain.domain,
        selector: key.selector,
        algorithm: key.algorithm,
        privateKey: key.privateKey,
      })),
  );

/**
 * A rotation begins: new keys (of the algorithms that sign now) under `selector`, pending until
 * they are seen published. Throws when one is pending already or the selector is in use.
 */
export function beginRotation(
  domain: SendingDomain,
  selector: string,
  maker: DkimKeyMaker,
  retireAfterMs: number,
): SendingDomain {
  const invalid = (message: string) =>
    new AppError('CONFLICT', message, { details: { domain: domain.domain, selector } });
  if (domain.keys.some((key) => keyState(key) === 'pending')) throw invalid('a rotation of this domain is under way');
  const selectors = (name: string) => [name, ed25519Selector(name)];
  if (domain.keys.some((key) => selectors(selector).includes(key.selector))) throw invalid('the selector is in use');
  const next = domain.keys
    .filter((key) => keyState(key) === 'active')
    .map((key): DkimKey => ({
      algorithm: key.algorithm,
      selector: key.algorithm === 'rsa-sha256' ? selector : ed25519Selector(selector),
      ...maker.generate(key.algorithm),
      state: 'pending',
    }));
  return { ...domain, keys: [...domain.keys, ...next], retireAfterMs };
}

/**
 * The pending keys are all seen published (`published`: the selectors whose record holds our key):
 * they sign from now, and the keys they replace retire, kept published until `now + retireAfterMs`.
 * Null when a pending key is not published yet (or none is pending): nothing changes.
 */
export function completeRotation(
  domain: SendingDomain,
  published: readonly string[],
  now: number,
): SendingDomain | null {
  const pending = domain.keys.filter((key) => keyState(key) === 'pending');
  if (pending.length === 0 || !pending.every((key) => published.includes(key.selector))) return null;
  const retireAt = now + (domain.retireAfterMs ?? DEFAULT_RETIRE_AFTER_MS);
  return {
    ...domain,
    keys: domain.keys.map((key): DkimKey => {
      const state = keyState(key);
      if (state === 'pending') return { ...key, state: 'active' };
      if (state === 'active') return { ...key, state: 'retiring', retireAt };
      return key;
    }),
  };
}

/** The keys whose retirement is over are gone; null when none is. */
export function dropRetired(domain: SendingDomain, now: number): SendingDomain | null {
  const kept = domain.keys.filter((key) => keyState(key) !== 'retiring' || (key.retireAt ?? 0) > now);
  return kept.length === domain.keys.length ? null : { ...domain, keys: kept };
}
