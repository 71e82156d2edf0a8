/** The face of src/delivery: what the rest of the product uses of it. */
export { createDeliveryService } from './delivery-service.js';
export type { DeliveryDeps, DeliveryService } from './delivery-service.js';
export type { Dispatcher } from './dispatcher.js';
export { createRelayProbe } from './relay-probe.js';
// Sending domains: their DNS read and judged, and the daemon's own check of them. Here because
// mailauth, which signs what this room relays, also evaluates SPF: one library, one room.
export { createDomainDnsReader } from './domain-dns.js';
export { createDomainWatch } from './domain-watch.js';
export { openFile } from './file-offloader.js';
