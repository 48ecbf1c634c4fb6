import { ICommand } from '@nestjs/cqrs';
import { RecordedEvent } from '@chronicle/event-store';
import { CompletePasswordChangeCommand } from '../accounts/complete-password-change/complete-password-change.command';
import { SendInvitationEmailCommand } from '../accounts/send-invitation-email/send-invitation-email.command';
import { SendPasswordResetEmailCommand } from '../accounts/send-password-reset-email/send-password-reset-email.command';
import { CompleteErasureCommand } from '../personal-data/complete-erasure/complete-erasure.command';

/** What a saga is: a name (its checkpoint) and the command, if any, that an event calls for. */
export interface Saga {
  readonly name: string;
  /** Every event type commandFor answers with a command: the only ones the saga is fed. */
  readonly eventTypes: readonly string[];
  commandFor(event: RecordedEvent): ICommand | null;
}

/**
 * Reset e-mails after a request, invitation e-mails after an admin opens an account; invalidation,
 * revocation and the notice after a password change; an erasure's account closing and key
 * destruction, when the erasure itself did not finish them (a crash).
 */
export const passwordSaga: Saga = {
  name: 'saga:password',
  eventTypes: [
    'PasswordResetRequested.v2',
    'AccountInvited.v1',
    'PasswordReset.v1',
    'PasswordChanged.v1',
    'SubjectErased.v1',
  ],
  commandFor(event: RecordedEvent): ICommand | null {
    switch (event.type) {
      case 'PasswordResetRequested.v2':
        return new SendPasswordResetEmailCommand(event as SendPasswordResetEmailCommand['request']);
      case 'AccountInvited.v1':
        return new SendInvitationEmailCommand(event as SendInvitationEmailCommand['invitation']);
      case 'PasswordReset.v1':
      case 'PasswordChanged.v1':
        return new CompletePasswordChangeCommand(event as CompletePasswordChangeCommand['change']);
      case 'SubjectErased.v1':
        return new CompleteErasureCommand(event);
      default:
        return null;
    }
  },
};
