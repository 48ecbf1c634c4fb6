export * from './event-store.port';
export * from './position';
export * from './checkpoints';
export * from './embedded';
export * from './event-store.module';
export * from './esdb';
export * from './upcasting';
export * from './processing';
