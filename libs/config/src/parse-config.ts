import { randomBytes } from 'node:crypto';
import { chmodSync, type Dirent, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { join, resolve, sep } from 'node:path';
import { ChronicleConfig, LOG_LEVELS, LogLevel } from './chronicle-config';
import { makeDirectories } from './make-directories';
import { readRestoreMarker, unfinishedRestore } from './restore-marker';

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(`Invalid configuration: ${variable} ${message}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function text(env: Env, name: string): string | null {
  const value = env[name];
  return value === undefined || value.trim() === '' ? null : value.trim();
}

/** An integer variable from `min` to `max`; unset or blank, `fallback`. */
export function integerVariable(env: Env, name: string, fallback: number, min: number, max: number): number {
  const value = text(env, name);
  if (value === null) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min || Number(value) > max) {
    throw new ConfigError(name, `must be an integer from ${min} to ${max}, got "${value}"`);
  }
  return Number(value);
}

function url(env: Env, name: string, protocols: string[]): string | null {
  const value = text(env, name);
  if (value === null) return null;
  let parsed: URL;
  try {
    parsed = new URL(value);
  } catch {
    throw new ConfigError(name, 'must be a URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigError(name, `must use one of ${protocols.join(', ')}`);
  }
  return value;
}

/**
 * DATA_DIR holds password hashes and the token secret: it is created 0700, and an existing one,
 * its files (0600) and its folders (0700) are tightened, so no other local user can read them.
 */
function privateDataDir(dataDir: string): void {
  try {
    makeDirectories(dataDir, 0o700);
    tighten(dataDir, 0o700);
    for (const entry of readdirSync(dataDir, { withFileTypes: true })) {
      const path = join(dataDir, entry.name);
      if (entry.isFile()) tighten(path, 0o600);
      if (!entry.isDirectory()) continue;
      tighten(path, 0o700);
      for (const inner of readdirIfPresent(path)) {
        if (inner.isFile()) tighten(join(path, inner.name), 0o600);
      }
    }
    // A read-only mount whose modes are already tight passes every check above: only a write tells.
    const probe = join(dataDir, `.write-probe-${process.pid}`);
    writeFileSync(probe, '', { mode: 0o600 });
    rmSync(probe);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'an error';
    throw new ConfigError(
      'DATA_DIR',
      `(${dataDir}) must be a directory this process can create and write: ${code}`,
    );
  }
}

/**
 * Another process on the same DATA_DIR (a second instance starting, a SQLite journal) may remove a
 * file between the listing and this: what is gone needs no tightening.
 */
function tighten(path: string, mode: number): void {
  try {
    if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, mode);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

function readdirIfPresent(path: string): Dirent[] {
  try {
    return readdirSync(path, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** A secret set in the environment (at least 32 characters), or null when it is unset. */
function configuredSecret(env: Env, variable: string): Buffer | null {
  const configured = text(env, variable);
  if (configured === null) return null;
  if (configured.length < 32) throw new ConfigError(variable, 'must be at least 32 characters long');
  return Buffer.from(configured, 'utf8');
}

/** Where the secret is kept when TOKEN_SECRET is unset. */
export const TOKEN_SECRET_FILE = 'token-secret';

/** A kept secret: at least 32 bytes, written as hex. */
const KEPT_SECRET = /^(?:[0-9a-f]{2}){32,}$/i;

/**
 * TOKEN_SECRET when set (at least 32 characters), else one kept in DATA_DIR so restarts keep
 * tokens valid.
 */
function tokenSecret(env: Env, dataDir: string): Buffer {
  const configured = configuredSecret(env, 'TOKEN_SECRET');
  if (configured !== null) return configured;
  return keptSecret(join(dataDir, TOKEN_SECRET_FILE), 'TOKEN_SECRET', 'every access token then ends');
}

/**
 * AUDIT_SEAL_KEY when set (at least 32 characters), else null: the key is then kept in
 * DATA_DIR/audit-seal-key, made by the first `audit seal` (see {@link keptSecret}). A key apart
 * from TOKEN_SECRET, so that whoever can sign tokens cannot sign seals, and the other way round.
 */
export function auditSealKey(env: Env = process.env): Buffer | null {
  return configuredSecret(env, 'AUDIT_SEAL_KEY');
}

/**
 * The secret kept in `file` (hex, 0600), made there when missing (`create`), else null. A kept
 * file that is not a secret of at least 32 bytes (empty after a crash on a full disk, cut short,
 * not hex) stops start-up naming the file: decoded as it is, it would be a short or empty key
 * that anyone could forge with.
 */
export function keptSecret(file: string, variable: string, whenReplaced: string): Buffer;
export function keptSecret(
  file: string,
  variable: string,
  whenReplaced: string,
  create: boolean,
): Buffer | null;
export function keptSecret(
  file: string,
  variable: string,
  whenReplaced: string,
  create = true,
): Buffer | null {
  const kept = readKeptSecret(file, variable, whenReplaced);
  if (kept !== null || !create) return kept;
  const secret = randomBytes(32).toString('hex');
  try {
    // `wx`: when two processes start together, the first writer wins and the other reads its secret.
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return readKeptSecret(file, variable, whenReplaced);
  }
  return Buffer.from(secret, 'hex');
}

function readKeptSecret(file: string, variable: string, whenReplaced: string): Buffer | null {
  let content: string;
  try {
    content = readFileSync(file, 'utf8').trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  if (!KEPT_SECRET.test(content)) {
    throw new ConfigError(
      variable,
      `is unset and the kept secret ${file} is not a secret of at least 32 bytes (64 hex digits); ` +
        `restore it from a backup, or delete it to make a new one (${whenReplaced})`,
    );
  }
  return Buffer.from(content, 'hex');
}

/**
 * TRUST_PROXY as Fastify's `trustProxy` takes it: `true`/`false`, a hop count, or a comma-separated
 * list of addresses and CIDRs. Unset: nothing is trusted, the socket's peer is the client.
 */
function trustProxy(env: Env): boolean | number | string[] {
  const value = text(env, 'TRUST_PROXY');
  if (value === null || value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return integerVariable(env, 'TRUST_PROXY', 0, 1, 100);
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= maxBits))
    ) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be true, a hop count, or addresses and CIDRs, got "${entry}"`,
      );
    }
  }
  return entries;
}

