export * from './checkpoint-store.port';
export * from './event-consumer';
export * from './event-processing';
export * from './event-processor';
export * from './mongo/mongo-database';
export * from './processor-host';
export * from './read-to-end';
