import { Command } from '@nestjs/cqrs';
import { ErasedSubjectKind } from '@chronicle/domain';
import { CommandContext } from '../../shared/command-context';

export interface ErasureResult {
  /** The subject's stream: `user-<id>` or `customer-<id>`. */
  subject: string;
  kind: ErasedSubjectKind;
  /** RFC 3339: when the subject was erased (the first erasure, on a repeat). */
  erasedAt: string;
  /** The formatted position of its SubjectErased.v1 event. */
  position: string;
}

/**
 * Erases a person (`user`: the user with its account) or a customer (API.md "Personal data"):
 * DELETE /users/{id}, DELETE /customers/{id} and the CLI's `erase`. Erasing again answers the
 * first erasure.
 */
export class EraseSubjectCommand extends Command<ErasureResult> {
  constructor(
    readonly kind: ErasedSubjectKind,
    readonly id: string,
    readonly context: CommandContext,
  ) {
    super();
  }
}
