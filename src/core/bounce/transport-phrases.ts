/**
 * What a diagnostic's words say about the way to the recipient: a system or
 * network trouble, a domain that does not exist, a sender held back, a message
 * that waited too long. Data only, for the ordered table of bounce-reasons.ts;
 * every pattern bounded.
 */
import { anyOf } from './reason.js';

/**
 * One attempt's failure to reach the recipient's server: a name server that failed for now, a host
 * that refuses the connection, cannot be reached or does not answer in time. A verdict on neither the
 * domain nor the message: named in the diagnostic, it outranks a delay notice's "could not be
 * delivered for 4 hours"; a queue that gave up after such attempts is an expiry (REASON_OVERRIDES).
 * The MTAs' own words: the system's ETIMEDOUT text (Postfix's "connect to mx.example.net[192.0.2.1]:25:
 * Connection timed out", sendmail's "Connection timed out with mx.example.net"); Postfix's
 * smtp_trouble.c "lost connection with %s while %s" and "conversation with %s timed out while %s";
 * sendmail's err.c "Host %s is down" and "Name server: %s: host name lookup failure" (TRY_AGAIN).
 */
const NETWORK_TROUBLE: readonly RegExp[] = [
  /host not found, try again/,
  /network (error|unreachable|failure)/,
  /no route to host/,
  /connection refused/,
  /connection timed out/,
  /timed out while/,
  /lost connection with/,
  /host [^\s]{1,255} is down/,
  /host name lookup failure/,
  /temporary (dns|name ?server|lookup) (failure|error)/,
  /servfail/,
];

export const NETWORK_TROUBLE_WORDS: RegExp = anyOf(NETWORK_TROUBLE, 'i');

/** A system or network trouble on the way: the network's, then the servers' own. */
export const SYSTEM_TROUBLE_WORDS: RegExp = anyOf(
  [
    ...NETWORK_TROUBLE,
    /temporary local problem/,
    /ldap server/,
    /directory server/,
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

/**
 * A queue's own words for having given up on a message after its retry period, and the RFC 3463
 * status for it (X.4.7, delivery time expired): the expiry is the verdict on the delivery, and the
 * network trouble of the last attempt ("Connection refused") only how the attempts ended. A delay
 * notice ("could not be delivered for more than 4 hour(s)", still queued) is not one of these: a
 * queue's lifetime is counted in days (sendmail's "Message could not be delivered for 5 days",
 * queue.c, with status 4.4.7). Tried over all the texts about the recipient by REASON_OVERRIDES.
 */
export const QUEUE_GAVE_UP_WORDS: RegExp = anyOf(
  [
    /(?<![\d.])[45]\.4\.7(?![\d]|\.\d)/,
    /delivery time expired/,
    /delivery period expired/,
    /retry time(out)? (exceeded|expired|reached)/,
    /retry time not reached for any host after a long failure period/,
    /have been failing for a long time/,
    /message (has )?expired/,
    /expired after/,
    /could not be delivered (for|within) (more than )?\d{1,3} ?days?/,
    /(cannot|could not) send message (for|within) (the )?(past )?\d{1,3} (hours?|days?)/,
    /in the queue too long|queued too long|too long in (the )?queue/,
    /giving up|gave up/,
  ],
  'i',
);
