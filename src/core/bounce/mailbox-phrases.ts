/**
 * What a diagnostic's words say about the recipient's mailbox: it does not
 * exist, it is full, it is disabled, the message is too big for it, or a list
 * will not take a post. Data only, for the ordered table of bounce-reasons.ts;
 * every pattern bounded (no backtracking on hostile text).
 */
import { anyOf } from './reason.js';

/**
 * Google Groups' standard refusal ("... or you may not have permission to post
 * messages to the group"), by the language Google writes it in (the sender's):
 * its words for "permission to post". Other list servers say the same in
 * English ("not a member", "moderator"), in the phrases below.
 */
export const GROUP_POSTING_REFUSALS: ReadonlyArray<readonly [language: string, pattern: RegExp]> = [
  ['en', /permission to post/i],
  ['de', /Berechtigung(en)?\b.{0,60}\bposten/i],
  ['fr', /autoris[ée]e?s? à (lui |y )?(envoyer|publier|poster) des messages/i],
  ['es', /permisos? (necesarios? )?para publicar/i],
  ['it', /autorizzazion[ei] (necessari[ae] )?(a|per) pubblicare/i],
  ['pt', /permissão (necessária )?para (postar|publicar)/i],
  ['nl', /toestemming .{0,40}te (posten|plaatsen)/i],
  ['cs', /oprávnění .{0,30}(přidávat|publikovat) příspěvky/i],
  ['pl', /uprawnień do (publikowania|wysyłania)/i],
  ['ru', /(разрешения|прав) на (публикацию|отправку)/i],
  ['el', /δικαίωμα ανάρτησης/i],
  ['hi', /पोस्ट करने की अनुमति/],
  ['ja', /投稿する権限/],
  ['zh', /(发帖|發文|发布|發佈)的?(权限|權限)/],
  ['ko', /게시할 (수 있는 )?권한/],
];

/** A mailbox over its storage quota. */
export const MAILBOX_FULL_WORDS: RegExp = anyOf(
  [
    /mailbox (is )?full/,
    /over ?quota/,
    // Not a sender's quota (T-Online's "Send quota exceeded" is a sending limit).
    /(?<!(send|sending|outgoing) )quota (exceeded|full|violation)/,
    // GNU Mailutils' "message would exceed maximum mailbox size for this recipient".
    /exceed(s|ed)? (the |his |her |their )?(max(imum)? )?(storage|quota|mailbox)/,
    /insufficient (system )?storage/,
    // SmarterMail's "The domain size limit has been exceeded": the domain's whole storage.
    /(mailbox|domain) size limit/,
    // Gromox's "452 Mailbox <ann@example.net> is full".
    /mailbox <?[^\s<>]{1,254}>? is full/,
    /disk quota/,
    /full mailbox/,
    /mail ?(box|folder) (is )?(full|over)/,
    /user.{0,20}over.{0,10}quota/,
    /is over (its|the) (storage|quota)/,
    /not enough (storage|space)/,
    /mailbox has exceeded/,
    // BIGLOBE's "number of messages in" and WILLCOM's "volume of recipient's mailbox exceeded the local limit".
    /recipient's mailbox exceeded/,
    /account is full/,
    /box is full/,
    /storage (limit|quota|space)/,
    /out of storage/,
    /maildir over/,
  ],
  'i',
);

/** A message over a size limit. */
export const MESSAGE_TOO_LARGE_WORDS: RegExp = anyOf(
  [
    /message (size )?(is )?too (big|large)/,
    /message (size )?exceeds/,
    // iRedAPD's "Message size exceed (maybe caused by big attachment file)" (not "message exceeded", said of hops and time too).
    /message size exceed(ed)?\b/,
    /size (limit|exceeds)/,
    /exceeds? (the )?(maximum|max|fixed|allowed|size) (message )?size/,
    /mesg too big/,
    /message length exceeds/,
    /message is larger than/,
    /too large for/,
    /size of (the )?message/,
    /message size (is )?(over|above|greater)/,
    /exceeded the max(imum)? (message )?size/,
    // Sophos's "exceeded the allowed size", Sympa's "was over the maximum size", postfwd's "max message
    // size is 30MB", IceWarp's "Message is too long".
    /(exceeded|over) the (allowed|maximum|max) size/,
    /max(imum)? message size (is|of)\b/,
    /message (is )?too long/,
    // aiosmtpd's "552 Error: Too much mail data".
    /too much (mail )?data/,
  ],
  'i',
);

