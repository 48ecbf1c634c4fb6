export * from './replay';
export * from './rebuild-target';
export * from './compare-read-models';
export * from './read-model-rebuilder';
export * from './control-socket';
