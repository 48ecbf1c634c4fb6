import { EventData, RecordedEvent } from '../event-store.port';

/** Maps the data of a stored event of type `from` to that of type `to` (pure and total). */
export interface Upcaster {
  readonly from: string;
  readonly to: string;
  upcast(data: EventData): EventData;
}

/**
 * Upcasters by the type they read. An event is upcast step by step (v1 → v2 → v3) until no
 * upcaster reads its type, so each version change needs only one small upcaster.
 */
export class UpcasterRegistry {
  private readonly byType = new Map<string, Upcaster>();

  constructor(upcasters: readonly Upcaster[]) {
    for (const upcaster of upcasters) {
      if (upcaster.from === upcaster.to) throw new Error(`Upcaster ${upcaster.from} maps a type to itself`);
      if (this.byType.has(upcaster.from)) throw new Error(`Two upcasters read ${upcaster.from}`);
      this.byType.set(upcaster.from, upcaster);
    }
    // A cycle would loop forever on the first event of its types: refuse it up front.
    for (const start of this.byType.keys()) {
      const seen = new Set<string>([start]);
      for (let type = this.byType.get(start)?.to; type !== undefined; type = this.byType.get(type)?.to) {
        if (seen.has(type)) throw new Error(`Upcasters loop through ${type}`);
        seen.add(type);
      }
    }
  }

  /** The stored types that read as one of `types`: each of them still current, and their older versions. */
  storedTypesOf(types: readonly string[]): string[] {
    const wanted = new Set(types);
    const stored = new Set(types.filter((type) => wanted.has(this.newestOf(type))));
    for (const from of this.byType.keys()) if (wanted.has(this.newestOf(from))) stored.add(from);
    return [...stored];
  }

  private newestOf(type: string): string {
    let newest = type;
    for (let upcaster = this.byType.get(newest); upcaster !== undefined; upcaster = this.byType.get(newest)) {
      newest = upcaster.to;
    }
    return newest;
  }

  /** The event as its newest version; the same object when no upcaster applies. */
  upcast(event: RecordedEvent): RecordedEvent {
    let upcaster = this.byType.get(event.type);
    if (upcaster === undefined) return event;
    let { type, data } = event;
    while (upcaster !== undefined) {
      data = upcaster.upcast(data);
      type = upcaster.to;
      upcaster = this.byType.get(type);
    }
    return { ...event, type, data };
  }
}
