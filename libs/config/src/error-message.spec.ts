import { errorMessage } from './error-message';

describe('errorMessage', () => {
  it("is an Error's message, without its name or stack", () => {
    expect(errorMessage(new TypeError('bad input'))).toBe('bad input');
  });

  it.each([
    ['a string', 'refused', 'refused'],
    ['a number', 42, '42'],
    ['null', null, 'null'],
    ['an object', { code: 1 }, '[object Object]'],
  ])('is anything else thrown (%s) as a string', (_case, thrown, text) => {
    expect(errorMessage(thrown)).toBe(text);
  });
});
