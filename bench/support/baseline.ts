import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Build, ROOT } from './processes';

/**
 * BENCH_BASELINE=<commit>: the benchmarks that support it run that commit's build beside this
 * worktree's, rounds alternating, and report the current build against it. The commit is built
 * once into bench/.work/baseline-<commit>/ (kept across runs: bench/.work is never committed).
 */
const BASELINE = process.env.BENCH_BASELINE;

/** Written last into a baseline's directory: without it the directory is a build cut short. */
const BUILT_FILE = 'bench-baseline.json';

let baseline: Promise<Build | null> | null = null;

/** The baseline build (built on first use), or null when BENCH_BASELINE is unset. */
export function baselineBuild(): Promise<Build | null> {
  baseline ??= Promise.resolve(BASELINE === undefined || BASELINE === '' ? null : buildBaseline(BASELINE));
  return baseline;
}

/** The build's name in figures: 'baseline' and the commit's first 7 digits. */
export function baselineName(commit: string): string {
  return `baseline ${commit.slice(0, 7)}`;
}

/**
 * The build of `ref` in `repository` (this one by default), under its bench/.work: made there
 * unless a whole build of that commit is already there.
 */
export function buildBaseline(ref: string, repository: string = ROOT): Build {
  const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], {
    cwd: repository,
    encoding: 'utf8',
  }).trim();
  const root = join(repository, 'bench/.work', `baseline-${commit.slice(0, 12)}`);
  const built: Build = { name: baselineName(commit), root, commit };
  if (existsSync(join(root, BUILT_FILE))) {
    const kept = JSON.parse(readFileSync(join(root, BUILT_FILE), 'utf8')) as { commit: string };
    if (kept.commit === commit) return built;
  }
  process.stderr.write(`  building the baseline ${commit.slice(0, 12)} into ${root}...\n`);
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  // The commit's tree as files, with no worktree registered in the shared repository.
  const archive = spawnSync('sh', ['-c', `git archive --format=tar ${commit} | tar -x -C "${root}"`], {
    cwd: repository,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed`);
  // The same lock file: the same packages, so this worktree's node_modules serves both builds.
  const sameLock = spawnSync('git', ['diff', '--quiet', commit, '--', 'package-lock.json'], {
    cwd: repository,
  });
  const modules = sameLock.status === 0 ? 'linked' : 'installed';
  if (modules === 'linked') symlinkSync(join(repository, 'node_modules'), join(root, 'node_modules'), 'dir');
  else run(root, ['ci', '--ignore-scripts']);
  run(root, ['run', 'build']);
  writeFileSync(
    join(root, BUILT_FILE),
    `${JSON.stringify({ commit, modules, builtAt: new Date().toISOString() }, null, 2)}\n`,
  );
  return built;
}

function run(cwd: string, npmArgs: string[]): void {
  // The build's own node_modules/.bin first, as npm does: its Node (24) and its tsc.
  const result = spawnSync('npm', npmArgs, {
    cwd,
    env: { ...process.env, PATH: `${join(cwd, 'node_modules/.bin')}:${process.env.PATH ?? ''}` },
    stdio: ['ignore', 2, 'inherit'],
  });
  if (result.status !== 0) throw new Error(`npm ${npmArgs.join(' ')} failed in ${cwd}`);
}