/** CORS_ORIGINS: `*`, or a comma-separated list of origins (scheme, host, port). Unset: no CORS. */
function corsOrigins(env: Env): '*' | string[] | null {
  const value = text(env, 'CORS_ORIGINS');
  if (value === null) return null;
  if (value === '*') return '*';
  return value.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | null = null;
    try {
      parsed = new URL(origin);
    } catch {
      // reported below
    }
    if (parsed === null || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigError(
        'CORS_ORIGINS',
        `must be * or origins such as https://app.example.com, got "${origin}"`,
      );
    }
    return origin;
  });
}

/** DATA_DIR as an absolute path (default `./data`), with nothing created or checked. */
export function dataDirPath(env: Env = process.env): string {
  return resolve(text(env, 'DATA_DIR') ?? './data');
}

/**
 * ERASURE_LOG as an absolute path: the record of erasures that `restore` re-applies, kept apart
 * from DATA_DIR so that it outlives it (default: beside it, `<DATA_DIR>.erasures.jsonl`). Inside
 * DATA_DIR it would be lost with what it must outlive, so that is refused.
 */
export function erasureLogPath(env: Env = process.env, dataDir: string = dataDirPath(env)): string {
  const file = resolve(text(env, 'ERASURE_LOG') ?? `${dataDir}.erasures.jsonl`);
  if (file === dataDir || file.startsWith(`${dataDir}${sep}`)) {
    throw new ConfigError(
      'ERASURE_LOG',
      `(${file}) must be outside DATA_DIR (${dataDir}): it must outlive the loss of DATA_DIR, so that a restore ` +
        'cannot bring an erased person back',
    );
  }
  return file;
}

