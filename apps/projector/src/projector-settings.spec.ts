import { ConfigError, parseConfig } from '@chronicle/config';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseProjectorSettings } from './projector-settings';

describe('parseProjectorSettings', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'projector-settings-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  const settings = (env: Record<string, string>) =>
    parseProjectorSettings(parseConfig({ DATA_DIR: dataDir, ...env }), env);
  const MONGODB_URI = 'mongodb://127.0.0.1:27017/chronicle';

  it('holds the lease for 15 s by default, or PROJECTOR_LEASE_TTL seconds', () => {
    expect(settings({ MONGODB_URI })).toEqual({ mongodbUri: MONGODB_URI, leaseTtlMs: 15_000 });
    expect(settings({ MONGODB_URI, PROJECTOR_LEASE_TTL: ' 3 ' }).leaseTtlMs).toBe(3_000);
  });

  it.each(['0', '3601', '1.5', 'soon', '-2'])('refuses PROJECTOR_LEASE_TTL=%p, naming it', (ttl) => {
    expect(() => settings({ MONGODB_URI, PROJECTOR_LEASE_TTL: ttl })).toThrow(
      expect.objectContaining({ variable: 'PROJECTOR_LEASE_TTL' }),
    );
  });

  it('needs MONGODB_URI: the projector writes the shared read models', () => {
    expect(() => settings({})).toThrow(ConfigError);
    expect(() => settings({})).toThrow(/MONGODB_URI must be set/);
  });
});
