import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDirectories } from './make-directories';

describe('makeDirectories', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'make-directories-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('creates every missing directory with the mode, and leaves an existing one as it is', () => {
    const path = join(root, 'a', 'b', 'c');
    makeDirectories(path, 0o700);
    for (const dir of [join(root, 'a'), join(root, 'a', 'b'), path]) {
      expect(statSync(dir).isDirectory()).toBe(true);
      expect(statSync(dir).mode & 0o777).toBe(0o700);
    }
    expect(() => makeDirectories(path, 0o755)).not.toThrow();
    expect(statSync(path).mode & 0o777).toBe(0o700);
  });

  it.each([
    ['a file', (file: string) => file],
    ['a path under a file', (file: string) => join(file, 'data')],
  ])('throws ENOTDIR for %s', (_case, pathOf) => {
    const file = join(root, 'file');
    writeFileSync(file, '');
    expect(() => makeDirectories(pathOf(file), 0o700)).toThrow(expect.objectContaining({ code: 'ENOTDIR' }));
  });
});
