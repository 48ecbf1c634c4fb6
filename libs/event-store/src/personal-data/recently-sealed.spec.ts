import { RecentlySealed } from './recently-sealed';

describe('RecentlySealed', () => {
  it('recalls a value for the subject and field it was sealed for, and for no other', () => {
    const recent = new RecentlySealed();
    recent.remember('p1.a', 'user-1', 'name', 'Ada');
    recent.remember('p1.b', 'user-1', 'age', null);

    expect(recent.recall('p1.a', 'user-1', 'name')).toBe('Ada');
    expect(recent.recall('p1.b', 'user-1', 'age')).toBeNull();
    expect(recent.recall('p1.a', 'user-2', 'name')).toBeUndefined();
    expect(recent.recall('p1.a', 'user-1', 'changes.name')).toBeUndefined();
    expect(recent.recall('p1.c', 'user-1', 'name')).toBeUndefined();
  });

  it('holds at most its bound, letting the oldest go first', () => {
    const recent = new RecentlySealed(2);
    recent.remember('p1.a', 's', 'f', 1);
    recent.remember('p1.b', 's', 'f', 2);
    recent.remember('p1.c', 's', 'f', 3);

    expect(['p1.a', 'p1.b', 'p1.c'].map((sealed) => recent.recall(sealed, 's', 'f'))).toEqual([
      undefined,
      2,
      3,
    ]);
  });
});
