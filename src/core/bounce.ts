/** A bounce tied back to one of our messages: what the bounce room finds and the store records. */

export interface BounceRecord {
  tenantId: string;
  /** The client's id of the message. */
  messageId: string;
  type: 'hard' | 'soft';
  /** The enhanced status (5.1.1) or reply code the bounce carried. */
  code: string | null;
  reason: string | null;
  /** The bounced recipient, when the bounce names it. */
  recipient: string | null;
  at: number;
}

export interface BounceStore {
  /**
   * Sets the message's bounce fields (the latest bounce wins) and writes its
   * `bounced` event, which the client is then told of. False when the message
   * does not exist (any more).
   */
  record(bounce: BounceRecord): boolean;
}
