/**
 * Intake counters: SMTP connections by listener, AUTH failures by reason,
 * refusals by reply code and enhanced status class, HTTP requests by route
 * template, method and status. Every label comes from a small set of ours (the
 * listeners, the reply table, the registered routes), never from what a client
 * wrote, so a scanner cannot grow the series without bound.
 */
import { Counter, type Registry } from 'prom-client';
import type { AuthFailure, HttpTelemetry, SmtpListener, SmtpTelemetry } from '../core/index.js';

const LISTENERS: readonly SmtpListener[] = ['plain', 'implicit-tls'];
const AUTH_FAILURES: readonly AuthFailure[] = ['invalid', 'throttled'];
/** A request no route matched (the 404 of an unknown path): one series, whatever the path. */
export const UNMATCHED_ROUTE = 'unmatched';

/** RFC 3463 §3.1: the class and subject of `5.7.8` are `5.7` (security or policy); none when the reply had no status. */
const statusClass = (enhancedStatus: string): string => /^[245]\.\d{1,3}/.exec(enhancedStatus)?.[0] ?? 'none';

export interface IntakeCounters {
  smtp: SmtpTelemetry;
  http: HttpTelemetry;
}

export function registerIntakeCounters(registers: Registry[]): IntakeCounters {
  const connections = new Counter({
    name: 'mailproxy_smtp_connections_total',
    help: 'SMTP connections accepted, by listener (plain with STARTTLS, implicit-tls)',
    labelNames: ['listener'],
    registers,
  });
  const authFailures = new Counter({
    name: 'mailproxy_smtp_auth_failures_total',
    help: 'SMTP AUTH attempts refused: invalid credentials, or the client address throttled after repeated failures',
    labelNames: ['reason'],
    registers,
  });
  const rejections = new Counter({
    name: 'mailproxy_smtp_rejections_total',
    help: 'SMTP replies refusing a command (4yz, 5yz), by reply code and enhanced status class and subject (RFC 3463, e.g. 5.7)',
    labelNames: ['reply_code', 'status_class'],
    registers,
  });
  const lostProcesses = new Counter({
    name: 'mailproxy_smtp_session_processes_lost_total',
    help: 'SMTP session processes (smtp.session_processes) that ended without being asked to, each replaced',
    registers,
  });
  const requests = new Counter({
    name: 'mailproxy_http_requests_total',
    help: 'HTTP API requests answered, by route template (unmatched: no route), method and status',
    labelNames: ['route', 'method', 'status'],
    registers,
  });
  // Zero from the start, so that rate() and increase() see the first event.
  for (const listener of LISTENERS) connections.inc({ listener }, 0);
  for (const reason of AUTH_FAILURES) authFailures.inc({ reason }, 0);

  return {
    smtp: {
      connected: (listener) => connections.inc({ listener }),
      authFailed: (reason) => authFailures.inc({ reason }),
      rejected: (replyCode, enhancedStatus) =>
        rejections.inc({ reply_code: String(replyCode), status_class: statusClass(enhancedStatus) }),
      sessionProcessLost: () => lostProcesses.inc(),
    },
    http: {
      answered: (route, method, status) =>
        requests.inc({ route: route ?? UNMATCHED_ROUTE, method, status: String(status) }),
    },
  };
}
