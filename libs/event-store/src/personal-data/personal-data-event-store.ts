import {
  AppendResult,
  EventData,
  EventStore,
  EventSubscription,
  ExpectedRevision,
  LogPage,
  LogQuery,
  NewEvent,
  ReadAllOptions,
  RecordedEvent,
  SubscribeOptions,
} from '../event-store.port';
import { batchMappedSubscription, ForwardingEventStore } from '../forwarding-event-store';
import { DataKeyRing, RingKey } from './data-key-ring';
import { DataSubject, SubjectErasedError, subjectName } from './data-key-store.port';
import {
  decryptPersonalValue,
  encryptPersonalValue,
  isEncryptedValue,
  PersonalValue,
} from './personal-value-codec';
import { RecentlySealed } from './recently-sealed';

/** Where a stored event type keeps personal values, and whose they are (the domain's declaration). */
export interface PersonalFields {
  subject(data: Readonly<Record<string, unknown>>): DataSubject;
  fields: readonly string[];
  /** The object member that holds them, when not the data itself (a patch's `changes`). */
  within?: string;
}

/** A stored event's data and metadata once `history protect` has encrypted its personal values. */
export interface ProtectedEvent {
  data: EventData;
  metadata: RecordedEvent['metadata'];
}

export type PersonalFieldsOf = (storedType: string) => PersonalFields | undefined;

/** Events read in one batch of keys by readAll: one call to the key store per this many. */
const READ_BATCH = 256;

/**
 * The EventStore port with personal values encrypted: on append each personal value is stored
 * as AES-256-GCM ciphertext under its subject's key (metadata `personalData: 'encrypted'`), and
 * every read decrypts it, or gives `null` with `erased: true` once the subject's key is destroyed.
 * The one place values are decrypted: aggregates, projections, the audit and exports all read
 * through it. The chain covers what is stored, so its reads pass through untouched.
 */
export class PersonalDataEventStore extends ForwardingEventStore {
  private readonly recent = new RecentlySealed();

  constructor(
    inner: EventStore,
    readonly keys: DataKeyRing,
    private readonly personalFieldsOf: PersonalFieldsOf,
  ) {
    super(inner);
  }

  override async append(
    stream: string,
    events: NewEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    return this.inner.append(stream, await this.encrypted(events), expected);
  }

  override async readStream(stream: string, options?: { fromRevision?: number }): Promise<RecordedEvent[]> {
    return this.decrypted(await this.inner.readStream(stream, options));
  }

  override async queryLog(query: LogQuery): Promise<LogPage> {
    const page = await this.inner.queryLog(query);
    return { events: await this.decrypted(page.events), next: page.next };
  }

  override async *readAll(options?: ReadAllOptions): AsyncIterable<RecordedEvent> {
    let batch: RecordedEvent[] = [];
    for await (const event of this.inner.readAll(options)) {
      batch.push(event);
      if (batch.length < READ_BATCH) continue;
      yield* await this.decrypted(batch);
      batch = [];
    }
    if (batch.length > 0) yield* await this.decrypted(batch);
  }

  override subscribeToAll(options?: SubscribeOptions): EventSubscription {
    // Many events at a time: a catch-up asks the key store once per batch, not once per event.
    return batchMappedSubscription(this.inner.subscribeToAll(options), (events) => this.decrypted(events));
  }

  /** Events as stored but decrypted: the audit's raw view shows no ciphertext either. */
  override asStored(): EventStore {
    return this;
  }

  override async close(): Promise<void> {
    await this.inner.close();
    await this.keys.close();
  }

  /**
   * `history protect`: what each stored event becomes once protected, or null when it needs
   * nothing (no personal values, or already protected). Plaintext values are encrypted as an
   * append would encrypt them, with metadata `personalData: 'encrypted'`; those of a subject
   * already erased become null (`personalData: 'erased'`): there is no key left to encrypt them
   * under, and keeping them would undo the erasure.
   */
  async protectStored(events: readonly RecordedEvent[]): Promise<Array<ProtectedEvent | null>> {
    const unprotected = events.map((event) => (event.metadata.personalData === undefined ? event : null));
    const protect = unprotected.filter((event): event is RecordedEvent => event !== null);
    const done = await this.encrypted(protect, 'null');
    let next = 0;
    return unprotected.map((event) => {
      if (event === null) return null;
      const result = done[next++];
      return result === event ? null : { data: result.data, metadata: result.metadata };
    });
  }

