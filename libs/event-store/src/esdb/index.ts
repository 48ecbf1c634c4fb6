// The EventStoreDB adapter (`@chronicle/event-store/esdb`): apart from the package's main entry,
// so that a process on the embedded default never loads the gRPC client.
export * from './esdb-event-store';
export { retryDelay, type ResubscribeOptions } from './esdb-subscription';
