import { parseCustomerNumber } from '../customer/customer.events';
import { DomainError, NotFoundError } from '../shared/domain-error';
import { DomainEvent } from '../shared/event';

/** Whose personal data is erased as one: a person (the account with its user) or a customer. */
export type ErasedSubjectKind = 'user' | 'customer';

/**
 * A subject was erased (API.md "Personal data"): appended to its stream (`user-<id>`,
 * `customer-<id>`), then its data key is destroyed. `subject` is the stream's name.
 */
export type SubjectErased = DomainEvent<
  'SubjectErased.v1',
  { subject: string; kind: ErasedSubjectKind; erasedAt: string }
>;

/** Who an erasure erased, as its subject's stream names them: a person by user id, a customer by number. */
export type ErasedSubjectId = { kind: 'user'; userId: string } | { kind: 'customer'; customerId: number };

/**
 * The one reading of a SubjectErased.v1's `subject` (`user-<user id>`, `customer-<number>`). A
 * subject that is not its kind's stream was not written by the service: refused, never guessed.
 */
export function erasedSubjectOf({ subject, kind }: SubjectErased['data']): ErasedSubjectId {
  const id = subject.startsWith(`${kind}-`) ? subject.slice(kind.length + 1) : '';
  if (kind === 'user' && id !== '') return { kind, userId: id };
  const customerId = kind === 'customer' ? parseCustomerNumber(id) : undefined;
  if (customerId !== undefined) return { kind: 'customer', customerId };
  throw new Error(`SubjectErased.v1 names ${JSON.stringify(subject)}, which is no ${kind}'s stream`);
}

/** What an erased subject's stream folds to: nothing about it is readable or changeable any more. */
export interface ErasedSubject {
  exists: false;
  erasedAt: string;
}

/** The subject asked for was erased: gone for good (410), not merely unknown. */
export class ErasedError extends DomainError {
  readonly code = 'erased';
  constructor(
    what: string,
    readonly erasedAt: string,
  ) {
    super(`${what} was erased`);
    this.name = 'ErasedError';
  }
}

export function isErasedSubject(state: { exists: boolean }): state is ErasedSubject {
  return !state.exists && 'erasedAt' in state;
}

/** The one event of an erasure, once its subject exists; none again once it was erased. */
export function decideErasure(
  state: { exists: boolean },
  subject: string,
  kind: ErasedSubjectKind,
  now: string,
  what: string,
): SubjectErased[] {
  if (isErasedSubject(state)) return [];
  if (!state.exists) throw new NotFoundError(what);
  return [{ type: 'SubjectErased.v1', data: { subject, kind, erasedAt: now } }];
}

/**
 * A subject read from its stream's events is gone for good once its SubjectErased.v1 is among
 * them: ErasedError (410) naming `what` and when, never a view of its nulls.
 */
export function throwIfErased(events: readonly { type: string; data: unknown }[], what: string): void {
  const erased = events.find((event) => event.type === 'SubjectErased.v1');
  if (erased !== undefined) throw new ErasedError(what, (erased.data as SubjectErased['data']).erasedAt);
}
