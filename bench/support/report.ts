import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './processes';
import { round, type Spread } from './stats';

/** A target on a ratio: at least, at most, or strictly below a bound. */
export interface Target {
  kind: '>=' | '<=' | '<';
  bound: number;
}

export interface Figure {
  name: string;
  unit: string;
  value: Spread;
  ceiling?: { name: string; value: Spread };
  /** The figure over its ceiling (medians), or another ratio the target is stated on. */
  ratio?: number;
  target?: Target;
  met?: boolean;
  /** A throughput taken while the load generator used more than 80% of a core: it may be the limit. */
  clientBound?: boolean;
}

export interface BenchmarkResult {
  name: string;
  title: string;
  figures: Figure[];
  notes: string[];
  /** The commit of the baseline build measured beside the current one in the same run (BENCH_BASELINE). */
  baseline?: string;
}

/** What a section was measured on: the code's commit (`-dirty`: with uncommitted changes) and Node. */
export interface MeasuredOn {
  commit: string;
  node: string;
}

export interface Report {
  machine: { cpu: string; cores: number; memoryGiB: number; node: string; platform: string };
  rounds: { rounds: number; seconds: number; warmupSeconds: number };
  /** Sections written before commits were recorded have no commit and node. */
  benchmarks: Record<string, BenchmarkResult & { ranAt: string } & Partial<MeasuredOn>>;
}

/** The code a figure depends on: the service's sources and the locked dependencies. */
const CODE_PATHS = ['apps', 'libs', 'package-lock.json'];
/** Git pathspecs of CODE_PATHS less the specs and their helpers, which no figure runs. */
const CODE_PATHSPECS = [...CODE_PATHS, ':(exclude,glob)**/*.spec.ts', ':(exclude,glob)**/*.spec-helper.ts'];

function git(root: string, args: string[]): { status: number; output: string } {
  const result = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  if (result.error) throw result.error;
  return { status: result.status ?? 1, output: result.stdout.trim() };
}

/** HEAD's commit, marked `-dirty` when the code under test has uncommitted changes. */
export function codeCommit(root: string = ROOT): string {
  const head = git(root, ['rev-parse', 'HEAD']).output;
  const dirty = git(root, ['status', '--porcelain', '--', ...CODE_PATHSPECS]).output !== '';
  return dirty ? `${head}-dirty` : head;
}

/**
 * Why a section's figures may not be current, or null when the code under test is the same in its
 * commit as in HEAD's tree.
 */
export function staleness(commit: string | undefined, root: string = ROOT): string | null {
  if (commit === undefined) return 'Measured on code of an unknown commit';
  if (commit.endsWith('-dirty')) {
    return `Measured on uncommitted changes to ${shortCommit(commit)}, which no commit pins`;
  }
  const diff = git(root, ['diff', '--quiet', commit, 'HEAD', '--', ...CODE_PATHSPECS]);
  if (diff.status === 0) return null;
  return `Measured on code that has changed since: ${CODE_PATHS.join(', ')} (specs aside) differ between ${shortCommit(commit)} and HEAD`;
}

export function single(value: number): Spread {
  return { median: value, min: value, max: value };
}

/**
 * A figure over another from the same run (the current build over the baseline's, the largest
 * store over the smallest): the ratio is value over ceiling (medians), judged by `target`.
 */
export function ratioFigure(options: {
  name: string;
  unit: string;
  value: Spread;
  ceiling: { name: string; value: Spread };
  target?: Target;
}): Figure {
  return figure({ ...options, ratio: options.value.median / options.ceiling.value.median });
}

/** A figure with its ratio and whether the ratio meets the target. */
export function figure(options: Omit<Figure, 'met'>): Figure {
  const { ratio, target } = options;
  if (ratio === undefined || target === undefined) return options;
  const met =
    target.kind === '>='
      ? ratio >= target.bound
      : target.kind === '<='
        ? ratio <= target.bound
        : ratio < target.bound;
  return { ...options, met };
}

const RESULTS_DIR = join(ROOT, 'bench/results');
const JSON_FILE = join(RESULTS_DIR, 'latest.json');
const MARKDOWN_FILE = join(RESULTS_DIR, 'latest.md');

