/**
 * What the PEC tests share: the Dovecot user whose mailbox a PEC account reads,
 * the account's fields for it, and the Message-ID a relayed message carried
 * (what the provider's receipts refer to).
 */
import type { DovecotPeer, DovecotUser } from '../peers/dovecot.js';
import type { SmtpSink } from '../peers/smtp-sink.js';

/** The PEC account's mailbox user; the relay logs in with the same credentials, as at PEC providers. */
export const PEC_USER: DovecotUser = { user: 'fatture', password: 'pec-secret' };

/** `POST /account` fields of a PEC account relaying to a sink and reading its receipts from `dovecot`. */
export const pecAccountFields = (dovecot: Pick<DovecotPeer, 'port'>): Record<string, unknown> => ({
  is_pec: true,
  user: PEC_USER.user,
  password: PEC_USER.password,
  imap_host: '127.0.0.1',
  imap_port: dovecot.port,
  imap_tls_mode: 'none',
});

/** The Message-ID the sink received the message of client id `id` with; throws when it received none. */
export function relayedMessageId(sink: Pick<SmtpSink, 'messages'>, id: string): string {
  const copy = sink.messages.find((received) => received.raw.toString('utf8').includes(`X-Genro-Mail-ID: ${id}`));
  const messageId = /^Message-ID:\s*(<[^>]+>)/im.exec(copy?.raw.toString('utf8') ?? '')?.[1];
  if (messageId === undefined) throw new Error(`the sink did not receive ${id}`);
  return messageId;
}
