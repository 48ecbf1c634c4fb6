import {
  AGE_MAX,
  AGE_MIN,
  checkAge,
  checkEmail,
  checkName,
  EMAIL_MAX_LENGTH,
  NAME_MAX_LENGTH,
  normaliseEmail,
} from './values';

describe('checkName', () => {
  it('keeps 1 to 200 characters after trimming', () => {
    expect(checkName('name', ' A ')).toBe('A');
    expect(checkName('name', 'x'.repeat(NAME_MAX_LENGTH))).toBe('x'.repeat(NAME_MAX_LENGTH));
  });

  it.each(['', '   ', 'x'.repeat(NAME_MAX_LENGTH + 1)])(
    'refuses %p, saying how long a name may be',
    (name) => {
      expect(checkName('title', name)).toEqual({
        field: 'title',
        message: 'must be 1 to 200 characters long after trimming',
      });
    },
  );

  it('refuses anything but a string', () => {
    expect(checkName('name', 42)).toEqual({ field: 'name', message: 'must be a string' });
  });

  it.each([
    'A\u0000B',
    'A\u001b[2JB',
    'A\r\nB',
    'A\u009bB',
    'A\u0085B',
    'abc\u202edef',
    'A\u2066B',
    'A\u2028B',
  ])('refuses the control or bidirectional character in %j', (name) => {
    expect(checkName('name', name)).toEqual({
      field: 'name',
      message: 'must not contain control characters',
    });
  });

  it.each(['\u200b', '\u200b\u200c\u2060', '\u0301'])('refuses %j, which shows nothing', (name) => {
    expect(checkName('name', name)).toEqual({ field: 'name', message: 'must contain a visible character' });
  });

  it.each(['Zoë', 'محمد', '李小龍', '\u{1F600}', 'O’Brien-Smith', 'a\u200db'])('keeps %j', (name) => {
    expect(checkName('name', name)).toBe(name);
  });
});

describe('checkAge', () => {
  it.each([AGE_MIN, 36, AGE_MAX])('keeps %p', (age) => {
    expect(checkAge('age', age)).toBe(age);
  });

  it.each([AGE_MIN - 1, AGE_MAX + 1, 3.5, '36', null])('refuses %p, saying what an age is', (age) => {
    expect(checkAge('years', age)).toEqual({ field: 'years', message: 'must be an integer from 0 to 150' });
  });
});

describe('checkEmail', () => {
  it.each([
    ['ada@example.com', 'ada@example.com'],
    [' Ada@Example.com ', 'Ada@Example.com'],
    ['ada@mail.example.co.uk', 'ada@mail.example.co.uk'],
  ])('keeps %p as %p', (given, kept) => {
    expect(checkEmail('email', given)).toBe(kept);
  });

  it('keeps an address of exactly 254 characters', () => {
    const longest = `${'a'.repeat(EMAIL_MAX_LENGTH - '@example.com'.length)}@example.com`;
    expect(checkEmail('email', longest)).toBe(longest);
  });

  it.each([
    'ada',
    'ada@localhost',
    'ada lovelace@example.com',
    'ada@example.com trailing',
    'ada@@example.com',
    `${'a'.repeat(EMAIL_MAX_LENGTH - '@example.com'.length + 1)}@example.com`,
  ])('refuses %p', (email) => {
    expect(checkEmail('contact', email)).toEqual({ field: 'contact', message: 'must be an e-mail address' });
  });

  it('refuses anything but a string', () => {
    expect(checkEmail('email', 42)).toEqual({ field: 'email', message: 'must be a string' });
  });
});

describe('normaliseEmail', () => {
  it('lower-cases, trims and applies NFKC', () => {
    expect(normaliseEmail('  Ada@Ｅxample.COM ')).toBe('ada@example.com');
  });
});
