// Re-exports of the error catalogue and its helpers.
export * from './codes.js';
export * from './client-error.js';
