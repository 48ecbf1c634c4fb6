import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';
import { ErasureResult } from '../erase-subject/erase-subject.command';

export interface ReappliedErasures {
  /** The erasures of subjects this history holds, each as `erase` answers it (new or kept). */
  reapplied: ErasureResult[];
  /** Logged subjects this history never held (made after the backup), or another of their name. */
  notHeld: number;
  /** Lines of the log that are no erasure (cut short by a crash, or edited). */
  unreadable: number;
}

/**
 * Erases again every subject in the erasure log (ERASURE_LOG) that this history holds: what
 * `restore` does to a backup taken before some of them, so that it brings no one back.
 */
export class ReapplyErasuresCommand extends Command<ReappliedErasures> {
  constructor(readonly context: CommandContext) {
    super();
  }
}
