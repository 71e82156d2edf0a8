/** The face of src/ingress/webhooks: what the rest of the product uses of it. */
export { createMailgunAdapter } from './mailgun.js';
export { createPostmarkAdapter } from './postmark.js';
export { createSendgridAdapter } from './sendgrid.js';
export { createSesAdapter } from './ses.js';
export { fetchText } from './sns.js';
export { createWebhookService } from './webhook-service.js';
export type { WebhookService, WebhookServiceDeps } from './webhook-service.js';
