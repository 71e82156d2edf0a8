export { createHttpApp, type HttpAppDeps } from './app.js';
export { startHttpServer, type HttpServer } from './server.js';
export type { ReadinessCheck } from './routes/health.js';
export type { DatabaseBackups } from './routes/backup.js';
