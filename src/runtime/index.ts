export { createLogger, REDACT_PATHS, type RuntimeLogger } from './logger.js';
export { installShutdownHandlers } from './shutdown.js';
export { systemClock, randomIds } from './system.js';
export { createPeriodicLoop, type PeriodicLoop } from './periodic-loop.js';
export { createLifecycle, type Lifecycle, type Service, type Stage, type StopBudget } from './service.js';
export { createWakeableLoop, type StepReport, type WakeableLoop, type WakeableLoopOptions } from './wakeable-loop.js';
export { within } from './within.js';
export { mailproxyVersion } from './build.js';
