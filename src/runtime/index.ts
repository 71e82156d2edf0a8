export { createLogger, REDACT_PATHS, type RuntimeLogger } from './logger.js';
export { installShutdownHandlers } from './shutdown.js';
export { systemClock, randomIds } from './system.js';
