export * from './sqlite-event-store';
export { EVENTS_FILE } from './events-schema';
export { DuplicateEventIdError, type SqliteEventStoreStats } from './sqlite-appender';
export { readStoreId, STORE_ID_FILE, StoreLostError } from './sqlite-store-identity';
export * from './sqlite-checkpoint-store';
export * from './sqlite-backup';
export * from './sidecar-database';
export { BackgroundCheckpoints } from './background-checkpoints';
export * from './sqlite-data-key-store';
