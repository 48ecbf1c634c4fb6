/** The service's configuration, parsed and validated from the environment (API.md "Configuration"). */
export class ChronicleConfig {
  port!: number;
  /** Embedded event store, outbox and generated secrets live here. */
  dataDir!: string;
  /** Set: EventStoreDB; unset: the embedded event store under dataDir. */
  eventStoreUrl!: string | null;
  /** Set: MongoDB read models; unset: in-memory read models rebuilt at start-up. */
  mongodbUri!: string | null;
  /** Set: e-mail over SMTP; unset: .eml files in dataDir/outbox. */
  smtpUrl!: string | null;
  mailFrom!: string;
  /** Links in e-mails are built from this, never from a request's Host header. */
  publicBaseUrl!: string;
  accessTokenTtlSeconds!: number;
  resetTokenTtlSeconds!: number;
  /** An invitation's link (an admin-created account's first password) lives this long, in seconds. */
  invitationTtlSeconds!: number;
  /** Reset requests allowed per e-mail address, and per client address, in each 15-minute window. */
  resetRequestsPerEmail!: number;
  resetRequestsPerClient!: number;
  /** Failed password checks allowed per e-mail address, and per client address, in 15 minutes. */
  loginAttemptsPerAccount!: number;
  loginAttemptsPerClient!: number;
  /** Signs access tokens and keys the credential cache; generated into dataDir when unset. */
  tokenSecret!: Buffer;
  /** Signs audit seals; null: a key kept in dataDir/audit-seal-key (made by the first seal). */
  auditSealKey!: Buffer | null;
  /**
   * Wraps the subjects' data keys (DATA_KEY_SECRET), apart from every other secret; null: one kept
   * in dataDir/data-key-secret on the embedded default, made at the key store's first use, and
   * refused with MONGODB_URI (`dataKeySecretOf` in the event store's personal data).
   */
  dataKeySecret!: Buffer | null;
  /**
   * The erasure log (ERASURE_LOG): every erasure appended, outside dataDir, so that `restore` can
   * re-apply the erasures a backup predates even once dataDir is lost (docs/operations.md).
   */
  erasureLog!: string;
  logLevel!: LogLevel;
  /** Which proxies' X-Forwarded-For to believe for the client's address (Fastify's `trustProxy`). */
  trustProxy!: boolean | number | string[];
  /** Origins allowed to call the API from a browser; null: no CORS headers at all. */
  corsOrigins!: '*' | string[] | null;
  /** A request not received and answered within this many seconds is cut off (408). */
  requestTimeoutSeconds!: number;
  /** The operator's listener for /metrics (and the projector's /health/*); 0: none. */
  metricsPort!: number;
  /** Embedded default: events applied between two snapshots of the in-memory read models, at least. */
  readModelSnapshotEvents!: number;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
