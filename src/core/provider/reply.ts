/**
 * The id a relay gave the message in its 250 reply: what a
 * provider's webhook later names the message by. Amazon SES answers
 * `250 Ok <SES message id>`, SendGrid and Postfix-like relays `250 Ok: queued as
 * <id>`, others `250 … id=<id>`. Null when the reply names none (Mailgun's
 * `250 Great success`): its webhooks are tied back by our own X-Genro-Mail-ID.
 */
const ID = String.raw`<?([A-Za-z0-9][A-Za-z0-9._@=+/-]{5,199})>?`;
const PATTERNS: readonly RegExp[] = [
  new RegExp(String.raw`\bqueued as ${ID}`, 'i'),
  new RegExp(String.raw`\b(?:id|message-id|msgid)[=: ]\s*${ID}`, 'i'),
  // `Ok <id>` closing the reply: one token, long enough not to be a word.
  new RegExp(String.raw`\bok[:,]?\s+${ID}\s*$`, 'i'),
];

export function providerIdOfReply(text: string | null): string | null {
  if (text === null) return null;
  const reply = text.slice(0, 1024);
  for (const pattern of PATTERNS) {
    const id = pattern.exec(reply)?.[1];
    // A trailing dot closes a sentence, it is not part of the id.
    if (id !== undefined) return id.replace(/[.]+$/, '');
  }
  return null;
}
