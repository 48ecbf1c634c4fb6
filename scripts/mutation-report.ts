/**
 * The mutation scores, from Stryker's JSON reports in reports/mutation: `<lib>.json` for a run of a
 * whole library, `<lib>-partial/<part>.json` for a run of part of one. Prints each report's score and
 * its undetected mutants; with --write, rewrites the scores section of reports/mutation/README.md
 * between its markers, so that the README cannot say what the reports do not (a spec checks it).
 * Usage: SWC_NODE_PROJECT=tsconfig.json node -r @swc-node/register scripts/mutation-report.ts [--write]
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const REPORTS = join(__dirname, '..', 'reports', 'mutation');
export const README = join(REPORTS, 'README.md');
export const BEGIN =
  '<!-- scores: written by `npm run mutation:report` from the JSON reports; do not edit -->';
export const END = '<!-- end of scores -->';
/** Issue 34: timeouts are at most this share of what is detected, or a slow machine passes for a strong suite. */
export const TIMEOUT_SHARE_LIMIT = 0.15;
/** The score each report is held to. */
export const SCORE_FLOOR = 0.85;

type Status = 'Killed' | 'Timeout' | 'Survived' | 'NoCoverage' | 'CompileError' | 'RuntimeError' | 'Ignored';

interface Mutant {
  status: Status;
  mutatorName: string;
  replacement?: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
}

export interface StrykerReport {
  files: Record<string, { source: string; mutants: Mutant[] }>;
}

export interface Summary {
  /** What was measured, e.g. `application` or `application: personal-data (part)`. */
  name: string;
  file: string;
  killed: number;
  timeout: number;
  survived: number;
  noCoverage: number;
  /** Not scored: the TypeScript checker refused them, or they failed to run. */
  invalid: number;
  files: number;
  undetected: string[];
}

export function summarize(name: string, file: string, report: StrykerReport): Summary {
  const summary: Summary = {
    name,
    file,
    killed: 0,
    timeout: 0,
    survived: 0,
    noCoverage: 0,
    invalid: 0,
    files: Object.keys(report.files).length,
    undetected: [],
  };
  for (const [path, { source, mutants }] of Object.entries(report.files).sort(([a], [b]) =>
    a.localeCompare(b),
  )) {
    const lines = source.split('\n');
    for (const mutant of mutants) {
      if (mutant.status === 'Killed') summary.killed += 1;
      else if (mutant.status === 'Timeout') summary.timeout += 1;
      else if (mutant.status === 'Survived') summary.survived += 1;
      else if (mutant.status === 'NoCoverage') summary.noCoverage += 1;
      else if (mutant.status === 'CompileError' || mutant.status === 'RuntimeError') summary.invalid += 1;
      if (mutant.status !== 'Survived' && mutant.status !== 'NoCoverage') continue;
      const { start, end } = mutant.location;
      // The text replaced, not only the replacement: a condition and its first operand start at
      // the same column, and `false` for either reads the same.
      const replaced =
        start.line === end.line
          ? lines[start.line - 1].slice(start.column - 1, end.column - 1)
          : `${lines[start.line - 1].slice(start.column - 1)}…`;
      summary.undetected.push(
        `${mutant.status} ${path}:${start.line}:${start.column} ${mutant.mutatorName} ` +
          `${JSON.stringify(replaced.slice(0, 60))} → ${JSON.stringify((mutant.replacement ?? '').slice(0, 60))}`,
      );
    }
  }
  return summary;
}

const detected = (s: Summary) => s.killed + s.timeout;
const scored = (s: Summary) => detected(s) + s.survived + s.noCoverage;
export const score = (s: Summary): number => (scored(s) === 0 ? 0 : detected(s) / scored(s));
export const timeoutShare = (s: Summary): number => (detected(s) === 0 ? 0 : s.timeout / detected(s));

/** A Stryker JSON report, not the incremental file a run keeps beside it. */
const isReport = (file: string): boolean => file.endsWith('.json') && !file.endsWith('.incremental.json');

/** Every report in `dir`: whole libraries first, then parts, each by name. */
export function readReports(dir = REPORTS): Summary[] {
  const read = (file: string) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as StrykerReport;
  const entries = readdirSync(dir, { withFileTypes: true });
  const whole = entries
    .filter((entry) => entry.isFile() && isReport(entry.name))
    .map((entry) => entry.name)
    .sort()
    .map((file) => summarize(file.replace(/\.json$/, ''), file, read(file)));
  const parts = entries
    .filter((entry) => entry.isDirectory() && entry.name.endsWith('-partial'))
    .map((entry) => entry.name)
    .sort()
    .flatMap((folder) =>
      readdirSync(join(dir, folder))
        .filter(isReport)
        .sort()
        .map((file) =>
          summarize(
            `${folder.replace(/-partial$/, '')}: ${file.replace(/\.json$/, '')} (part)`,
            `${folder}/${file}`,
            read(join(folder, file)),
          ),
        ),
    );
  return [...whole, ...parts];
}

const percent = (share: number) => `${(100 * share).toFixed(1)}%`;

/** The README's scores section. */
export function scoresSection(summaries: Summary[]): string {
  const rows = summaries.map((s) => {
    const flags = [
      score(s) < SCORE_FLOOR ? `below ${percent(SCORE_FLOOR)}` : '',
      timeoutShare(s) > TIMEOUT_SHARE_LIMIT
        ? `timeouts above ${percent(TIMEOUT_SHARE_LIMIT)} of detected`
        : '',
    ].filter(Boolean);
    return (
      `| ${s.name} | **${percent(score(s))}** | ${s.killed} | ${s.timeout} (${percent(timeoutShare(s))}) | ` +
      `${s.survived} | ${s.noCoverage} | ${s.invalid} | ${s.files} | ${flags.join('; ') || 'met'} | \`${s.file}\` |`
    );
  });
  return [
    BEGIN,
    '',
    `Score = (killed + timed out) / (killed + timed out + survived + no coverage); held to ${percent(SCORE_FLOOR)}, ` +
      `with timeouts at most ${percent(TIMEOUT_SHARE_LIMIT)} of what is detected.`,
    '',
    '| Measured | Score | Killed | Timeout (of detected) | Survived | No coverage | Not scored (compile, runtime errors) | Files | Floors | Report |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    END,
  ].join('\n');
}

/** `readme` with its scores section replaced by the one the reports give. */
export function withScores(readme: string, summaries: Summary[]): string {
  const begin = readme.indexOf(BEGIN);
  const end = readme.indexOf(END);
  if (begin < 0 || end < begin) throw new Error(`${README} has no scores section between its markers`);
  return readme.slice(0, begin) + scoresSection(summaries) + readme.slice(end + END.length);
}

function main(): void {
  const summaries = readReports();
  for (const s of summaries) {
    console.log(
      `${s.name}: ${percent(score(s))} (${detected(s)} detected of ${scored(s)}, ` +
        `${s.timeout} timeouts: ${percent(timeoutShare(s))} of detected)`,
    );
    for (const line of s.undetected) console.log(`  ${line}`);
  }
  if (process.argv.includes('--write') && existsSync(README)) {
    writeFileSync(README, withScores(readFileSync(README, 'utf8'), summaries));
    console.log(`Written to ${README}`);
  }
}

if (require.main === module) main();
