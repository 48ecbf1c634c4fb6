import { EVENT_SCHEMAS } from './event-types';

describe('event schemas', () => {
  it('name every event type with a version suffix', () => {
    for (const type of Object.keys(EVENT_SCHEMAS)) expect(type).toMatch(/^[A-Z][A-Za-z]+\.v\d+$/);
  });

  it('declare the password hash of an opened account as secret', () => {
    expect(EVENT_SCHEMAS['AccountOpened.v1'].secretFields).toContain('passwordHash');
  });
});
