/**
 * Ports of delivery: building a message's bytes and handing them to the
 * account's upstream relay. The adapters (nodemailer) report what happened as
 * data; core/delivery/delivery-outcome.ts decides what it means.
 */
import type { Account } from '../account/account.js';
import type { MessagePayload } from '../message/message.js';
import type { AttachmentOffload, OffloadedFiles } from '../message/attachment-offload.js';
import type { BodyBytes, SealedFields } from '../message/sealed-body.js';
import type { ClientAuth } from '../tenant/tenant.js';
import type { DkimSigner } from '../tenant/sending-domain.js';

export interface Envelope {
  mailFrom: string;
  rcptTo: string[];
}

/**
 * An envelope as a job carries it: in clear, or sealed as stored, opened by the thread that sends
 * it (so the main thread unwraps no key for it). `mailFrom` beside the sealed fields replaces
 * theirs (VERP).
 */
export type JobEnvelope = Envelope | { sealed: SealedFields; mailFrom?: string };

/** One recipient the relay refused, with the relay's own words. */
export interface RecipientRefusal {
  recipient: string;
  replyCode: number | null;
  enhancedStatus: string | null;
  text: string;
}

/**
 * Where a failed relay conversation stopped. `connect`: refused, reset, DNS;
 * `timeout`: no answer in time; `tls` and `auth`: the account's setup is wrong;
 * `envelope`: MAIL FROM or every RCPT TO refused; `data`: the message refused.
 */
export type RelayStage = 'connect' | 'timeout' | 'tls' | 'auth' | 'envelope' | 'data' | 'protocol';

/**
 * How long the SMTP transaction took: from the message getting a pooled
 * connection (opening one when the pool needs to: connect, greeting, TLS, AUTH)
 * to the relay's final answer. Absent when the message never got a connection.
 */
interface RelayTiming {
  transactionMs?: number;
}

export type RelayReply = RelayTiming &
  (
    | {
        ok: true;
        replyCode: number;
        enhancedStatus: string | null;
        text: string;
        accepted: string[];
        /** Recipients refused while others were accepted (partial delivery). */
        refused: RecipientRefusal[];
      }
    | {
        ok: false;
        stage: RelayStage;
        replyCode: number | null;
        enhancedStatus: string | null;
        text: string;
        /** The transport's error code (ECONNREFUSED, ETIMEDOUT, EAUTH, ...), when there is one. */
        errorCode: string | null;
        refused: RecipientRefusal[];
      }
  );

/** An account's pooled relay connections right now (GET /accounts). */
export interface RelayConnections {
  tenantId: string;
  accountId: string;
  /** Connections open to the relay, idle or not. */
  open: number;
  /** Connections carrying a message now. */
  inUse: number;
}

export interface Relay {
  /**
   * Sends `raw` through the account's pooled connection; never throws for a
   * relay's answer. `messageIdHeader`, when known, spares the transport making one up.
   */
  send(account: Account, envelope: Envelope, raw: Buffer, messageIdHeader?: string): Promise<RelayReply>;
  /** Drops pooled connections of accounts that changed or were deleted. */
  forget(tenantId: string, accountId: string): void;
  /** The pools of this relay; an account without one has no connection open. */
  connections(): RelayConnections[];
  close(): Promise<void>;
}

export interface BuildRequest {
  /** The client id, written as `X-Genro-Mail-ID`. */
  clientId: string;
  payload: MessagePayload;
  /**
   * Where `endpoint` attachments are fetched from, and whether large ones are offloaded to download
   * links (null for a PEC account's message: it must carry its attachments).
   */
  tenant: {
    id: string;
    clientBaseUrl: string | null;
    clientAttachmentPath: string | null;
    clientAuth: ClientAuth | null;
    attachmentOffload: AttachmentOffload | null;
  };
}

/** One message to build and hand to its account's relay, as plain data (it may cross to a worker thread). */
export interface HandoffJob {
  clientId: string;
  /**
   * The body, opened only by the thread that builds or sends it: an HTTP submission's
   * payload JSON (the Message-ID fixed at submission kept beside it), or SMTP bytes
   * relayed as they are with their envelope.
   */
  source: 'http' | 'smtp';
  body: BodyBytes;
  messageIdHeader: string | null;
  /** An SMTP submission's envelope, sealed as stored or in clear; empty for an HTTP submission, whose envelope is built from its payload. */
  envelope: JobEnvelope;
  /** Replaces the envelope sender (VERP, core/bounce/verp.ts); null keeps the client's. */
  returnPath: string | null;
  account: Account;
  tenant: BuildRequest['tenant'];
  /** The keys of the tenant's sending domains: the message is signed by those of its From domain. */
  dkim: DkimSigner[];
  /**
   * The one-click unsubscribe header lines (core/tenant/list-unsubscribe.ts), put in front unless
   * the message carries a List-Unsubscribe of its own; null: none.
   */
  listUnsubscribe: string[] | null;
}

/** What came of a handoff: the relay's reply, or why the message could not be built. */
export type HandoffResult =
  { built: true; reply: RelayReply; files?: OffloadedFiles } | { built: false; reason: string; transient: boolean };

/** Builds and relays messages, on this thread or elsewhere: the adapter decides. */
export interface Handoff {
  deliver(job: HandoffJob): Promise<HandoffResult>;
  /** Every relay's pools, wherever they run (relay threads are asked). */
  connections(): Promise<RelayConnections[]>;
  close(): Promise<void>;
}

export interface BuiltMessage {
  raw: Buffer;
  envelope: Envelope;
  messageIdHeader: string;
  /** The attachments it carries as download links instead (attachment-offload.ts); absent: none. */
  files?: OffloadedFiles;
}

/**
 * Builds the RFC 5322 bytes. An attachment that cannot be fetched rejects with
 * AppError code `ATTACHMENT_UNAVAILABLE` (transient: retried like a 4yz).
 */
export interface MessageBuilder {
  build(request: BuildRequest): Promise<BuiltMessage>;
}
