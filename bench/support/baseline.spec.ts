import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildBaseline } from './baseline';
import { gitRepository, type GitRepository, repositories } from './git-repository.spec-helper';

/** `npm run build` of the fixture: dist/built.txt from the tree's src.txt. */
const BUILD =
  "node -e \"require('fs').mkdirSync('dist');require('fs').copyFileSync('src.txt','dist/built.txt')\"";

function lockFile(version: string): string {
  return `${JSON.stringify(
    {
      name: 'fixture',
      version,
      lockfileVersion: 3,
      requires: true,
      packages: { '': { name: 'fixture', version } },
    },
    null,
    2,
  )}\n`;
}

/** A repository with a build script and a lock file, its node_modules untracked as in this one. */
function repository(): GitRepository {
  const repo = gitRepository('bench-baseline-');
  repo.write('.gitignore', 'node_modules/\nbench/.work/\n');
  repo.write(
    'package.json',
    `${JSON.stringify({ name: 'fixture', version: '1.0.0', scripts: { build: BUILD } }, null, 2)}\n`,
  );
  repo.write('package-lock.json', lockFile('1.0.0'));
  mkdirSync(join(repo.root, 'node_modules'));
  return repo;
}

describe('buildBaseline', () => {
  const fresh = repositories(repository);

  it("builds the commit's tree, not the working tree's, into bench/.work/baseline-<commit>, on the same node_modules when the lock file is the same", () => {
    const repo = fresh();
    repo.write('src.txt', 'before\n');
    const before = repo.commit();
    repo.write('src.txt', 'after\n');
    repo.commit();
    repo.write('src.txt', 'uncommitted\n');

    const build = buildBaseline(before.slice(0, 7), repo.root);

    expect(build).toEqual({
      name: `baseline ${before.slice(0, 7)}`,
      root: join(repo.root, 'bench/.work', `baseline-${before.slice(0, 12)}`),
      commit: before,
    });
    expect(readFileSync(join(build.root, 'dist/built.txt'), 'utf8')).toBe('before\n');
    expect(lstatSync(join(build.root, 'node_modules')).isSymbolicLink()).toBe(true);
    expect(realpathSync(join(build.root, 'node_modules'))).toBe(
      realpathSync(join(repo.root, 'node_modules')),
    );
    expect(JSON.parse(readFileSync(join(build.root, 'bench-baseline.json'), 'utf8'))).toMatchObject({
      commit: before,
      modules: 'linked',
    });
  });

  it('reuses a whole build of the commit, and makes again one cut short', () => {
    const repo = fresh();
    repo.write('src.txt', 'one\n');
    const commit = repo.commit();
    const first = buildBaseline(commit, repo.root);
    writeFileSync(join(first.root, 'dist/left-by-the-first-build'), '');

    expect(buildBaseline(commit, repo.root)).toEqual(first);
    expect(existsSync(join(first.root, 'dist/left-by-the-first-build'))).toBe(true);

    rmSync(join(first.root, 'bench-baseline.json'));
    buildBaseline(commit, repo.root);
    expect(existsSync(join(first.root, 'dist/left-by-the-first-build'))).toBe(false);
    expect(readFileSync(join(first.root, 'dist/built.txt'), 'utf8')).toBe('one\n');
  });

  it('installs its own node_modules when its lock file differs from the working tree’s', () => {
    const repo = fresh();
    repo.write('src.txt', 'old\n');
    const old = repo.commit();
    repo.write('package-lock.json', lockFile('1.0.0').replace('"requires": true', '"requires": false'));
    repo.commit();

    const build = buildBaseline(old, repo.root);

    // npm ci of a lock file without packages leaves no node_modules: none linked, at least.
    expect(lstatSync(join(build.root, 'node_modules'), { throwIfNoEntry: false })?.isSymbolicLink()).not.toBe(
      true,
    );
    expect(JSON.parse(readFileSync(join(build.root, 'bench-baseline.json'), 'utf8'))).toMatchObject({
      modules: 'installed',
    });
    expect(readFileSync(join(build.root, 'dist/built.txt'), 'utf8')).toBe('old\n');
  });

  it('refuses a commit the repository does not have', () => {
    const repo = fresh();
    repo.write('src.txt', 'x\n');
    repo.commit();
    expect(() => buildBaseline('0000000', repo.root)).toThrow();
  });
});
