import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import fs from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, parseConfig } from './parse-config';
import { RESTORE_MARKER_FILE, writeRestoreMarker } from './restore-marker';

describe('parseConfig', () => {
  const dataDir = () => mkdtempSync(join(tmpdir(), 'chronicle-config-'));

  it('gives the embedded defaults for an empty environment', () => {
    const dir = dataDir();
    const config = parseConfig({ DATA_DIR: dir });
    expect(config).toMatchObject({
      port: 3000,
      dataDir: dir,
      eventStoreUrl: null,
      mongodbUri: null,
      smtpUrl: null,
      publicBaseUrl: 'http://localhost:3000',
      accessTokenTtlSeconds: 3600,
      resetTokenTtlSeconds: 1800,
      invitationTtlSeconds: 604_800,
      resetRequestsPerEmail: 5,
      resetRequestsPerClient: 20,
      loginAttemptsPerAccount: 10,
      loginAttemptsPerClient: 100,
      logLevel: 'info',
      metricsPort: 9464,
      readModelSnapshotEvents: 50_000,
      erasureLog: `${dir}.erasures.jsonl`,
    });
  });

  it('keeps the erasure log where ERASURE_LOG says, never inside DATA_DIR', () => {
    const dir = dataDir();
    expect(parseConfig({ DATA_DIR: dir, ERASURE_LOG: '/srv/kept/erasures.jsonl' }).erasureLog).toBe(
      '/srv/kept/erasures.jsonl',
    );
    for (const inside of [dir, join(dir, 'erasures.jsonl'), `${dir}/../${dir.split('/').pop()}/x`]) {
      expect(() => parseConfig({ DATA_DIR: dir, ERASURE_LOG: inside })).toThrow(
        expect.objectContaining({
          variable: 'ERASURE_LOG',
          message: expect.stringContaining('outside DATA_DIR'),
        }),
      );
    }
  });

  it('generates a token secret once, keeps it private in DATA_DIR and reuses it', () => {
    const dir = dataDir();
    const first = parseConfig({ DATA_DIR: dir }).tokenSecret;
    const second = parseConfig({ DATA_DIR: dir }).tokenSecret;
    expect(first).toHaveLength(32);
    expect(second.equals(first)).toBe(true);
    expect(readFileSync(join(dir, 'token-secret'), 'utf8')).toBe(first.toString('hex'));
    expect(statSync(join(dir, 'token-secret')).mode & 0o077).toBe(0);
  });

  it('reads DATA_KEY_SECRET and AUDIT_SEAL_KEY when set, and keeps nothing for them at parse time', () => {
    const dir = dataDir();
    const unset = parseConfig({ DATA_DIR: dir });
    expect(unset).toMatchObject({ dataKeySecret: null, auditSealKey: null });
    expect(readdirSync(dir).sort()).toEqual(['token-secret']);
    const set = parseConfig({
      DATA_DIR: dir,
      DATA_KEY_SECRET: 'd'.repeat(32),
      AUDIT_SEAL_KEY: 's'.repeat(40),
    });
    expect(set.dataKeySecret?.toString('utf8')).toBe('d'.repeat(32));
    expect(set.auditSealKey?.toString('utf8')).toBe('s'.repeat(40));
  });

  it.each([
    ['PORT', 'eighty'],
    ['PORT', '70000'],
    ['ACCESS_TOKEN_TTL', '0'],
    ['RESET_TOKEN_TTL', '-5'],
    ['INVITATION_TTL', '0'],
    ['RESET_REQUESTS_PER_EMAIL', '0'],
    ['RESET_REQUESTS_PER_CLIENT', 'lots'],
    ['LOGIN_ATTEMPTS_PER_ACCOUNT', '0'],
    ['LOGIN_ATTEMPTS_PER_CLIENT', '1.5'],
    ['EVENTSTORE_URL', 'http://localhost:2113'],
    ['MONGODB_URI', 'not a url'],
    ['SMTP_URL', 'ftp://mail'],
    ['PUBLIC_BASE_URL', 'localhost'],
    ['LOG_LEVEL', 'loud'],
    ['TOKEN_SECRET', 'short'],
    ['AUDIT_SEAL_KEY', 'short'],
    ['DATA_KEY_SECRET', 'x'.repeat(31)],
    ['TRUST_PROXY', 'yes please'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', '0'],
    ['CORS_ORIGINS', 'app.example.com'],
    ['CORS_ORIGINS', 'https://app.example.com/path'],
    ['REQUEST_TIMEOUT', '0'],
    ['METRICS_PORT', '70000'],
    ['METRICS_PORT', '3000'],
    ['READ_MODEL_SNAPSHOT_EVENTS', '0'],
  ])('rejects %s=%s naming the variable', (variable, value) => {
    const parse = () => parseConfig({ DATA_DIR: dataDir(), [variable]: value });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(variable);
  });

  it('reads TRUST_PROXY, CORS_ORIGINS, REQUEST_TIMEOUT and READ_MODEL_SNAPSHOT_EVENTS', () => {
    const defaults = parseConfig({ DATA_DIR: dataDir() });
    expect(defaults).toMatchObject({ trustProxy: false, corsOrigins: null, requestTimeoutSeconds: 30 });
    const read = (env: Record<string, string>) => parseConfig({ DATA_DIR: dataDir(), ...env });
    expect(read({ TRUST_PROXY: 'true' }).trustProxy).toBe(true);
    expect(read({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(read({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1' }).trustProxy).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
    ]);
    expect(read({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(read({ CORS_ORIGINS: 'https://a.example.com, http://localhost:5173' }).corsOrigins).toEqual([
      'https://a.example.com',
      'http://localhost:5173',
    ]);
    expect(read({ REQUEST_TIMEOUT: '5' }).requestTimeoutSeconds).toBe(5);
    expect(read({ READ_MODEL_SNAPSHOT_EVENTS: '1' }).readModelSnapshotEvents).toBe(1);
    expect(read({ METRICS_PORT: '0' }).metricsPort).toBe(0);
    expect(read({ METRICS_PORT: '9100', PORT: '0' }).metricsPort).toBe(9100);
  });

  it.each([
    ['empty', ''],
    ['short', 'ab'.repeat(31)],
    ['not hex', 'zz'.repeat(32)],
    ['an odd number of digits', `${'ab'.repeat(32)}c`],
  ])('refuses a kept token secret that is %s, naming the file', (_case, content) => {
    const dir = dataDir();
    writeFileSync(join(dir, 'token-secret'), content, { mode: 0o600 });
    const parse = () => parseConfig({ DATA_DIR: dir });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(join(dir, 'token-secret'));
  });

  it('keeps DATA_DIR private: created 0700, and an existing one and its files tightened', () => {
    const fresh = join(dataDir(), 'new', 'data');
    parseConfig({ DATA_DIR: fresh });
    expect(statSync(fresh).mode & 0o777).toBe(0o700);

    const loose = dataDir();
    chmodSync(loose, 0o755);
    writeFileSync(join(loose, 'events.db'), '', { mode: 0o644 });
    mkdirSync(join(loose, 'outbox'), { mode: 0o755 });
    writeFileSync(join(loose, 'outbox', 'mail.eml'), 'x', { mode: 0o644 });
    parseConfig({ DATA_DIR: loose });
    expect(statSync(loose).mode & 0o777).toBe(0o700);
    expect(statSync(join(loose, 'events.db')).mode & 0o777).toBe(0o600);
    expect(statSync(join(loose, 'outbox')).mode & 0o777).toBe(0o700);
    expect(statSync(join(loose, 'outbox', 'mail.eml')).mode & 0o777).toBe(0o600);
  });

  it('accepts a DATA_DIR whose files another process removes while it is checked (a second instance starting)', () => {
    const dir = dataDir();
    writeFileSync(join(dir, '.write-probe-1'), '', { mode: 0o644 });
    mkdirSync(join(dir, 'gone'), { mode: 0o755 });
    const actual = { statSync: fs.statSync, readdirSync: fs.readdirSync };
    // Listed, then removed by the other process before this one looks at them.
    const stat = jest.spyOn(fs, 'statSync').mockImplementation(((path: string, ...rest: never[]) => {
      if (path.endsWith('.write-probe-1') || path.endsWith('gone')) {
        throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      }
      return actual.statSync(path, ...rest);
    }) as typeof fs.statSync);
    const list = jest.spyOn(fs, 'readdirSync').mockImplementation(((path: string, ...rest: never[]) => {
      if (path.endsWith('gone')) throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
      return actual.readdirSync(path, ...rest);
    }) as typeof fs.readdirSync);
    try {
      expect(parseConfig({ DATA_DIR: dir }).dataDir).toBe(dir);
    } finally {
      stat.mockRestore();
      list.mockRestore();
    }
  });

  it('refuses a DATA_DIR that is a file, naming the variable', () => {
    const file = join(dataDir(), 'a-file');
    writeFileSync(file, '');
    const parse = () => parseConfig({ DATA_DIR: file });
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(/DATA_DIR.*a-file/);
  });

  it('refuses a DATA_DIR holding an unfinished restore, naming the backup and the fix, writing nothing into it', () => {
    const dir = dataDir();
    writeRestoreMarker(dir, {
      backup: '/backups/chronicle-1',
      manifestSha256: 'ab'.repeat(32),
      startedAt: '2026-01-02T03:04:05.000Z',
    });
    expect(statSync(join(dir, RESTORE_MARKER_FILE)).mode & 0o777).toBe(0o600);
    for (const env of [{ DATA_DIR: dir }, { DATA_DIR: dir, EVENTSTORE_URL: 'esdb://localhost:2113' }]) {
      expect(() => parseConfig(env)).toThrow(
        expect.objectContaining({
          name: 'ConfigError',
          variable: 'DATA_DIR',
          message:
            `Invalid configuration: DATA_DIR (${dir}) holds a restore that did not finish ` +
            `(${join(dir, RESTORE_MARKER_FILE)}: from /backups/chronicle-1, begun 2026-01-02T03:04:05.000Z): ` +
            'the erasures logged since that backup may not be re-applied yet, so people erased since would be ' +
            'served again. Nothing opens it until then: run `restore /backups/chronicle-1` again to finish it',
        }),
      );
    }
    // Refused before the token secret is kept: nothing is written into the restored files' place.
    expect(readdirSync(dir)).toEqual([RESTORE_MARKER_FILE]);
    // `restore` itself opens it, to finish.
    expect(parseConfig({ DATA_DIR: dir }, { finishingRestore: true }).dataDir).toBe(dir);
  });

  it.each([
    ['not JSON', 'restore of'],
    ['JSON without its fields', '{"backup": 7}'],
    ['a directory', null],
  ])('refuses a DATA_DIR whose restore marker is %s, saying to restore into an empty one', (_case, text) => {
    const dir = dataDir();
    if (text === null) mkdirSync(join(dir, RESTORE_MARKER_FILE));
    else writeFileSync(join(dir, RESTORE_MARKER_FILE), text, { mode: 0o600 });
    expect(() => parseConfig({ DATA_DIR: dir })).toThrow(
      expect.objectContaining({
        variable: 'DATA_DIR',
        message: expect.stringMatching(
          /from an unknown backup, begun at an unknown time\).*does not say from which backup: move DATA_DIR aside and restore into an empty one$/,
        ),
      }),
    );
  });

  it('accepts the production settings', () => {
    const config = parseConfig({
      DATA_DIR: dataDir(),
      PORT: '8080',
      EVENTSTORE_URL: 'esdb://localhost:2113?tls=false',
      MONGODB_URI: 'mongodb://localhost:27017/chronicle',
      SMTP_URL: 'smtp://localhost:1025',
      PUBLIC_BASE_URL: 'https://accounts.example.com/',
      TOKEN_SECRET: 'x'.repeat(40),
    });
    expect(config.eventStoreUrl).toBe('esdb://localhost:2113?tls=false');
    expect(config.publicBaseUrl).toBe('https://accounts.example.com');
    expect(config.tokenSecret.toString()).toBe('x'.repeat(40));
  });
});
