/** Who asked for a change and within which request: becomes every event's metadata. */
export interface CommandContext {
  /** The acting account id, or `system`. */
  actor: string;
  /** The request id (X-Request-Id), or a generated id for CLI and saga work. */
  correlationId: string;
  /** The event or command that caused this one, when not a request. */
  causationId?: string | null;
}

export const SYSTEM_ACTOR = 'system';
