/**
 * A mailing-list server's own notice that it did not take a post: no DSN, no
 * reply code, only its subject and the list's address in its text. Written
 * from fml's source (fmlorg/fml4, kern/fml.pl: RejectHandler, DupMessageIdP),
 * not from sample bounces. Data and one look-up; pure.
 */

/**
 * fml's subjects: RejectHandler sends the sender "You <address> are not member
 * (<list> ML)"; DupMessageIdP warns "Loop Alert: Duplicated Message-ID ..."
 * when a post carries a Message-ID the list has already seen. Anchored, bounded.
 */
export const LIST_REFUSAL_SUBJECTS: readonly RegExp[] = [
  /^you [^\s@]{1,64}@[^\s]{1,255} are not member\b/i,
  /^loop alert: duplicated message-id\b/i,
];

/**
 * Where the notice names the list that refused the post, the address our
 * message was sent to: fml's deny text "You are not a member of this mailing
 * list <list>" and its loop alert "Duplicated Message-ID [is detected] in <list>".
 */
const LIST_NAMED: readonly RegExp[] = [
  /not a member of this mailing list <([^<>\s@]{1,64}@[^<>\s]{1,255})>/i,
  /duplicated message-id (?:is detected )?in <([^<>\s@]{1,64}@[^<>\s]{1,255})>/i,
];

export function isListRefusalSubject(subject: string): boolean {
  const trimmed = subject.trim();
  return LIST_REFUSAL_SUBJECTS.some((pattern) => pattern.test(trimmed));
}

/** The list's address, lower-cased, when the text is such a notice; else null. */
export function refusingListIn(text: string): string | null {
  for (const pattern of LIST_NAMED) {
    const address = pattern.exec(text)?.[1];
    if (address !== undefined) return address.toLowerCase();
  }
  return null;
}
