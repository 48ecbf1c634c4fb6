// The MongoDB adapters' shared parts (`@chronicle/event-store/mongo`): apart from the package's
// main entry, so that a process on the embedded default never loads the MongoDB driver.
export * from './mongo-checkpoint-store';
export * from './mongo-client';
export * from './guarded-writes';
export * from '../../personal-data/mongo-data-key-store';
