export { startSmtpIngress, type SmtpIngress, type SmtpIngressOptions, type Endpoint } from './server.js';
export type { SmtpPolicy, SmtpSessionDeps } from './session.js';
export type { TrustedNetwork } from './identity.js';
export { createSmtpService, type SmtpService, type SmtpSettings } from './smtp-service.js';