export interface ParseConfigOptions {
  /** `restore` finishing its own restore: the one process that opens DATA_DIR while its marker is there. */
  finishingRestore?: boolean;
}

export function parseConfig(env: Env = process.env, options: ParseConfigOptions = {}): ChronicleConfig {
  const port = integerVariable(env, 'PORT', 3000, 0, 65535);
  const dataDir = dataDirPath(env);
  privateDataDir(dataDir);
  // Every process that opens DATA_DIR comes here first, before anything is written into it.
  const marker = options.finishingRestore ? null : readRestoreMarker(dataDir);
  if (marker !== null)
    throw new ConfigError('DATA_DIR', `(${dataDir}) ${unfinishedRestore(dataDir, marker)}`);
  const logLevel = (text(env, 'LOG_LEVEL') ?? 'info').toLowerCase();
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `must be one of ${LOG_LEVELS.join(', ')}`);
  }
  const publicBaseUrl = url(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ?? `http://localhost:${port}`;
  const metricsPort = integerVariable(env, 'METRICS_PORT', 9464, 0, 65535);
  if (metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError(
      'METRICS_PORT',
      `must differ from PORT (${port}): metrics are never served publicly`,
    );
  }
  const mailFrom = text(env, 'MAIL_FROM') ?? 'Chronicle <no-reply@chronicle.local>';
  if (!/@/.test(mailFrom)) throw new ConfigError('MAIL_FROM', 'must hold an e-mail address');
  return Object.assign(new ChronicleConfig(), {
    port,
    dataDir,
    eventStoreUrl: url(env, 'EVENTSTORE_URL', ['esdb:', 'esdb+discover:']),
    mongodbUri: url(env, 'MONGODB_URI', ['mongodb:', 'mongodb+srv:']),
    smtpUrl: url(env, 'SMTP_URL', ['smtp:', 'smtps:']),
    mailFrom,
    publicBaseUrl: publicBaseUrl.replace(/\/+$/, ''),
    accessTokenTtlSeconds: integerVariable(env, 'ACCESS_TOKEN_TTL', 3600, 1, 31_536_000),
    resetTokenTtlSeconds: integerVariable(env, 'RESET_TOKEN_TTL', 1800, 1, 86_400),
    invitationTtlSeconds: integerVariable(env, 'INVITATION_TTL', 7 * 86_400, 1, 90 * 86_400),
    resetRequestsPerEmail: integerVariable(env, 'RESET_REQUESTS_PER_EMAIL', 5, 1, 1_000_000),
    resetRequestsPerClient: integerVariable(env, 'RESET_REQUESTS_PER_CLIENT', 20, 1, 1_000_000),
    loginAttemptsPerAccount: integerVariable(env, 'LOGIN_ATTEMPTS_PER_ACCOUNT', 10, 1, 1_000_000),
    loginAttemptsPerClient: integerVariable(env, 'LOGIN_ATTEMPTS_PER_CLIENT', 100, 1, 1_000_000),
    tokenSecret: tokenSecret(env, dataDir),
    auditSealKey: auditSealKey(env),
    dataKeySecret: configuredSecret(env, 'DATA_KEY_SECRET'),
    erasureLog: erasureLogPath(env, dataDir),
    logLevel: logLevel as LogLevel,
    trustProxy: trustProxy(env),
    corsOrigins: corsOrigins(env),
    requestTimeoutSeconds: integerVariable(env, 'REQUEST_TIMEOUT', 30, 1, 3600),
    metricsPort,
    readModelSnapshotEvents: integerVariable(env, 'READ_MODEL_SNAPSHOT_EVENTS', 50_000, 1, 1_000_000_000),
  });
}
