/**
 * A sending domain as the API shows it (its keys' public halves and the records to publish,
 * never a private key), its DNS check's answer, and what the domain services are made with.
 */
import type { Clock, IdSource } from '../clock.js';
import type { AdminStore } from '../ports.js';
import { dkimRecord, keyState, type DkimKey, type DkimKeyMaker, type SendingDomain } from './sending-domain.js';
import type { DomainDnsReader, DomainFinding } from './domain-check.js';

/** A sending domain as the API shows it: its keys' public halves and the records to publish, never a private key. */
export interface SendingDomainView {
  tenant_id: string;
  domain: string;
  /** `state`: pending (publish it: it signs once seen), active (signs), retiring (keep it published until `retire_ts`). */
  keys: Array<{
    algorithm: DkimKey['algorithm'];
    selector: string;
    state: ReturnType<typeof keyState>;
    retire_ts: number | null;
  }>;
  dns_records: Array<{ name: string; type: 'TXT'; value: string }>;
  created_ts: number;
}

export function viewSendingDomain(tenantId: string, domain: SendingDomain): SendingDomainView {
  return {
    tenant_id: tenantId,
    domain: domain.domain,
    keys: domain.keys.map((key) => ({
      algorithm: key.algorithm,
      selector: key.selector,
      state: keyState(key),
      retire_ts: key.retireAt === undefined ? null : Math.floor(key.retireAt / 1000),
    })),
    dns_records: domain.keys.map((key) => dkimRecord(domain.domain, key)),
    created_ts: Math.floor(domain.createdAt / 1000),
  };
}

export interface SendingDomainServiceDeps {
  store: AdminStore;
  keys: DkimKeyMaker;
  /** Reads what the DNS says of a domain, for its check. */
  dns: DomainDnsReader;
  clock: Clock;
  ids: IdSource;
}

/** A domain's check: each finding with its fix, `ok` when none fails. */
export interface DomainCheck {
  tenant_id: string;
  domain: string;
  ok: boolean;
  checked_ts: number;
  findings: DomainFinding[];
  /** The selectors whose record holds the key we made for it (a rotation completes once all pending ones are). */
  published_selectors: string[];
}
