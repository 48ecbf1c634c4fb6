import { CommandHandler, ICommandHandler } from '@nestjs/cqrs';
import { SubjectErased } from '@chronicle/domain';
import { followUpContext } from '../../shared/command-context';
import { CompleteErasureCommand } from './complete-erasure.command';
import { ErasureCompletion } from './erasure-completion';

@CommandHandler(CompleteErasureCommand)
export class CompleteErasureHandler implements ICommandHandler<CompleteErasureCommand, void> {
  constructor(private readonly completion: ErasureCompletion) {}

  async execute({ erasure }: CompleteErasureCommand): Promise<void> {
    await this.completion.complete(erasure.data as SubjectErased['data'], followUpContext(erasure));
  }
}
