export * from './esdb-event-store';
export { retryDelay, type ResubscribeOptions } from './esdb-subscription';
