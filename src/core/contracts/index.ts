/** The face of src/core/contracts: what the rest of the product uses of it. */
export { viewAccount } from './account.js';
export type { AccountView } from './account.js';
export { reportBody } from './delivery-report.js';
export type { ReportItem } from './delivery-report.js';
export { PERSONAL_EVENT_FIELDS, PUBLISHED_EVENT_VERSION, eventSubject } from './event.js';
export { viewTenant } from './tenant.js';
export type { TenantView } from './tenant.js';
