/** The face of src/store: what the rest of the product uses of it. */
export * from './sqlite-store.js';
export * from './store-service.js';
