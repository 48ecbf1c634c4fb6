// The MongoDB read store (`@chronicle/read-models/mongo`): apart from the package's main entry, so
// that a process on the embedded default never loads the MongoDB driver.
export * from './mongo-read-store';
export * from './mongo-rebuild-target';
