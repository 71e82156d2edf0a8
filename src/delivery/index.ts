/** The face of src/delivery: what the rest of the product uses of it. */
export { createDeliveryService } from './delivery-service.js';
export type { DeliveryDeps, DeliveryService } from './delivery-service.js';
export type { Dispatcher } from './dispatcher.js';
export { createRelayProbe } from './relay-probe.js';
