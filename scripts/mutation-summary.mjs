// Prints each library's mutation score and its surviving mutants, from reports/mutation/<lib>.json.
import { existsSync, readFileSync } from 'node:fs';

const LIBS = ['domain', 'auth', 'event-store', 'read-models'];
const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);

for (const lib of LIBS) {
  const file = `reports/mutation/${lib}.json`;
  if (!existsSync(file)) {
    console.log(`${lib}: no report`);
    continue;
  }
  const report = JSON.parse(readFileSync(file, 'utf8'));
  const counts = {};
  const undetected = [];
  for (const [path, { mutants, source }] of Object.entries(report.files)) {
    const lines = source.split('\n');
    for (const mutant of mutants) {
      counts[mutant.status] = (counts[mutant.status] ?? 0) + 1;
      if (UNDETECTED.has(mutant.status)) {
        const { start, end } = mutant.location;
        const code = lines[start.line - 1].trim().slice(0, 90);
        // The text replaced, not only the replacement: a condition and its first operand start at the
        // same column, and `false` for either reads the same.
        const replaced =
          start.line === end.line
            ? lines[start.line - 1].slice(start.column - 1, end.column - 1)
            : `${lines[start.line - 1].slice(start.column - 1)}…`;
        undetected.push(
          `  ${mutant.status} ${path}:${start.line}:${start.column} ${mutant.mutatorName} ` +
            `${JSON.stringify(replaced.slice(0, 60))} → ${JSON.stringify(mutant.replacement ?? '')} in: ${code}`,
        );
      }
    }
  }
  const detected = Object.entries(counts).filter(([s]) => DETECTED.has(s)).reduce((n, [, c]) => n + c, 0);
  const missed = Object.entries(counts).filter(([s]) => UNDETECTED.has(s)).reduce((n, [, c]) => n + c, 0);
  const score = ((100 * detected) / (detected + missed)).toFixed(2);
  console.log(`${lib}: ${score}% (${detected} detected of ${detected + missed}) ${JSON.stringify(counts)}`);
  for (const line of undetected) console.log(line);
}
