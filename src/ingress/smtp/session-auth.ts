/**
 * The SMTP session's AUTH: an API key signs in as the tenant its user name
 * names, over TLS unless the operator allows otherwise or the client is local.
 */
import type { SMTPServerAuthentication, SMTPServerSession } from 'smtp-server';
import { AppError } from '../../core/index.js';
import { isLoopback, parseUser, type AuthenticatedIdentity } from './identity.js';
import { replies, SmtpReply } from './replies.js';
import { whenAnswered, type SmtpCallback, type SmtpSessionDeps } from './session-deps.js';

export function createAuthHandler(deps: SmtpSessionDeps) {
  const { policy, log } = deps;
  const refusal = (error: unknown): SmtpReply => {
    if (error instanceof AppError && error.code === 'AUTH_THROTTLED')
      return replies.authThrottled(
        Number((error.details as { retry_after_seconds?: number }).retry_after_seconds ?? 60),
      );
    if (error instanceof AppError && error.code === 'UNAUTHORIZED') return replies.badCredentials();
    log.error({ err: error }, 'smtp authentication failed unexpectedly');
    return new SmtpReply(454, '4.7.0', 'Temporary authentication failure');
  };
  return function onAuth(
    auth: SMTPServerAuthentication,
    session: SMTPServerSession,
    callback: SmtpCallback<{ user: AuthenticatedIdentity }>,
  ) {
    if (!session.secure && !policy.allowInsecureAuth && !isLoopback(session.remoteAddress))
      return callback(replies.encryptionRequired());
    const wanted = parseUser(auth.username ?? '');
    // Only the named tenant's key signs in: another valid key, or any key under a user name
    // that names no tenant, is a failed attempt (and throttled as one).
    whenAnswered(
      () => deps.authenticate(auth.password ?? '', session.remoteAddress, wanted?.tenantId ?? null),
      () => (wanted === null ? callback(replies.badCredentials()) : callback(null, { user: wanted })),
      (error) => callback(refusal(error)),
    );
  };
}
