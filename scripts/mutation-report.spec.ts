import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BEGIN,
  END,
  README,
  readReports,
  score,
  scoresSection,
  type StrykerReport,
  summarize,
  timeoutShare,
  withScores,
} from './mutation-report';

const mutant = (status: string, line = 1) => ({
  status,
  mutatorName: 'ConditionalExpression',
  replacement: 'false',
  location: { start: { line, column: 5 }, end: { line, column: 10 } },
});

describe('mutation report', () => {
  it('counts what was detected, what was not, and what is not scored', () => {
    const report = {
      files: {
        'libs/x/src/b.ts': {
          source: 'if (a && b) {}\nreturn;',
          mutants: [mutant('Survived', 1), mutant('NoCoverage', 2)],
        },
        'libs/x/src/a.ts': {
          source: 'x',
          mutants: [
            ...Array.from({ length: 6 }, () => mutant('Killed')),
            ...Array.from({ length: 2 }, () => mutant('Timeout')),
            mutant('CompileError'),
            mutant('RuntimeError'),
          ],
        },
      },
    } as unknown as StrykerReport;
    const summary = summarize('x', 'x.json', report);
    expect(summary).toMatchObject({
      killed: 6,
      timeout: 2,
      survived: 1,
      noCoverage: 1,
      invalid: 2,
      files: 2,
    });
    expect(score(summary)).toBeCloseTo(0.8);
    expect(timeoutShare(summary)).toBeCloseTo(0.25);
    // The text each one replaces, by file.
    expect(summary.undetected).toEqual([
      'Survived libs/x/src/b.ts:1:5 ConditionalExpression "a && " → "false"',
      'NoCoverage libs/x/src/b.ts:2:5 ConditionalExpression "rn;" → "false"',
    ]);
    // Below the floor, and too many timeouts: the row says both.
    expect(scoresSection([summary])).toContain(
      '| x | **80.0%** | 6 | 2 (25.0%) | 1 | 1 | 2 | 2 | below 85.0%; timeouts above 15.0% of detected | `x.json` |',
    );
  });

  it('replaces the section between the markers and nothing else', () => {
    const summaries = [summarize('y', 'y.json', { files: { 'a.ts': { source: 'x', mutants: [] } } })];
    const readme = `# Title\n\n${BEGIN}\nold table\n${END}\n\n## Notes\n`;
    const written = withScores(readme, summaries);
    expect(written).toBe(`# Title\n\n${scoresSection(summaries)}\n\n## Notes\n`);
    expect(withScores(written, summaries)).toBe(written);
    expect(() => withScores('# no markers', summaries)).toThrow(/no scores section/);
  });

  it('reads whole and partial reports, and never the incremental files kept beside them', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mutation-reports-'));
    try {
      const report = (status: string) =>
        JSON.stringify({ files: { 'a.ts': { source: 'x', mutants: [mutant(status)] } } });
      mkdirSync(join(dir, 'lib-partial'));
      writeFileSync(join(dir, 'lib.json'), report('Killed'));
      writeFileSync(join(dir, 'lib.incremental.json'), report('Survived'));
      writeFileSync(join(dir, 'lib-partial', 'part.json'), report('Survived'));
      writeFileSync(join(dir, 'lib-partial', 'part.incremental.json'), report('Killed'));
      const summaries = readReports(dir);
      expect(summaries.map((s) => [s.name, s.killed, s.survived])).toEqual([
        ['lib', 1, 0],
        ['lib: part (part)', 0, 1],
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('README.md says what the committed reports say (npm run mutation:report writes it)', () => {
    expect(withScores(readFileSync(README, 'utf8'), readReports())).toBe(readFileSync(README, 'utf8'));
  });
});
