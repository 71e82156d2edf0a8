/**
 * How auto-replies (RFC 3834) name themselves in their subject when they send
 * no Auto-Submitted header, as Outlook and most webmail do: a prefix in the
 * replier's language, before the original subject. Data only, tried on the
 * decoded subject; every pattern is anchored and bounded.
 */
export const AUTO_REPLY_SUBJECT_PREFIXES: ReadonlyArray<readonly [language: string, pattern: RegExp]> = [
  [
    'en',
    /^auto(matic)?[ -]?(reply|response|answer)\b|^out of (the )?office\b|^vacation\b|^absence\b|^i am (currently )?out\b|^away from\b/i,
  ],
  ['de', /^automatische antwort\b|^auto[ -]?antwort\b|^abwesenheit|^ausser haus\b|^außer haus\b/i],
  ['fr', /^r[ée]ponse automatique\b|^absence du bureau\b|^message d'absence\b/i],
  ['es', /^respuesta autom[áa]tica\b|^fuera de la oficina\b/i],
  ['it', /^risposta automatica\b|^fuori ufficio\b/i],
  ['pt', /^resposta autom[áa]tica\b|^fora do escrit[óo]rio\b|^aus[êe]ncia\b/i],
  ['nl', /^automatisch antwoord\b|^afwezig(heid)?\b|^niet aanwezig\b/i],
  ['sv', /^automatiskt svar\b|^fr[åa]nvaro(meddelande)?\b/i],
  ['da/no', /^automatisk svar\b|^frav[æa]r(smelding|sbesked)?\b/i],
  ['fi', /^automaattinen vastaus\b/i],
  ['pl', /^automatyczna odpowied[źz]|^poza biurem\b/i],
  ['cs', /^automatická odpověď|^mimo kancelář/i],
];

/** A subject's own prefix that marks it as an auto-reply, in any of the languages above. */
export function isAutoReplySubject(subject: string): boolean {
  const trimmed = subject.trim();
  return AUTO_REPLY_SUBJECT_PREFIXES.some(([, pattern]) => pattern.test(trimmed));
}
