export { type SmtpIngress } from './server.js';
export type { SmtpSessionDeps } from './session.js';
export { createSmtpService } from './smtp-service.js';
