import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

export interface GitRepository {
  root: string;
  /** Writes a file of the working tree, making its directories. */
  write(path: string, text: string): void;
  /** Commits the whole working tree and returns the commit. */
  commit(): string;
}

/** An empty git repository under the system's temporary directory, for specs of what reads git. */
export function gitRepository(prefix: string): GitRepository {
  const root = mkdtempSync(join(tmpdir(), prefix));
  const git = (...args: string[]): string =>
    execFileSync('git', args, {
      cwd: root,
      encoding: 'utf8',
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: 'Bench',
        GIT_AUTHOR_EMAIL: 'bench@example.com',
        GIT_COMMITTER_NAME: 'Bench',
        GIT_COMMITTER_EMAIL: 'bench@example.com',
      },
    }).trim();
  git('init', '-q');
  return {
    root,
    write(path, text) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    },
    commit() {
      git('add', '-A');
      git('commit', '-q', '-m', 'change');
      return git('rev-parse', 'HEAD');
    },
  };
}

/** Repositories made by `make` for the describe block it is called in, all removed after it. */
export function repositories(make: () => GitRepository): () => GitRepository {
  const roots: string[] = [];
  afterAll(() => {
    for (const root of roots) rmSync(root, { recursive: true, force: true });
  });
  return () => {
    const made = make();
    roots.push(made.root);
    return made;
  };
}
