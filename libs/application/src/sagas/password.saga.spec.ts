import { position, RecordedEvent } from '@chronicle/event-store';
import { CompletePasswordChangeCommand } from '../accounts/complete-password-change/complete-password-change.command';
import { SendInvitationEmailCommand } from '../accounts/send-invitation-email/send-invitation-email.command';
import { SendPasswordResetEmailCommand } from '../accounts/send-password-reset-email/send-password-reset-email.command';
import { CompleteErasureCommand } from '../personal-data/complete-erasure/complete-erasure.command';
import { passwordSaga } from './password.saga';

const recorded = (type: string): RecordedEvent => ({
  id: `event-of-${type}`,
  type,
  data: {},
  metadata: {
    actor: 'system',
    correlationId: 'c',
    causationId: null,
    occurredAt: '2026-01-01T00:00:00.000Z',
  },
  stream: 's',
  revision: 0,
  position: position(1),
  recordedAt: '2026-01-01T00:00:00.000Z',
  hash: 'a'.repeat(64),
});

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
