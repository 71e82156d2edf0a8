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
}

export interface SendingDomain {
  /** Lower case. */
  domain: string;
  keys: DkimKey[];
  createdAt: number;
}

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

export function checkDomainName(domain: string): string {
  const lower = domain.toLowerCase();
  if (!DOMAIN.test(lower))
    throw new AppError('VALIDATION_FAILED', 'invalid request body', {
      details: [{ path: 'domain', message: 'must be a domain name, e.g. example.com' }],
    });
  return lower;
}

export function checkSelector(selector: string): string {
  const lower = selector.toLowerCase();
  if (!SELECTOR.test(lower))
    throw new AppError('VALIDATION_FAILED', 'invalid request body', {
      details: [{ path: 'selector', message: 'must be one DNS label: letters, digits and hyphens' }],
    });
  return lower;
}

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
    domain.keys.map((key) => ({
      domain: domain.domain,
      selector: key.selector,
      algorithm: key.algorithm,
      privateKey: key.privateKey,
    })),
  );
