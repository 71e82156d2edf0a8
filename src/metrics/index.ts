/** The face of src/metrics: what the rest of the product uses of it. */
export { createMetrics } from './registry.js';
export type { Metrics, MetricsSources } from './registry.js';
