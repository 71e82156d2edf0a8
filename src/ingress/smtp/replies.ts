/**
 * SMTP replies as data: a code, an enhanced status (RFC 3463) and a text. A
 * handler fails with one and the connection (connection.ts) writes it with its
 * own enhanced status, not the one smtp-server would derive from the code.
 */

export class SmtpReply extends Error {
  readonly responseCode: number;
  readonly status: string;
  readonly text: string;

  constructor(code: number, status: string, text: string) {
    // smtp-server writes `message`; connection.ts splits the status off again.
    super(`${status} ${text}`);
    this.name = 'SmtpReply';
    this.responseCode = code;
    this.status = status;
    this.text = text;
  }
}

const ENHANCED = /^([245]\.\d{1,3}\.\d{1,3}) (.*)$/s;

/** The enhanced status a reply text starts with, and the rest. */
export function splitEnhanced(text: string): { status: string; rest: string } | null {
  const match = ENHANCED.exec(text);
  return match === null ? null : { status: match[1] ?? '', rest: match[2] ?? '' };
}

export const replies = {
  authRequired: () => new SmtpReply(530, '5.7.0', 'Authentication required'),
  badCredentials: () => new SmtpReply(535, '5.7.8', 'Authentication credentials invalid'),
  authThrottled: (seconds: number) =>
    new SmtpReply(454, '4.7.0', `Too many failed authentications from your address; try again in ${seconds} s`),
  encryptionRequired: () =>
    new SmtpReply(538, '5.7.11', 'Encryption required: use STARTTLS (or the TLS port) before AUTH'),
  accountNotOwned: (account: string) =>
    new SmtpReply(550, '5.7.1', `Account ${account} is not available to this tenant`),
  /** `accountIds`: the tenant's accounts, one of which the client may name (unknown when refused after DATA). */
  noAccount: (accountIds?: readonly string[]) =>
    new SmtpReply(
      550,
      '5.7.1',
      'No sending account: the tenant has no default account; log in as user <tenant>/<account>' +
        (accountIds === undefined
          ? ''
          : accountIds.length === 0
            ? ' (the tenant has no account)'
            : ` with one of: ${accountIds.join(', ')}`) +
        ', name it in an X-Mail-Proxy-Account header, or give the tenant a default account',
    ),
  badRecipient: () => new SmtpReply(553, '5.1.3', 'Recipient address is not a valid mailbox'),
  suppressed: () => new SmtpReply(550, '5.1.1', 'Recipient is on the suppression list of this tenant'),
  tooManyRecipients: (max: number) => new SmtpReply(452, '4.5.3', `Too many recipients (at most ${max} per message)`),
  tooManyConnections: () => new SmtpReply(421, '4.7.0', 'Too many connections from your address; try again later'),
  tooManyClients: () => new SmtpReply(421, '4.7.0', 'Too many connected clients, try again in a moment'),
  draining: () => new SmtpReply(421, '4.3.2', 'This node is draining; submit to another node of the fleet'),
  shuttingDown: () => new SmtpReply(421, '4.3.2', 'Service shutting down; try again later'),
  dataTimeout: () => new SmtpReply(421, '4.4.2', 'Message transfer took too long; closing'),
  headerTooLarge: (max: number) => new SmtpReply(552, '5.3.4', `Header section exceeds ${max} bytes`),
  messageTooLarge: (max: number) =>
    new SmtpReply(552, '5.3.4', `Message exceeds the fixed maximum message size of ${max} bytes`),
  badControlHeader: (name: string, why: string) => new SmtpReply(554, '5.6.0', `${name}: ${why}`),
  refused: (reason: string) => new SmtpReply(554, '5.6.0', `Message refused: ${reason}`),
  unavailable: () => new SmtpReply(421, '4.3.0', 'Local error; try again later'),
  storeFailed: () =>
    new SmtpReply(451, '4.3.0', 'Local error: the message could not be stored; nothing was kept, try again later'),
} as const;

/**
 * Texts of the final 250 of a transaction (the callback's value, written with its
 * enhanced status like the replies above). Plain strings: an SmtpReply is an Error,
 * and capturing its stack for every accepted message is measurable.
 */
export const acceptedTexts = {
  queued: (id: string) => `2.0.0 Ok: queued as ${id}`,
  alreadyAccepted: (id: string) => `2.0.0 Ok: ${id} was accepted before and is not queued again`,
} as const;
