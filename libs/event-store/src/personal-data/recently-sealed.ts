import type { PersonalValue } from './personal-value-codec';

/** Values remembered at most: about a second of PATCHes at full load, a few hundred kB. */
const DEFAULT_ENTRIES = 4_096;

/**
 * The values this process encrypted last, by their stored form. A process reads back at once what
 * it appends (its projections, its sessions), and opening each value again cost a PATCH as much
 * CPU as sealing it. A stored form holds a random IV, so it names one sealing only, and it is
 * recalled only for the subject and field it was sealed for (what its associated data binds): the
 * same text copied under another subject or field is opened, and refused, as before. The store
 * asks only once the subject's key is known to be live, so an erased subject's values read null
 * whatever is held here; entries leave oldest first and are never served for an erased subject.
 */
export class RecentlySealed {
  private readonly values = new Map<string, { subject: string; field: string; value: PersonalValue }>();

  constructor(private readonly maxEntries = DEFAULT_ENTRIES) {}

  remember(sealed: string, subject: string, field: string, value: PersonalValue): void {
    if (this.values.size >= this.maxEntries) this.values.delete(this.values.keys().next().value!);
    this.values.set(sealed, { subject, field, value });
  }

  /** The value `sealed` was made from for that subject and field; undefined when not held. */
  recall(sealed: string, subject: string, field: string): PersonalValue | undefined {
    const held = this.values.get(sealed);
    return held !== undefined && held.subject === subject && held.field === field ? held.value : undefined;
  }
}
