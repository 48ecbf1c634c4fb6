import { Command } from '@nestjs/cqrs';
import { CommandContext } from '../../shared/command-context';

export interface SeedCustomersResult {
  created: number;
  firstId: number | null;
  lastId: number | null;
}

export class SeedCustomersCommand extends Command<SeedCustomersResult> {
  constructor(
    readonly count: number,
    readonly context: CommandContext,
    /** Called after each chunk with the number created so far. */
    readonly onProgress?: (created: number) => void,
  ) {
    super();
  }
}
