/**
 * Telemetry ports: timings and results the intake, delivery and report paths
 * already hold, told to whoever watches (the metrics room's histograms, the
 * accounts' last attempts). The calls sit on hot paths: an implementation must
 * be cheap, synchronous and must not throw; it never does I/O.
 */
import type { Priority } from './message/message.js';

export type IntakeChannel = 'http' | 'smtp';

export interface IntakeTelemetry {
  /**
   * A submission (one HTTP request, one SMTP DATA) was answered after its
   * commit: `elapsedMs` from having it in full to the answer being ready.
   */
  submitted(channel: IntakeChannel, elapsedMs: number): void;
}

/** The SMTP listener a client connected to: the plain one (STARTTLS) or the implicit-TLS one. */
export type SmtpListener = 'plain' | 'implicit-tls';

/** Why an SMTP AUTH was refused: the credentials, or the client's address throttled after failures. */
export type AuthFailure = 'invalid' | 'throttled';

export interface SmtpTelemetry {
  connected(listener: SmtpListener): void;
  authFailed(reason: AuthFailure): void;
  /** A 4yz or 5yz reply was written: its code and enhanced status (RFC 3463; '' when it has none). */
  rejected(replyCode: number, enhancedStatus: string): void;
  /** An SMTP session process (`smtp.session_processes`) ended without being asked to, and is replaced. */
  sessionProcessLost(): void;
}

export interface HttpTelemetry {
  /**
   * A request was answered. `route` is the matched route's template (`/tenant/:id`),
   * never the path a client wrote; null when no route matched.
   */
  answered(route: string | null, method: string, status: number): void;
}

/** How an attempt ended, as core/delivery/delivery-outcome.ts decided. */
export type AttemptOutcome = 'sent' | 'deferred' | 'failed' | 'account_problem';

export interface AttemptReport {
  tenantId: string;
  accountId: string;
  outcome: AttemptOutcome;
  /** The SMTP transaction with the relay (RelayReply.transactionMs); null when the message never reached it. */
  relayMs: number | null;
  replyCode: number | null;
  /** The relay's words, or why the message could not be built. */
  text: string;
  at: number;
}

export interface DeliveryTelemetry {
  /** A claimed message left its account's lane for the relay, `waitMs` after it became due. */
  handedOff(priority: Priority, waitMs: number): void;
  attempted(attempt: AttemptReport): void;
  /** One claim from the queue took `elapsedMs` (its cost as the queue grows). */
  claimed(elapsedMs: number): void;
}

export interface ReportTelemetry {
  /** A tenant's client acknowledged a round: per event, ms from its writing to the acknowledgement. */
  acknowledged(tenantId: string, latenciesMs: readonly number[]): void;
}

/** One DeliveryTelemetry that tells each of `targets`. */
export function deliveryFanOut(...targets: DeliveryTelemetry[]): DeliveryTelemetry {
  return {
    handedOff: (priority, waitMs) => targets.forEach((target) => target.handedOff(priority, waitMs)),
    attempted: (attempt) => targets.forEach((target) => target.attempted(attempt)),
    claimed: (elapsedMs) => targets.forEach((target) => target.claimed(elapsedMs)),
  };
}

/** Provider webhooks: each request by result (`ok` or its refusal's code), each event by outcome. */
export interface WebhookTelemetry {
  request(provider: string, result: string): void;
  events(provider: string, outcome: 'applied' | 'duplicates' | 'unmatched', count: number): void;
}
