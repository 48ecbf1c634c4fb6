export * from './event-store.port';
export * from './position';
