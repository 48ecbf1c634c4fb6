// The MongoDB adapter is exported by `@chronicle/event-store/mongo` only, like the others.
export * from './aes-gcm';
export * from './data-key-store.port';
export * from './data-key-wrapper';
export * from './open-data-key-store';
export * from './personal-value-codec';
export * from './data-key-ring';
export * from './personal-data-event-store';
export * from './erasure-log';
