/**
 * NodemailerRelay: the Relay port over one pooled nodemailer SMTP transport per
 * account. Every outcome comes back as a RelayReply; what it means is core's call.
 */
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import type { Account } from '../core/account/index.js';
import type { Envelope, Relay, RelayReply } from '../core/delivery/index.js';
import { failureReply, parseReply, refusalOf, toSmtpFailure, type SmtpFailure } from './relay-failure.js';
import { createTransportPool, type TransportPoolOptions } from './transport-pool.js';

export { parseReply } from './relay-failure.js';

export { relayConnectionOptions } from './transport-pool.js';

export type NodemailerRelayOptions = TransportPoolOptions;

/** What nodemailer's report calls a message relayed whole (see send). */
const RAW_REPORT_ID = '<relayed-whole@mailproxy.invalid>';

export function createNodemailerRelay(options: NodemailerRelayOptions): Relay {
  const { log } = options;
  const transports = createTransportPool(options);

  return {
    async send(account: Account, envelope: Envelope, raw: Buffer, messageIdHeader?: string): Promise<RelayReply> {
      const entry = transports.checkOut(account);
      const ticket = entry.connections.enqueue();
      try {
        // With a Message-ID given, nodemailer does not draw five random numbers to
        // invent one for its report (randomBytes was a large share of relay CPU). A message
        // relayed whole (an SMTP submission) goes out byte for byte, its own Message-ID
        // included: the one given here only names it in nodemailer's report, which we do not read.
        const info = await entry.transport.sendMail({
          envelope: envelopeObjects(envelope),
          raw,
          messageId: messageIdHeader || RAW_REPORT_ID,
        });
        return timed(successReply(info), entry.connections.finish(ticket));
      } catch (error) {
        const reply = timed(failureReply(toSmtpFailure(error)), entry.connections.finish(ticket));
        log.debug(
          {
            tenantId: account.tenantId,
            accountId: account.id,
            stage: reply.stage,
            replyCode: reply.replyCode,
            errorCode: reply.errorCode,
          },
          'relay send failed',
        );
        return reply;
      } finally {
        transports.checkIn(entry);
      }
    },
    forget: (tenantId: string, accountId: string): void => transports.forget(tenantId, accountId),
    connections: () =>
      transports.entries().map((entry) => ({
        tenantId: entry.tenantId,
        accountId: entry.accountId,
        open: entry.connections.open(),
        inUse: entry.connections.inUse(),
      })),
    async close(): Promise<void> {
      transports.close();
    },
  };
}

function timed<R extends RelayReply>(reply: R, transactionMs: number | undefined): R {
  return transactionMs === undefined ? reply : { ...reply, transactionMs };
}

function successReply(info: SMTPPool.SentMessageInfo): RelayReply {
  const text = (info.response ?? '').trim();
  const { replyCode, enhancedStatus } = parseReply(text);
  const errors = (info.rejectedErrors ?? []) as SmtpFailure[];
  const refused = (info.rejected ?? []).map((recipient) =>
    refusalOf(
      String(recipient),
      errors.find((error) => error.recipient === recipient),
    ),
  );
  return {
    ok: true,
    replyCode: replyCode ?? 250,
    enhancedStatus,
    text,
    accepted: (info.accepted ?? []).map(String),
    refused,
  };
}

/**
 * The envelope as address objects, which nodemailer takes as they are. Given as
 * strings it re-parses them as header text: a quoted local part lost its quotes
 * (`"ann@x"@example.com` was relayed as `ann@x@example.com`, another mailbox and a
 * relay trick) and an IPv6 literal (`ann@[IPv6:::1]`) vanished, leaving a message
 * that was accepted but could never be sent. Found by test/security/open-relay.test.ts.
 */
function envelopeObjects(envelope: Envelope): {
  from: string | { address: string; name: string };
  to: Array<{ address: string; name: string }>;
} {
  return {
    // The null reverse-path stays the empty string: nodemailer sends it as MAIL FROM:<>.
    from: envelope.mailFrom === '' ? '' : { address: envelope.mailFrom, name: '' },
    to: envelope.rcptTo.map((address) => ({ address, name: '' })),
  };
}
