import { validateAppend } from './append-validation';
import { NewEvent } from './event-store.port';

const event = (overrides: Record<string, unknown> = {}): NewEvent => ({
  id: 'e-1',
  type: 'Happened.v1',
  data: { x: 1 },
  metadata: {
    actor: 'system',
    correlationId: 'c',
    causationId: null,
    occurredAt: '2026-01-01T00:00:00.000Z',
  },
  ...overrides,
});

describe('validateAppend', () => {
  it('accepts a well-formed append of one or more events', () => {
    expect(() => validateAppend('user-1', [event()], 'no_stream')).not.toThrow();
    expect(() => validateAppend('user-1', [event(), event({ id: 'e-2' })], 3)).not.toThrow();
  });

  it.each([
    ['', 'Invalid stream name "": empty or a system stream ($...)'],
    ['$all', 'Invalid stream name "$all": empty or a system stream ($...)'],
    [42, 'Invalid stream name 42: empty or a system stream ($...)'],
  ])('refuses the stream name %p', (stream, message) => {
    expect(() => validateAppend(stream as string, [event()], 'any')).toThrow(new RangeError(message));
  });

  it('refuses an append without events', () => {
    expect(() => validateAppend('user-1', [], 'any')).toThrow(
      new RangeError('Stream user-1: an append needs at least one event'),
    );
  });

  it.each([-1, 1.5, Number.MAX_SAFE_INTEGER + 1])('refuses the expected revision %p', (expected) => {
    expect(() => validateAppend('user-1', [event()], expected)).toThrow(
      new RangeError(`Stream user-1: invalid expected revision ${expected}`),
    );
  });

  it.each([
    [{ id: '' }, 'An event needs an id'],
    [{ id: 7 }, 'An event needs an id'],
    [{ type: '' }, 'Event e-2 needs a type'],
    [{ type: null }, 'Event e-2 needs a type'],
    [{ data: null }, 'Event e-2: data must be a JSON object'],
    [{ data: [1] }, 'Event e-2: data must be a JSON object'],
    [{ data: 'text' }, 'Event e-2: data must be a JSON object'],
    [{ metadata: null }, 'Event e-2 needs metadata'],
    [{ metadata: 'm' }, 'Event e-2 needs metadata'],
  ])('refuses an event with %p', (overrides, message) => {
    expect(() => validateAppend('user-1', [event(), event({ id: 'e-2', ...overrides })], 'any')).toThrow(
      new TypeError(message),
    );
  });
});
