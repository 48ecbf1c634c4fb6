import { ErasedError, SubjectErased, throwIfErased } from './subject-erased';

const ERASED_AT = '2026-11-27T08:00:00.000Z';
const erasure: SubjectErased = {
  type: 'SubjectErased.v1',
  data: { subject: 'user-u-1', kind: 'user', erasedAt: ERASED_AT },
};
const registered = { type: 'UserRegistered.v2', data: { userId: 'u-1', name: null } };
const patched = { type: 'UserPatched.v1', data: { userId: 'u-1', changes: { name: null } } };

describe('throwIfErased', () => {
  it('lets a stream without its SubjectErased.v1 be read', () => {
    expect(() => throwIfErased([], 'User')).not.toThrow();
    expect(() => throwIfErased([registered, patched], 'User')).not.toThrow();
  });

  it.each([
    ['last', [registered, patched, erasure]],
    ['first (a tail read after it)', [erasure, patched]],
    ['alone', [erasure]],
  ])('refuses the subject with its SubjectErased.v1 %s: erased, naming what and when', (_where, events) => {
    let thrown: unknown;
    try {
      throwIfErased(events, 'Customer');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ErasedError);
    expect(thrown).toMatchObject({ code: 'erased', erasedAt: ERASED_AT, message: 'Customer was erased' });
  });

  it('answers the first erasure when a stream holds two', () => {
    const again = { ...erasure, data: { ...erasure.data, erasedAt: '2026-11-28T00:00:00.000Z' } };
    expect(() => throwIfErased([registered, erasure, again], 'User')).toThrow(
      expect.objectContaining({ erasedAt: ERASED_AT }) as Error,
    );
  });
});