  /**
   * The events with their personal values encrypted under their subjects' keys; an erased
   * subject's values refused (an append), or made null (`history protect`). Events without
   * personal values are returned as they are.
   */
  private async encrypted<E extends NewEvent>(
    events: E[],
    onErased: 'refuse' | 'null' = 'refuse',
  ): Promise<E[]> {
    const owners = this.ownersOf(events);
    const subjects = subjectsAmong(owners);
    if (subjects.length === 0) return events;
    const keys = await this.keys.forWriting(subjects);
    return events.map((event, i) => {
      const owner = owners[i];
      if (owner === undefined) return event;
      const { personal, subject } = owner;
      const key = keys.get(subjectName(subject))!;
      if (key.state === 'erased') {
        if (onErased === 'refuse') throw new SubjectErasedError(key.erasure);
        const data = mapPersonal(event.data, personal, () => null);
        return { ...event, data, metadata: { ...event.metadata, personalData: 'erased' } };
      }
      const name = subjectName(subject);
      const data = mapPersonal(event.data, personal, (field, value) => {
        const sealed = encryptPersonalValue(key.key, subject, field, value as PersonalValue);
        this.recent.remember(sealed, name, field, value as PersonalValue);
        return sealed;
      });
      return { ...event, data, metadata: { ...event.metadata, personalData: 'encrypted' } };
    });
  }

  private async decrypted(events: RecordedEvent[]): Promise<RecordedEvent[]> {
    const owners = this.ownersOf(events);
    const subjects = subjectsAmong(owners);
    if (subjects.length === 0) return events;
    const keys = await this.keys.forReading(subjects);
    return events.map((event, i) => {
      const owner = owners[i];
      return owner === undefined ? event : decryptedEvent(event, owner, keys, this.recent);
    });
  }

  /** Each event's personal fields and their subject, worked out once per event; undefined for none. */
  private ownersOf(events: readonly { type: string; data: EventData }[]): Array<Owner | undefined> {
    return events.map((event) => {
      const personal = this.personalFieldsOf(event.type);
      return personal === undefined ? undefined : { personal, subject: personal.subject(event.data) };
    });
  }
}

/** Where an event keeps personal values, and whose they are. */
interface Owner {
  personal: PersonalFields;
  subject: DataSubject;
}

function subjectsAmong(owners: ReadonlyArray<Owner | undefined>): DataSubject[] {
  const subjects: DataSubject[] = [];
  for (const owner of owners) if (owner !== undefined) subjects.push(owner.subject);
  return subjects;
}

function decryptedEvent(
  event: RecordedEvent,
  { personal, subject }: Owner,
  keys: ReadonlyMap<string, RingKey>,
  recent: RecentlySealed,
): RecordedEvent {
  const name = subjectName(subject);
  const key = keys.get(name);
  if (key?.state === 'erased') {
    return { ...event, data: mapPersonal(event.data, personal, () => null), erased: true };
  }
  // Written before values were encrypted (or `history protect`ed): plaintext, shown as stored.
  if (event.metadata.personalData !== 'encrypted') return event;
  if (key === undefined) {
    throw new Error(
      `The data key of ${name} is missing from the key store, so ${event.type} at ${event.stream}@${event.revision} ` +
        'cannot be read: was DATA_DIR (or the data_keys collection) restored without its key store?',
    );
  }
  // A value not in the encrypted form was put there outside the service (the chain shows where):
  // shown as stored, which is no ciphertext.
  const data = mapPersonal(event.data, personal, (field, value) => {
    if (!isEncryptedValue(value)) return value;
    const known = recent.recall(value, name, field);
    return known !== undefined ? known : decryptPersonalValue(key.key, subject, field, value);
  });
  return { ...event, data };
}

/** The data with each present personal value replaced by `map(field, value)`; the rest shared. */
function mapPersonal(
  data: EventData,
  { fields, within }: PersonalFields,
  map: (field: string, value: unknown) => unknown,
): EventData {
  const holder = within === undefined ? data : (data[within] as Record<string, unknown> | undefined);
  if (holder === undefined || holder === null) return data;
  const mapped: Record<string, unknown> = { ...holder };
  for (const field of fields) {
    if (holder[field] !== undefined)
      mapped[field] = map(within === undefined ? field : `${within}.${field}`, holder[field]);
  }
  return within === undefined ? mapped : { ...data, [within]: mapped };
}
