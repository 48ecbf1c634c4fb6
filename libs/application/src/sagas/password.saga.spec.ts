import { recordedEvent as recorded } from '@chronicle/event-store/testing';
import { CompletePasswordChangeCommand } from '../accounts/complete-password-change/complete-password-change.command';
import { SendInvitationEmailCommand } from '../accounts/send-invitation-email/send-invitation-email.command';
import { SendPasswordResetEmailCommand } from '../accounts/send-password-reset-email/send-password-reset-email.command';
import { CompleteErasureCommand } from '../personal-data/complete-erasure/complete-erasure.command';
import { passwordSaga } from './password.saga';

describe('passwordSaga', () => {
  it.each([
    ['PasswordResetRequested.v2', SendPasswordResetEmailCommand, 'request'],
    ['AccountInvited.v1', SendInvitationEmailCommand, 'invitation'],
    ['PasswordReset.v1', CompletePasswordChangeCommand, 'change'],
    ['PasswordChanged.v1', CompletePasswordChangeCommand, 'change'],
    ['SubjectErased.v1', CompleteErasureCommand, 'erasure'],
  ])('answers %s with a %p carrying the event', (type, command, field) => {
    const event = recorded(type);
    const answer = passwordSaga.commandFor(event);
    expect(answer).toBeInstanceOf(command);
    expect(answer).toEqual({ [field]: event });
  });

  it('has no work for any other event', () => {
    expect(passwordSaga.commandFor(recorded('PasswordResetRequested.v1'))).toBeNull();
    expect(passwordSaga.commandFor(recorded('CustomerRegistered.v1'))).toBeNull();
  });
});
