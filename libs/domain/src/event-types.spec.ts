import { EVENT_UPCASTERS } from './event-upcasters';
import { EVENT_SCHEMAS, eventSchemaOf, LEGACY_EVENT_SCHEMAS } from './event-types';

describe('event schemas', () => {
  it('name every event type with a version suffix', () => {
    for (const type of Object.keys(EVENT_SCHEMAS)) expect(type).toMatch(/^[A-Z][A-Za-z]+\.v\d+$/);
  });

  it('declare the password hash of an opened account as secret', () => {
    expect(EVENT_SCHEMAS['AccountOpened.v1'].secretFields).toContain('passwordHash');
  });

  it('declare every older version an upcaster reads, and nothing else, as legacy', () => {
    expect(Object.keys(LEGACY_EVENT_SCHEMAS).sort()).toEqual(
      EVENT_UPCASTERS.map((upcaster) => upcaster.from).sort(),
    );
  });

  it('find current and legacy schemas, and none for a type this build does not know', () => {
    expect(eventSchemaOf('AccountOpened.v1')).toBe(EVENT_SCHEMAS['AccountOpened.v1']);
    expect(eventSchemaOf('UserRegistered.v1')).toBe(LEGACY_EVENT_SCHEMAS['UserRegistered.v1']);
    expect(eventSchemaOf('UserRegistered.v9')).toBeUndefined();
    expect(eventSchemaOf('constructor')).toBeUndefined();
  });
});
