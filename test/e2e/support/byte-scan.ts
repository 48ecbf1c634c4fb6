import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The forms a value could be kept in: as text, as JSON-escaped text, and as base64. */
export const spellings = (text: string): Buffer[] => [
  Buffer.from(text, 'utf8'),
  Buffer.from(JSON.stringify(text).slice(1, -1), 'utf8'),
  Buffer.from(Buffer.from(text, 'utf8').toString('base64').slice(0, -4), 'utf8'),
  Buffer.from(Buffer.from(text, 'utf8').toString('base64url').slice(0, -4), 'utf8'),
];

/** Every regular file under `dir`, recursively (not the control socket). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    const stat = statSync(path);
    return stat.isDirectory() ? filesUnder(path) : stat.isFile() ? [path] : [];
  });
}

/** Collects, as `<where>: <spelling>`, every spelling of `texts` found in what it is given. */
export function byteScanner(texts: string[]): {
  scan(where: string, bytes: Buffer): void;
  scanFilesUnder(dir: string): void;
  hits: string[];
} {
  const needles = texts.flatMap(spellings);
  const hits: string[] = [];
  const scan = (where: string, bytes: Buffer) => {
    for (const needle of needles) if (bytes.includes(needle)) hits.push(`${where}: ${needle.toString()}`);
  };
  return {
    scan,
    scanFilesUnder: (dir) => {
      for (const file of filesUnder(dir)) scan(file, readFileSync(file));
    },
    hits,
  };
}
