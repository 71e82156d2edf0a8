export { createCommandHandler, type CommandDeps } from './command-handler.js';
