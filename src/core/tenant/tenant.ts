import type { RoutingRule } from '../account/routing.js';
import type { SendingDomain } from './sending-domain.js';
import type { ListUnsubscribe } from './list-unsubscribe.js';
import type { AttachmentOffload } from '../message/attachment-offload.js';
/** The tenant aggregate: one client application, its callback settings and its API key. */

/** How we authenticate to the tenant's own endpoints (delivery reports, attachments). */
export type ClientAuth =
  { method: 'none' } | { method: 'bearer'; token: string } | { method: 'basic'; user: string; password: string };

export const DEFAULT_CLIENT_SYNC_PATH = '/mail-proxy/sync';

export interface Tenant {
  id: string;
  name: string | null;
  clientBaseUrl: string | null;
  clientSyncPath: string;
  clientAttachmentPath: string | null;
  /** Decrypted only inside the process; never leaves it through an API. */
  clientAuth: ClientAuth | null;
  /** HMAC key that signs the tenant's delivery reports; decrypted only inside the process. */
  clientSigningSecret: string | null;
  /** False holds the tenant's mail; its key keeps working. */
  active: boolean;
  /** Which account a message that names none is sent through (core/account/routing.ts), in order; [] for the default account alone. */
  routes: RoutingRule[];
  /** The domains its mail is DKIM-signed for (sending-domain.ts); their private keys decrypted only inside the process. */
  sendingDomains: SendingDomain[];
  /** One-click unsubscribe links in its single-recipient mail (list-unsubscribe.ts); null: none. */
  listUnsubscribe: ListUnsubscribe | null;
  /** Large attachments relayed as download links (core/message/attachment-offload.ts); null: always whole. */
  attachmentOffload: AttachmentOffload | null;
  apiKeyCreatedAt: number;
  apiKeyExpiresAt: number | null;
  createdAt: number;
  updatedAt: number;
}
