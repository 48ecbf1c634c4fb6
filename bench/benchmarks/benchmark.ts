import type { BenchmarkResult } from '../support/report';

export interface Benchmark {
  name: string;
  title: string;
  run(): Promise<BenchmarkResult>;
}
