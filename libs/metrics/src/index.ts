export * from './chronicle-metrics';
export * from './metrics-server';
export * from './metrics.module';
export * from './health-checks';
