export * from './checkpoint-store.port';
export * from './event-processor';
export * from './mongo/mongo-checkpoint-store';
export * from './mongo/mongo-database';
