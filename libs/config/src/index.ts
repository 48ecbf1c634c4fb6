export * from './chronicle-config';
export * from './parse-config';
export * from './config.module';
export * from './log-destination';
export * from './make-directories';
export * from './supported-runtime';
export * from './processor-placement';
