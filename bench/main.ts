/**
 * `npm run bench` runs every benchmark; `npm run bench -- <name> [<name>...]` only those named.
 * Each starts what it needs, prints its figures, and the run merges them into bench/results/.
 */
import { accountLoad } from './benchmarks/account-load';
import { type Benchmark } from './benchmarks/benchmark';
import { erasure } from './benchmarks/erasure';
import { lag, write } from './benchmarks/write';
import { memory } from './benchmarks/memory';
import { password } from './benchmarks/password';
import { resetTiming } from './benchmarks/reset-timing';
import { read, readBasic } from './benchmarks/read';
import { rebuild } from './benchmarks/rebuild';
import { restart } from './benchmarks/restart';
import { scale } from './benchmarks/scale';
import { snapshot } from './benchmarks/snapshot';
import { verify } from './benchmarks/verify';
import { ROUND_SECONDS, ROUNDS, WARMUP_SECONDS } from './support/load';
import { assertBuilt, cleanUp } from './support/processes';
import { type BenchmarkResult, formatSpread, formatValue, writeReport } from './support/report';
import { round } from './support/stats';

const BENCHMARKS: Benchmark[] = [
  read,
  readBasic,
  scale,
  write,
  lag,
  rebuild,
  memory,
  restart,
  snapshot,
  password,
  resetTiming,
  accountLoad,
  verify,
  erasure,
];

function print(result: BenchmarkResult): void {
  const lines = [`\n${result.name}: ${result.title}`];
  for (const item of result.figures) {
    let line = `  ${item.name}: ${formatValue(item)}`;
    if (item.ceiling)
      line += `  | ceiling ${item.ceiling.name}: ${formatSpread(item.ceiling.value, item.unit)}`;
    if (item.ratio !== undefined) line += `  | ratio ${round(item.ratio)}`;
    if (item.target)
      line += ` (target ${item.target.kind} ${item.target.bound}: ${item.met ? 'met' : 'NOT met'})`;
    lines.push(line);
  }
  for (const note of result.notes) lines.push(`  - ${note}`);
  process.stdout.write(`${lines.join('\n')}\n`);
}

async function main(names: string[]): Promise<void> {
  const unknown = names.filter((name) => !BENCHMARKS.some((benchmark) => benchmark.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `Unknown benchmark ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}`,
    );
  }
  assertBuilt();
  const selected =
    names.length === 0 ? BENCHMARKS : BENCHMARKS.filter((benchmark) => names.includes(benchmark.name));
  const results: BenchmarkResult[] = [];
  for (const benchmark of selected) {
    process.stderr.write(`${benchmark.name}...\n`);
    const result = await benchmark.run();
    print(result);
    results.push(result);
  }
  writeReport(results, { rounds: ROUNDS, seconds: ROUND_SECONDS, warmupSeconds: WARMUP_SECONDS });
  process.stdout.write('\nWritten to bench/results/latest.json and bench/results/latest.md\n');
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanUp();
    process.exit(130);
  });
}

main(process.argv.slice(2))
  .then(() => cleanUp())
  .catch((error: unknown) => {
    cleanUp();
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exitCode = 1;
  });