/**
 * Merges this run's benchmarks into bench/results/latest.json (a benchmark run alone replaces
 * only its own section) and rewrites latest.md from it.
 */
export function writeReport(results: BenchmarkResult[], rounds: Report['rounds']): Report {
  const previous: Report | null = existsSync(JSON_FILE)
    ? (JSON.parse(readFileSync(JSON_FILE, 'utf8')) as Report)
    : null;
  const ranAt = new Date().toISOString();
  const measuredOn: MeasuredOn = { commit: codeCommit(), node: process.version };
  const report: Report = {
    machine: {
      cpu: cpus()[0]?.model ?? 'unknown',
      cores: cpus().length,
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      node: process.version,
      platform: `${process.platform} ${process.arch}`,
    },
    rounds,
    benchmarks: { ...(previous?.benchmarks ?? {}) },
  };
  for (const result of results) report.benchmarks[result.name] = { ...result, ranAt, ...measuredOn };
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(JSON_FILE, `${JSON.stringify(report, null, 2)}\n`);
  writeFileSync(MARKDOWN_FILE, markdown(report));
  return report;
}

const ORDER = ['read', 'read-basic', 'scale', 'write', 'lag', 'rebuild', 'memory', 'password'];

export function markdown(report: Report, root: string = ROOT): string {
  const { machine, rounds } = report;
  const lines = [
    '# Chronicle benchmarks: latest figures',
    '',
    `${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, ${machine.platform}; the last run on Node ${machine.node}.`,
    `Loads: ${rounds.warmupSeconds} s warm-up, then ${rounds.rounds} rounds of ${rounds.seconds} s; ` +
      'each figure is the median of the rounds with (min–max). How to read this: [bench/README.md](../README.md).',
    '',
  ];
  const names = Object.keys(report.benchmarks).sort((a, b) => rank(a) - rank(b));
  for (const name of names) {
    const result = report.benchmarks[name];
    lines.push(`## ${name}: ${result.title}`, '');
    const warning = staleness(result.commit, root);
    if (warning !== null) lines.push(`**${warning}: these figures may not be current.**`, '');
    const against =
      result.baseline === undefined
        ? ''
        : `; against the build of ${shortCommit(result.baseline)} (the baseline), run beside it in the same run, rounds alternating`;
    lines.push(
      `Ran ${result.ranAt} on commit ${result.commit === undefined ? 'unknown' : shortCommit(result.commit)}, ` +
        `Node ${result.node ?? 'unknown'}${against}.`,
      '',
    );
    lines.push('| figure | value | ceiling | ratio | target | met |', '|---|---|---|---|---|---|');
    for (const item of result.figures) {
      lines.push(
        `| ${item.name} | ${formatValue(item)} | ${
          item.ceiling ? `${item.ceiling.name}: ${formatSpread(item.ceiling.value, item.unit)}` : ''
        } | ${item.ratio === undefined ? '' : round(item.ratio)} | ${
          item.target ? `${item.target.kind} ${item.target.bound}` : ''
        } | ${item.met === undefined ? '' : item.met ? 'yes' : '**no**'} |`,
      );
    }
    if (result.notes.length > 0) lines.push('', ...result.notes.map((note) => `- ${note}`));
    lines.push('');
  }
  return `${lines.join('\n')}`;
}

function shortCommit(commit: string): string {
  return commit.replace(/^([0-9a-f]{12})[0-9a-f]*/, '$1');
}

function rank(name: string): number {
  const index = ORDER.indexOf(name);
  return index === -1 ? ORDER.length : index;
}

/** A figure's value, marked when the load generator may have been what limited it. */
export function formatValue(item: Figure): string {
  return `${formatSpread(item.value, item.unit)}${item.clientBound ? ' **(client-bound)**' : ''}`;
}

export function formatSpread(value: Spread, unit: string): string {
  const median = `${round(value.median)} ${unit}`;
  if (value.min === value.max) return median;
  return `${median} (${round(value.min)}–${round(value.max)})`;
}
