import { accountStreamName, RESERVATION_KEYS_STREAM, resetRequestStreamName } from './account/account.events';
import { passwordResetRequestedV1ToV2 } from './account/password-reset-requested.upcaster';
import { CUSTOMER_SEQUENCE_STREAM, customerStreamName } from './customer/customer.events';
import { EVENT_UPCASTERS } from './event-upcasters';
import { emailStreamNameFor } from './shared/values';
import { userStreamName } from './user/user.events';
import { userRegisteredV1ToV2 } from './user/user-registered.upcaster';

// Stream names are stored: a build that spelt one differently would not find the history.
describe('stream names', () => {
  it('are spelt as the stored history has them', () => {
    expect(accountStreamName('a-1')).toBe('account-a-1');
    expect(resetRequestStreamName('ab12')).toBe('resetrequest-ab12');
    expect(emailStreamNameFor('ab12')).toBe('email-ab12');
    expect(RESERVATION_KEYS_STREAM).toBe('reservationkeys');
    expect(customerStreamName(7)).toBe('customer-7');
    expect(CUSTOMER_SEQUENCE_STREAM).toBe('sequence-customer');
    expect(userStreamName('u-1')).toBe('user-u-1');
  });
});

describe('EVENT_UPCASTERS', () => {
  it('holds every upcaster, so stored UserRegistered.v1 and PasswordResetRequested.v1 events are read as v2', () => {
    expect(EVENT_UPCASTERS).toEqual([userRegisteredV1ToV2, passwordResetRequestedV1ToV2]);
  });
});
