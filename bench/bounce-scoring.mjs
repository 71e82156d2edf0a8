// How one parser verdict is scored against a corpus item's expected values: the rules of the
// project's shared scorer (bounce-score.py), in JavaScript so that the bench can parse in-process.
// Knows nothing of any particular corpus file; the expectations come from the manifest at run time.

// The scorer's synonyms for each category: the parser prints the product's own names, but an
// older or newer vocabulary (Sisimai's) must land on the same category.
const SYNONYMS = {
  user_unknown:
    'user_unknown userunknown unknown_user no_such_user invalid_recipient recipient_unknown hasmoved has_moved',
  mailbox_full: 'mailbox_full mailboxfull over_quota quota_exceeded',
  host_unknown: 'host_unknown hostunknown domain_error no_such_domain notaccept not_accept',
  account_disabled: 'account_disabled suspend suspended disabled',
  spam_block: 'spam_block spam spamdetected blocked requireptr badreputation',
  policy_block:
    'policy_block policy policyviolation rejected filtered contenterror authfailure securityerror notcompliantrfc virusdetected norelaying failedstarttls',
  message_too_large: 'message_too_large mesgtoobig exceedlimit',
  expired: 'expired',
  rate_limited: 'rate_limited speeding toomanyconn',
  system_error: 'system_error systemerror networkerror mailererror systemfull syntaxerror',
};
const SYN = new Map();
for (const [category, words] of Object.entries(SYNONYMS)) for (const word of words.split(' ')) SYN.set(word, category);

export function normReason(reason) {
  if (typeof reason !== 'string') return null;
  const key = reason
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_|_$/g, '');
  return SYN.get(key) ?? SYN.get(key.replaceAll('_', '')) ?? null;
}

export function addrKey(value) {
  if (typeof value !== 'string') return null;
  let a = value.trim();
  const bracketed = /<([^<>]+)>/.exec(a);
  if (bracketed) a = bracketed[1];
  a = a.split(';').slice(-1)[0].trim().toLowerCase();
  if (a.startsWith('mailto:')) a = a.slice(7);
  const at = a.lastIndexOf('@');
  if (at >= 0)
    a = `${a
      .slice(0, at)
      .trim()
      .replace(/^"+|"+$/g, '')}@${a
      .slice(at + 1)
      .trim()
      .replace(/\.+$/, '')}`;
  return a === '' ? null : a;
}

export function normStatus(value) {
  if (value === null || value === undefined) return null;
  const m = /\b([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(String(value));
  return m ? `${m[1]}.${Number(m[2])}.${Number(m[3])}` : null;
}

const klassOf = (status) => ({ 5: 'hard', 4: 'soft' })[String(status ?? '')[0]] ?? null;

/** In a multi-recipient sample, the entry whose recipients include the predicted one (its own values are then required). */
function entryFor(item, rcpt) {
  const entries = (item.entries ?? []).filter((e) => e.bounce_type != null || e.status);
  if (!rcpt || entries.length < 2) return null;
  return entries.find((e) => (e.recipients ?? []).map(addrKey).includes(rcpt)) ?? null;
}

/** One item's scores: each metric present is true or false (hardsoft also keeps the expected class). */
export function scoreItem(item, prediction, sisimaiCategories) {
  const exp = item.expected;
  const out = { id: item.id, mta: item.mta };
  const p = prediction ?? {};
  const isBounce = Boolean(p.is_bounce);
  if (!(item.ambiguity ?? []).includes('is_bounce') && 'is_bounce' in exp)
    out.detect = [Boolean(exp.is_bounce), isBounce];
  if (!exp.is_bounce) return out;
  const type = isBounce && typeof p.bounce_type === 'string' ? p.bounce_type.toLowerCase() : null;
  const rcpt = isBounce ? addrKey(p.recipient) : null;
  const status = isBounce ? normStatus(p.enhanced_status) : null;
  const category = isBounce ? normReason(p.reason) : null;
  const e = entryFor(item, rcpt);
  if (exp.bounce_type) {
    let accepted = exp.bounce_types_accepted ?? [exp.bounce_type];
    if (e?.bounce_type) {
      const fromEntries = new Set((item.entries ?? []).map((x) => x.bounce_type).filter(Boolean));
      const extra = accepted.filter((t) => !fromEntries.has(t));
      accepted = [e.bounce_type, klassOf(e.second_opinion?.status), ...extra].filter(Boolean);
    }
    out.hardsoft = { expected: exp.bounce_type, ok: accepted.includes(type) };
  }
  if (exp.enhanced_status && exp.enhanced_status_in_message) {
    let accepted = (exp.enhanced_statuses_accepted ?? [exp.enhanced_status]).map(normStatus);
    if (e?.status) accepted = [normStatus(e.status), normStatus(e.second_opinion?.status)];
    out.status = status !== null && accepted.includes(status);
  }
  if (exp.recipients?.length) out.recipient = rcpt !== null && exp.recipients.map(addrKey).includes(rcpt);
  if (exp.reason_categories?.length) {
    let accepted = [...exp.reason_categories];
    if (e?.category) {
      accepted = [e.category];
      const second = sisimaiCategories.get(e.second_opinion?.reason);
      if (second) accepted.push(second);
    }
    out.reason = category !== null && accepted.includes(category);
  }
  return out;
}

const share = (hits, all) => (all === 0 ? null : (100 * hits) / all);

/** The figures of a set of scored items, in percent (null where the set has no such item). */
export function figures(scored) {
  const of = (key) => scored.filter((s) => key in s).map((s) => s[key]);
  const detect = of('detect');
  const tp = detect.filter(([e, p]) => e && p).length;
  const fp = detect.filter(([e, p]) => !e && p).length;
  const fn = detect.filter(([e, p]) => e && !p).length;
  const hs = of('hardsoft');
  const hard = hs.filter((h) => h.expected === 'hard');
  const soft = hs.filter((h) => h.expected === 'soft');
  const recall = (list) => share(list.filter((h) => h.ok).length, list.length);
  const balanced = hard.length > 0 && soft.length > 0 ? (recall(hard) + recall(soft)) / 2 : null;
  const rate = (key) => share(of(key).filter(Boolean).length, of(key).length);
  return {
    files: scored.length,
    'detection F1 %': share(2 * tp, 2 * tp + fp + fn),
    'hard/soft %': recall(hs),
    'hard/soft balanced %': balanced,
    'status %': rate('status'),
    'recipient %': rate('recipient'),
    'reason %': rate('reason'),
  };
}
