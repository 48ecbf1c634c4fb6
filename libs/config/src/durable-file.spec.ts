import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  appendLineDurably,
  syncFile,
  temporaryFileFor,
  writeFileDurably,
  writeFileDurablySync,
} from './durable-file';

describe('durable file writes', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'durable-file-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const modeOf = (file: string) => statSync(file).mode & 0o777;

  describe('temporaryFileFor', () => {
    it('names a file beside the target after it, this process and a random part, hidden when asked', () => {
      const file = join(dir, 'store-id');
      expect(temporaryFileFor(file)).toMatch(
        new RegExp(`^${dir}/store-id\\.${process.pid}\\.[0-9a-f]{8}\\.tmp$`),
      );
      expect(temporaryFileFor(file, { hidden: true })).toMatch(
        new RegExp(`^${dir}/\\.store-id\\.${process.pid}\\.[0-9a-f]{8}\\.tmp$`),
      );
      expect(temporaryFileFor(file)).not.toBe(temporaryFileFor(file));
    });
  });

  describe('appendLineDurably', () => {
    it('makes the file (0600) and its folders, then appends one line a call', async () => {
      const file = join(dir, 'kept', 'apart', 'log.jsonl');
      await appendLineDurably(file, '{"a":1}');
      await appendLineDurably(file, '{"a":2}');
      expect(readFileSync(file, 'utf8')).toBe('{"a":1}\n{"a":2}\n');
      expect(modeOf(file)).toBe(0o600);
      expect(statSync(join(dir, 'kept')).mode & 0o777).toBe(0o700);
    });

    it('ends a line cut short by a crash before appending, so the two never join', async () => {
      const file = join(dir, 'log.jsonl');
      writeFileSync(file, '{"a":1}\n{"a":', { mode: 0o600 });
      await appendLineDurably(file, '{"a":3}');
      expect(readFileSync(file, 'utf8').split('\n')).toEqual(['{"a":1}', '{"a":', '{"a":3}', '']);
    });
  });

  describe('writeFileDurablySync', () => {
    it('writes a new file, readable by its owner only, and leaves no temporary file', () => {
      const file = join(dir, 'store-id');
      writeFileDurablySync(file, 'abc\n');
      expect(readFileSync(file, 'utf8')).toBe('abc\n');
      expect(modeOf(file)).toBe(0o600);
      expect(readdirSync(dir)).toEqual(['store-id']);
    });

    it('replaces an existing file whole, and makes a file others could read private', () => {
      const file = join(dir, 'store-id');
      writeFileSync(file, 'old content, longer than the new');
      chmodSync(file, 0o644);
      writeFileDurablySync(file, Buffer.from('new'));
      expect(readFileSync(file, 'utf8')).toBe('new');
      expect(modeOf(file)).toBe(0o600);
    });

    it('copies a file, private whatever the mode of the original', () => {
      const original = join(dir, 'original');
      writeFileSync(original, 'backed up', { mode: 0o644 });
      const copy = join(dir, 'copy');
      writeFileDurablySync(copy, { copyOf: original }, { hidden: true });
      expect(readFileSync(copy, 'utf8')).toBe('backed up');
      expect(modeOf(copy)).toBe(0o600);
      expect(readdirSync(dir).sort()).toEqual(['copy', 'original']);
    });

    it('on a failure leaves the target as it was and removes the temporary file', () => {
      const file = join(dir, 'store-id');
      writeFileSync(file, 'kept');
      expect(() => writeFileDurablySync(file, { copyOf: join(dir, 'missing') })).toThrow(
        expect.objectContaining({ code: 'ENOENT' }),
      );
      expect(readFileSync(file, 'utf8')).toBe('kept');
      expect(readdirSync(dir)).toEqual(['store-id']);
    });
  });

  describe('writeFileDurably', () => {
    it('writes content as it comes into a private file, under a temporary name until it is whole', async () => {
      const file = join(dir, 'read-models.snapshot');
      let seen: string[] = [];
      const written = await writeFileDurably(file, async (handle) => {
        await handle.write('first ');
        seen = readdirSync(dir);
        await handle.write('second');
      });
      expect(written).toBe(true);
      expect(seen).toEqual([expect.stringMatching(/^read-models\.snapshot\.\d+\.[0-9a-f]{8}\.tmp$/)]);
      expect(readFileSync(file, 'utf8')).toBe('first second');
      expect(modeOf(file)).toBe(0o600);
      expect(readdirSync(dir)).toEqual(['read-models.snapshot']);
    });

    it('writes text or bytes, replacing a file others could read with a private one', async () => {
      const file = join(dir, 'message.eml');
      writeFileSync(file, 'old', { mode: 0o644 });
      await writeFileDurably(file, Buffer.from('new'), { hidden: true });
      expect(readFileSync(file, 'utf8')).toBe('new');
      expect(modeOf(file)).toBe(0o600);
    });

    it('leaves the target as it was when `keep` says the content went stale, and removes the temporary file', async () => {
      const file = join(dir, 'read-models.snapshot');
      writeFileSync(file, 'previous');
      const keep = jest.fn(() => false);
      expect(await writeFileDurably(file, 'stale', { keep })).toBe(false);
      expect(keep).toHaveBeenCalledTimes(1);
      expect(readFileSync(file, 'utf8')).toBe('previous');
      expect(readdirSync(dir)).toEqual(['read-models.snapshot']);
    });

    it('on a failure while writing rejects, leaves the target as it was and removes the temporary file', async () => {
      const file = join(dir, 'read-models.snapshot');
      writeFileSync(file, 'previous');
      await expect(
        writeFileDurably(file, async (handle) => {
          await handle.write('partial');
          throw new Error('disk full');
        }),
      ).rejects.toThrow('disk full');
      expect(readFileSync(file, 'utf8')).toBe('previous');
      expect(readdirSync(dir)).toEqual(['read-models.snapshot']);
    });
  });

  describe('syncFile', () => {
    it('flushes a file or a directory, and throws for a path that does not exist', () => {
      const file = join(dir, 'file');
      writeFileSync(file, 'x');
      expect(() => syncFile(file)).not.toThrow();
      expect(() => syncFile(dir)).not.toThrow();
      expect(() => syncFile(join(dir, 'missing'))).toThrow(expect.objectContaining({ code: 'ENOENT' }));
    });
  });
});
