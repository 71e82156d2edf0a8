export { createConsoleApp } from './app.js';
export type { ConsoleDeps } from './deps.js';
export { withConsole, type FetchHandler } from './front.js';
export { createSessionStore, type SessionStore } from './session-store.js';
