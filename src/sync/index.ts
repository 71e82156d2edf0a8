/** The face of src/sync: what the rest of the product uses of it. */
export type { ReportLoop } from './report-loop.js';
export { createReportService } from './report-service.js';
export type { ReportService } from './report-service.js';
