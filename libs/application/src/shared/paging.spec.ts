import { pageOffset } from './paging';

describe('pageOffset', () => {
  it.each([
    [1, 20, 0],
    [2, 20, 20],
    [3, 25, 50],
  ])('of page %i of %i is %i', (page, pageSize, offset) => {
    expect(pageOffset(page, pageSize)).toBe(offset);
  });

  it('holds a page past any end at the largest safe offset', () => {
    expect(pageOffset(Number.MAX_SAFE_INTEGER, 100)).toBe(Number.MAX_SAFE_INTEGER);
    expect(pageOffset(2 ** 50, 2 ** 10)).toBe(Number.MAX_SAFE_INTEGER);
  });
});
