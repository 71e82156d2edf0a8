export { createConsoleApp } from './app.js';
export type { ConsoleDeps } from './deps.js';
export { withConsole } from './front.js';
export { createSessionStore } from './session-store.js';
