/**
 * The documented refusals of Russian and Asian mailbox providers, for bounce-vendor-wording.ts:
 * NetEase's code tokens ("DT:SPM", "MI:SFQ"...), Yandex's own reply texts and Mail.ru's
 * not-spam support link, each cited above its block. Descriptions are ours.
 * Data only; every pattern bounded (no backtracking on hostile text).
 *
 * Left out, no documented refusal text of theirs being found:
 * - Naver (Korea): no Naver page on its SMTP refusals could be found; only third-party Korean
 *   lists of replies that tell a blocked sender to register its IP at realip.naver.com.
 * - NTT docomo, au (KDDI), SoftBank (Japan): au's "EZwebメール送受信仕様"
 *   (https://www.au.com/mobile/service/attention/specification/) says only that a nonexistent
 *   address is refused with a 550 reply, no text; the carriers' texts ("Unknown user", "User
 *   unknown", "Invalid recipient") are known from a third party only (SendMagic's notes on
 *   note.com), and are generic English that the other rules already read.
 */
import type { ReasonTable } from './reason.js';

/**
 * NetEase (163.com, 126.com, yeah.net, NetEase enterprise mail): "企业退信的常见问题?"
 * (http://help.163.com/09/1224/17/5RAJ4LMH00753VB8.html), which its refusals' links
 * (http://mail.163.com/help/help_spam_16.htm) lead to. That page is not among the stored copies
 * here: the codes and meanings were read from transcriptions of it, CSDN's copy
 * (https://blog.csdn.net/weixin_39937412/article/details/119584218) and the code tables in
 * public repositories' comments; the categories are ours. The code follows the reply code,
 * e.g. "554 DT:SPM 163 smtp10,...". Left out: MI:CEL, MI:CCL, RP:CEL, RP:CCL (too many bad or
 * surplus SMTP commands in one version of the table, "abnormal sending" in another: no one reason).
 */
const NETEASE: ReasonTable = [
  // DT:SPM: the content looks like spam (or the sending set-up is not clean); DT:RBL: the IP is on
  // one or more DNS block lists; HL:REP: the IP sent to many nonexistent recipients; HL:MEP: the
  // IP forged many sender domains; HL:IHU: the IP suspended for spam or abnormal connections;
  // HL:IPB, WM:BLI: the IP is not among those NetEase accepts; MI:SPB, WM:BLU: likewise the sender.
  ['spam_block', /\b(?:DT:(?:SPM|RBL)|HL:(?:REP|MEP|IHU|IPB)|WM:BL[IU]|MI:SPB)\b/],
  // HL:ICC: too many concurrent connections from the IP; HL:IFC, HL:IFQ, HL:ITC: too much mail from
  // the IP in a short time; MI:DMC: too many messages in one connection; MI:SFQ: the sender's
  // 15-minute allowance; MI:STC: the sender's daily allowance; RP:DRC, RP:RCL: too many recipients
  // in one connection or one message; RP:QRC, RP:TRC: the sender's recipients over a while or a day.
  ['rate_limited', /\b(?:HL:(?:ICC|IFC|IFQ|ITC)|MI:(?:DMC|SFQ|STC)|RP:(?:DRC|RCL|QRC|TRC))\b/],
  // MI:NHD: an empty HELO; MI:IMF: a malformed sender address; MI:SPF, MI:DMA: the sender
  // domain's SPF or DMARC does not allow it; DT:SUM: envelope and header senders differ;
  // RP:FRL: NetEase does not relay.
  ['policy_block', /\b(?:MI:(?:NHD|IMF|SPF|DMA)|DT:SUM|RP:FRL)\b/],
];

/**
 * Yandex Mail: "Report on non-delivery to Yandex"
 * (https://yandex.com/support/mail/bounces/yandex.html, also at
 * https://yandex.com/support/yandex-360/customers/mail/en/bounces/yandex), the texts its servers
 * write and what each means. Only those no other server writes; the rest ("No such user",
 * "Mailbox size exceeded", a DNSBL's "Client host ... blocked using") is left to the other rules.
 */
const YANDEX: ReasonTable = [
  // Judged as spam; a sender of only spam is refused for a day.
  ['spam_block', /\bMessage rejected under suspicion of SPAM\b|\bBlocked by spam statistics\b/i],
  // The recipient's account is blocked for breaking Yandex's user agreement.
  ['account_disabled', /\bPolicy rejection on the target address\b/i],
];

/**
 * Mail.ru (mail.ru, bk.ru, list.ru, inbox.ru): a refusal as spam links to Mail.ru's not-spam
 * support form (help.mail.ru/notspam-support/id?c=...), which Mail.ru's spam help
 * (https://help.mail.ru/engmail-help/spam/faq) names as the way for a sender whose mail was
 * refused as spam. No Mail.ru page listing its refusal codes could be found among the stored
 * copies; the meaning of that refusal was also read from a third party's copy of Mail.ru's
 * help on it (https://errorsmaster.ru/oshibka-550-spam-message-rejected).
 */
const MAIL_RU: ReasonTable = [['spam_block', /\bhelp\.mail\.ru\/notspam-support\b/i]];

export const RU_ASIA_WORDING: ReasonTable = [...NETEASE, ...YANDEX, ...MAIL_RU];
