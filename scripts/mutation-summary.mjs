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
        const { line, column } = mutant.location.start;
        const code = lines[line - 1].trim().slice(0, 90);
        undetected.push(`  ${mutant.status} ${path}:${line}:${column} ${mutant.mutatorName} → ${JSON.stringify(mutant.replacement ?? '')} in: ${code}`);
      }
    }
  }
  const detected = Object.entries(counts).filter(([s]) => DETECTED.has(s)).reduce((n, [, c]) => n + c, 0);
  const missed = Object.entries(counts).filter(([s]) => UNDETECTED.has(s)).reduce((n, [, c]) => n + c, 0);
  const score = ((100 * detected) / (detected + missed)).toFixed(2);
  console.log(`${lib}: ${score}% (${detected} detected of ${detected + missed}) ${JSON.stringify(counts)}`);
  for (const line of undetected) console.log(line);
}
