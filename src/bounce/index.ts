/**
 * The bounce room's face: the daemon's mailboxes service (the bounce pollers
 * with the PEC watchers), and the bounce parser with its report (for the CLI's
 * `bounce parse`).
 */
export { analyseBounce } from './bounce-parser.js';
export { createBounceService, type MailboxWatchers } from './bounce-service.js';
export { parseReportOf } from './parse-report.js';
