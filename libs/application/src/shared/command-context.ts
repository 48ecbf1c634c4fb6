import { userInfo } from 'node:os';
import { AuthProvenance, RecordedEvent } from '@chronicle/event-store';

/** Who asked for a change and within which request: becomes every event's metadata. */
export interface CommandContext {
  /** The acting account id, `cli:<OS user>`, `anonymous` or `system`. */
  actor: string;
  /** The server's id of the request (or CLI run) that started the work; never the client's. */
  correlationId: string;
  /** The client's own X-Request-Id, recorded beside the correlation id. */
  clientRequestId?: string | null;
  /** How the caller authenticated, and with which access token. */
  auth: AuthProvenance;
  /** The event or command that caused this one, when not a request. */
  causationId?: string | null;
}

export const SYSTEM_ACTOR = 'system';
export const ANONYMOUS_ACTOR = 'anonymous';

/** The service's own work: no caller, nothing authenticated. */
export const SYSTEM_AUTH: AuthProvenance = { method: 'system', tokenId: null };

/** Work a stored event causes (a saga step): the service acts, within the event's correlation. */
export const followUpContext = (cause: RecordedEvent): CommandContext => ({
  actor: SYSTEM_ACTOR,
  correlationId: cause.metadata.correlationId,
  causationId: cause.id,
  auth: SYSTEM_AUTH,
});

/** The operating-system user running the CLI; its uid when the system has no name for it. */
function osUserName(): string {
  try {
    return userInfo().username;
  } catch {
    // Containers may run under a uid with no passwd entry.
    return `uid-${process.getuid?.() ?? 'unknown'}`;
  }
}

/** CLI work: attributed to `cli:<OS user>`, with a fresh correlation id per invocation. */
export const cliContext = (correlationId: string): CommandContext => ({
  actor: `cli:${osUserName()}`,
  correlationId,
  auth: { method: 'cli', tokenId: null },
});
