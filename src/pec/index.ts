/**
 * The PEC room's face: the PEC accounts' mailbox watchers with the receipt
 * acceptance sweep, and the receipt parser (for the CLI's `pec parse`).
 */
export { analysePecReceipt } from './pec-receipt-parser.js';
export { createPecWatchers, type MailboxWatchers, type PecSettings, type PecStore } from './pec-service.js';