/** A mailbox or account that exists but takes no mail now. */
export const ACCOUNT_DISABLED_WORDS: RegExp = anyOf(
  [
    /disabled (recipient|mailbox|account|address|user)/,
    /(account|mailbox) (that )?you tried to reach is (disabled|inactive|suspended)/,
    /account is blocked/,
    /account (has been |is |was )?(disabled|suspended|deactivated|inactive|locked|closed|expired|frozen)/,
    /mailbox (has been |is |was )?(disabled|inactive|suspended|closed|deactivated|locked|frozen)/,
    /(user|recipient|address) (account )?(is |has been )?(disabled|suspended|inactive|deactivated)/,
    /no longer (active|available|in use|valid)/,
    /account (is )?unavailable/,
    /this account has been/,
    /mailbox .{0,30}not (active|enabled)/,
    /user account expired/,
    /(mailbox|account) temporarily (disabled|suspended)/,
    /recipient suspended/,
    // Mail.ru's "Local mailbox ... is unavailable: user is terminated".
    /(user|account|mailbox) (is|has been) terminated/,
    /mailbox currently suspended/,
    /service (is )?suspended/,
    /suspended (account|mailbox|user)/,
  ],
  'i',
);

/** An address the receiving system does not know. */
export const USER_UNKNOWN_WORDS: RegExp = anyOf(
  [
    /user unknown/,
    /unknown user/,
    // MailEnable's "recipient is not defined in address map".
    /recipient (is )?not defined/,
    /invalid .{0,20}userid/,
    /no such (user|mailbox|recipient|address|account|person)/,
    /user (not found|does not exist|doesn'?t exist|not exist)/,
    /(recipient|mailbox|e-?mail account|account|address) (address )?(does not exist|doesn'?t exist|not found|unknown|not exist)/,
    /(address|e-?mail account) (that )?you tried to reach does not exist/,
    /(invalid|unknown|bad|non-?existent) (recipient|mailbox|user|address|e-?mail)/,
    /not a valid (recipient|mailbox|user|address)/,
    /no mailbox/,
    /mailbox (not found|unavailable|does not exist)/,
    /unknown local[- ]part/,
    /bad destination mailbox/,
    /address (is )?(unknown|invalid)/,
    /is not a known user/,
    // A list server's unknown list (Sympa's "is not a known mailing list"); a gateway's list of
    // addresses found invalid (Proofpoint's "User email address is marked as invalid").
    /not a known (mailing )?list/,
    /address is marked (as )?invalid/,
    /undeliverable address/,
    /user.{0,20}(is )?not (listed|local|known)/,
    /no account by that name/,
    /unable to find (the )?recipient/,
    /not our customer/,
    /has moved/,
    /invalid address/,
    /recipient not found/,
    /recipient address rejected: access denied/,
    /doesn'?t have a .{1,40} account/,
    // Domino's router (ERR_ROUTER_NOSUCHUSER): "User %a not listed in Domino Directory", in R5 "... in public Name & Address Book".
    /not listed in (the )?(domino )?directory/,
    /not listed in (the )?public name (&|and) address book/,
    /unknown (or invalid )?recipient/,
    /addressee unknown/,
    /no valid recipients/,
    /recipient (is )?not (valid|found)/,
    /unknown address/,
    /no such local user/,
    /account does not exist/,
    /not a registered user/,
    /address (could not|couldn'?t) be found/,
    /recipient name is not recognized/,
    /nicht gefunden/,
    /inexistant/,
    /no existe/,
  ],
  'i',
);
