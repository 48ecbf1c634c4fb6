import { readFile } from 'node:fs/promises';
import { appendLineDurably } from '@chronicle/config';
import { Erasure, SubjectKind, subjectName } from './data-key-store.port';

/** An erasure as the log keeps it: the subject, when, and which subject of that name it was. */
export interface LoggedErasure extends Erasure {
  /**
   * The id of the subject's first event: a customer number given again (to a customer created
   * after a restore) names another subject, whose first event is another.
   */
  readonly firstEventId: string;
}

export interface ErasureLogContents {
  /** One per subject, the first logged, in the order logged. */
  erasures: LoggedErasure[];
  /** Lines that are no erasure: cut short by a crash, or edited. */
  unreadable: number;
}

const KINDS: readonly SubjectKind[] = ['user', 'customer'];

/**
 * The erasure log (ERASURE_LOG): one JSON line per erasure, appended durably before the subject's
 * key is destroyed, in a file kept apart from DATA_DIR. What `restore` re-applies to a backup
 * taken before an erasure, even once DATA_DIR is lost. It holds ids and times, never a personal
 * value.
 */
export class ErasureLog {
  constructor(readonly file: string) {}

  /** On disk when this resolves; a crash before then leaves the key in place, to be erased again. */
  append(erasure: LoggedErasure): Promise<void> {
    const { subject, erasedAt, firstEventId } = erasure;
    return appendLineDurably(
      this.file,
      JSON.stringify({
        subject: subjectName(subject),
        kind: subject.kind,
        id: subject.id,
        erasedAt,
        firstEventId,
      }),
    );
  }

  /** Every subject logged (none when there is no log yet). */
  async read(): Promise<ErasureLogContents> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { erasures: [], unreadable: 0 };
      throw error;
    }
    const bySubject = new Map<string, LoggedErasure>();
    let unreadable = 0;
    for (const line of text.split('\n')) {
      if (line === '') continue;
      const erasure = parseLine(line);
      if (erasure === null) unreadable += 1;
      else if (!bySubject.has(subjectName(erasure.subject)))
        bySubject.set(subjectName(erasure.subject), erasure);
    }
    return { erasures: [...bySubject.values()], unreadable };
  }
}

function parseLine(line: string): LoggedErasure | null {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
  const { kind, id, subject, erasedAt, firstEventId } = record ?? {};
  if (
    typeof kind !== 'string' ||
    !KINDS.includes(kind as SubjectKind) ||
    typeof id !== 'string' ||
    subject !== `${kind}-${id}` ||
    typeof erasedAt !== 'string' ||
    Number.isNaN(Date.parse(erasedAt)) ||
    typeof firstEventId !== 'string'
  ) {
    return null;
  }
  return { subject: { kind: kind as SubjectKind, id }, erasedAt, firstEventId };
}
