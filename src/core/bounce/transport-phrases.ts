/**
 * What a diagnostic's words say about the way to the recipient: a system or
 * network trouble, a domain that does not exist, a sender held back, a message
 * that waited too long. Data only, for the ordered table of bounce-reasons.ts;
 * every pattern bounded.
 */
import { anyOf } from './reason.js';

// A name server that failed for now is a network trouble, not a verdict on the domain. A host that
// refuses the connection or cannot be reached is up to no verdict either: named in the diagnostic, it
// outranks a queue's "could not be delivered for 4 hours" (a timeout, after retries, is expiry).
export const SYSTEM_TROUBLE_WORDS: RegExp = anyOf(
  [
    /host not found, try again/,
    /temporary local problem/,
    /network (error|unreachable|failure)/,
    /no route to host/,
    /connection refused/,
    /ldap server/,
    /directory server/,
    /temporary (dns|name ?server|lookup) (failure|error)/,
    /servfail/,
    /operating system error/,
    /mailer error/,
    /local (configuration )?error/,
    /i\/o error/,
    /internal (server |delivery )?error/,
    /out of memory/,
    /bad interpreter/,
    /failed to (read|open|write)/,
    /pipe to/,
    // Postal's "No SMTP servers were available for example.net".
    /no (smtp )?servers? (were |was )?available/,
    // ZoneMTA's "Connection to mx.example.net closed unexpectedly".
    /closed unexpectedly/,
  ],
  'i',
);

// Exim's "Unrouteable address": no router took the address, which for a remote domain means its DNS
// lookup found nothing (a remote server's 5xx reply with those words is corrected in REASON_OVERRIDES).
export const HOST_UNKNOWN_WORDS: RegExp = anyOf(
  [
    /unrout(e)?able address/,
    /host (or domain name )?(not found|unknown)/,
    /unknown host/,
    /(domain|host) (name )?(not found|does not exist|unknown)/,
    /no such (domain|host)/,
    /name or service not known/,
    /nxdomain/,
    /unrouteable (mail )?domain/,
    /null mx/,
    /no mx (record|host)/,
    // Exim's dnslookup router: a domain whose MX hosts all fail to resolve.
    /mx records? points? to non-?existent hosts?/,
    /dns (error|lookup|failure)/,
    /domain (is )?(invalid|not (exist|accept))/,
    /domain is not reachable/,
    /host not reachable/,
    /does not accept mail/,
    /doesn'?t receive (e-?)?mail/,
    /(?<![@\w.-])[a-z0-9-]{1,63}(\.[a-z0-9-]{1,63}){1,8} does not exist/,
    /unknown domain/,
    /invalid domain/,
    /mx (record )?lookup failed/,
    /no (valid )?mx/,
    /not accept(ing)? (e-?)?mail/,
    /domain not found/,
  ],
  'i',
);

/** A sender held back for its rate or volume. */
export const RATE_LIMITED_WORDS: RegExp = anyOf(
  [
    /rate ?limit/,
    // Exim's smtp_accept_max_per_host, Dovecot LMTP's lmtp_user_concurrency_limit, Haraka's limit plugin.
    /too many (concurrent |simultaneous |parallel |open |new )?(smtp )?(messages|connections|recipients|mails|sessions|emails|deliveries)/,
    // Gmail's "Peak SMTP relay limit exceeded", Exchange's "recipient thread limit exceeded" and hourly receive limits.
    /(relay|sending|send|receive|message|recipient|thread|connection) limit\b.{0,20}\b(exceeded|reached)/,
    // postfwd's "only 5 recipients per 5 minutes allowed", Mox's "more than 500 messages in past 1m0s",
    // its "max number of messages (1000) over past 24h reached", postfwd's "max recipient count is 200".
    /\bonly \d+ ?\w{0,12} per \d* ?(second|minute|hour|day)s?\b/,
    /more than \d+ (messages|recipients|connections) (in|per|within) /,
    /max(imum)? number of (messages|recipients|connections)\b.{0,30}\b(reached|exceeded)/,
    /max(imum)? recipients?( count)? (is|exceeded|reached)/,
    /too (frequent|often)/,
    /per (hour|day|minute)\b.{0,40}\blimit\b/,
    /throttl/,
    /slow down/,
    /exceeded .{0,30}(rate|limit|connections)/,
    /sending limit/,
    // T-Online's "Send quota exceeded", Modoboa's "Daily limit reached", Gromox's "Too many MAIL transactions".
    /(send|sending|outgoing) quota/,
    /daily (e-?mail |mail |message |sending )?limit/,
    /too many (mail )?transactions/,
    /temporarily (rate|deferred)/,
    /too fast/,
    /try again later, closing connection/,
    /unexpected volume/,
    /receiving too much mail/,
    /exceeded the (maximum )?number of/,
    /frequency limit/,
    /over the limit/,
  ],
  'i',
);

/** A message that waited too long or whose delivery gave up after retries. */
export const EXPIRED_WORDS: RegExp = anyOf(
  [
    /connection timed out/,
    /timed out/,
    // IMail's "Delivery failed 20 attempts", SmarterMail's "Failed four Attempts to connect to recipients mail server".
    // The count in figures or in words (not "failed login attempts").
    /failed (\d+|two|three|four|five|six|seven|eight|nine|ten|several|multiple) attempts/,
    /delivery time expired/,
    /retry time(out)? (exceeded|expired|reached)/,
    /have been failing for a long time/,
    /message (has )?expired/,
    /could not be delivered (for|within) \d+/,
    /has (not yet )?been delivered/,
    /delayed/,
    /queued too long/,
    /too long in (the )?queue/,
    /in the queue too long/,
    /giving up/,
    /gave up/,
    /expired after/,
    /time limit exceeded/,
    /timeout exceeded/,
    /delivery (attempts )?will continue/,
    /no answer from host/,
    /retry timeout/,
    /message could not be delivered for/,
    /has been delayed/,
    /did not accept our requests to connect/,
    /not (been )?delivered .{0,20}(hours|days)/,
    /undelivered after/,
    /will keep trying/,
    // Hours, not seconds: a delivery "aborted after 2 second(s)" is a refusal, not a timeout.
    /aborted after \d+(\.\d+)? hour/,
    /deferred .{0,30}(hours|days)/,
    /unable to deliver in \d+/,
    /could not deliver .{0,30}(hours|days)/,
    /delivery period expired/,
    // Delay notices: Stalwart's "Warning: Delay in message delivery", nullmailer's "A final delivery
    // status notification will be generated if delivery ... fails".
    /delay in (message )?delivery/,
    /a final (delivery status )?notification will be/,
    // ZoneMTA's delay notice: "Delivery will be retried. You'll be notified if the delivery fails permanently."
    /delivery will be retried/,
  ],
  'i',
);
