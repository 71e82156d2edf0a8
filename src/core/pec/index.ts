/** The face of src/core/pec: what the rest of the product uses of it. */
export { NOT_A_RECEIPT, PEC_RECEIPT_TYPES, isPecReceiptType } from './pec.js';
export type { PecAddressee, PecReceiptFindings, PecReceiptListing, PecReceiptReader, PecReceiptType } from './pec.js';
export { ACCEPTANCE_TIMEOUT, correlateReceipt, planReceipt } from './plan.js';
export type { PecEffect, PecLedger, PecPlan, PecSettlement } from './plan.js';
