import { DynamicModule, Global, Module } from '@nestjs/common';
import { ChronicleMetrics } from './chronicle-metrics';
import { MetricsServer } from './metrics-server';

/** Provides the process's one ChronicleMetrics (made by its entry point) and serves it on METRICS_PORT. */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(metrics: ChronicleMetrics): DynamicModule {
    return {
      module: MetricsModule,
      providers: [{ provide: ChronicleMetrics, useValue: metrics }, MetricsServer],
      exports: [ChronicleMetrics, MetricsServer],
    };
  }
}
