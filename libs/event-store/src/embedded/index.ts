export * from './sqlite-event-store';
export * from './sqlite-checkpoint-store';
export * from './sqlite-backup';
export * from './sidecar-database';
export * from './sqlite-data-key-store';
