export * from './checkpoint-store.port';
export * from './event-processor';
export * from './mongo/mongo-database';
export * from './processor-host';
