import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * Jest's global set-up: the suites run the apps and the CLI from dist/ (test/support/built.ts), so
 * dist/ must be the build of the sources as they are. A digest of what the build reads, kept beside
 * it, says whether it is; when not, `npm run build` runs once, before any test. (The build's own
 * files cannot say it: an incremental tsc leaves them untouched when nothing it emits changed.)
 */

const ROOT = join(__dirname, '..', '..');
const STAMP = join(ROOT, 'dist', '.sources.sha256');

function sourcesDigest(): string {
  const hash = createHash('sha256');
  const add = (file: string) => hash.update(`${relative(ROOT, file)}\0`).update(readFileSync(file));
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) =>
      a.name.localeCompare(b.name),
    )) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (!/\.spec(-helper)?\.ts$/.test(entry.name)) add(path);
    }
  };
  walk(join(ROOT, 'apps'));
  walk(join(ROOT, 'libs'));
  for (const config of ['tsconfig.json', 'tsconfig.build.json', 'package.json']) add(join(ROOT, config));
  return hash.digest('hex');
}

export default function buildIfStale(): void {
  const digest = sourcesDigest();
  if (existsSync(STAMP) && readFileSync(STAMP, 'utf8') === digest) return;
  process.stderr.write('dist/ is not the build of the sources: npm run build\n');
  execFileSync('npm', ['run', '-s', 'build'], { cwd: ROOT, stdio: 'inherit' });
  writeFileSync(STAMP, digest);
}
