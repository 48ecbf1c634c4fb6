import { Credentials, credentialsOf } from './credentials';

function request(headers: [string, string][], query: Record<string, unknown> = {}) {
  return { query, raw: { rawHeaders: headers.flat() } };
}

const basic = (text: string) => `Basic ${Buffer.from(text, 'utf8').toString('base64')}`;

describe('credentialsOf', () => {
  it.each<[string, ReturnType<typeof request>, Credentials]>([
    ['a Bearer header', request([['Authorization', 'Bearer abc.def']]), { kind: 'bearer', token: 'abc.def' }],
    ['the scheme in any case', request([['authorization', 'bEaReR abc']]), { kind: 'bearer', token: 'abc' }],
    ['an access_token parameter', request([], { access_token: 'tok' }), { kind: 'bearer', token: 'tok' }],
    [
      'Basic credentials',
      request([['Authorization', basic('ada@example.com:secret pw')]]),
      { kind: 'basic', email: 'ada@example.com', password: 'secret pw' },
    ],
    [
      'a password with colons: the user-id ends at the first (RFC 7617)',
      request([['Authorization', basic('ada@example.com:pw:with:colons:')]]),
      { kind: 'basic', email: 'ada@example.com', password: 'pw:with:colons:' },
    ],
    [
      'UTF-8 credentials',
      request([['Authorization', basic('zoë@example.com:pässwörd ✓')]]),
      { kind: 'basic', email: 'zoë@example.com', password: 'pässwörd ✓' },
    ],
    [
      'an empty password, which verification refuses',
      request([['Authorization', basic('ada@example.com:')]]),
      { kind: 'basic', email: 'ada@example.com', password: '' },
    ],
    [
      'Authorization among other headers, one of them as long as its name',
      request([
        ['Cache-Control', 'no-cache'],
        ['Host', 'example.test'],
        ['Authorization', 'Bearer a'],
        ['X-Authorized', 'no'],
      ]),
      { kind: 'bearer', token: 'a' },
    ],
    [
      'a header with surrounding spaces',
      request([['Authorization', '  Bearer tok  ']]),
      { kind: 'bearer', token: 'tok' },
    ],
    [
      'several spaces after the scheme',
      request([['Authorization', 'Bearer   tok']]),
      { kind: 'bearer', token: 'tok' },
    ],
    ['a scheme alone', request([['Authorization', 'Bearer']]), { kind: 'bearer', token: '' }],
    [
      'Basic with a character outside base64 that lenient decoding would skip',
      // "YTpi" is base64 for "a:b".
      request([['Authorization', 'Basic YTpi!']]),
      { kind: 'malformed-basic' },
    ],
    ['no credentials', request([]), { kind: 'none' }],
    [
      'two Authorization headers',
      request([
        ['Authorization', 'Bearer a'],
        ['authorization', 'Bearer b'],
      ]),
      { kind: 'several' },
    ],
    [
      'a header and a parameter',
      request([['Authorization', 'Bearer a']], { access_token: 'b' }),
      { kind: 'several' },
    ],
    ['a repeated parameter', request([], { access_token: ['a', 'b'] }), { kind: 'several' }],
    ['an empty parameter', request([], { access_token: '' }), { kind: 'bearer', token: '' }],
    ['another scheme', request([['Authorization', 'Digest abc']]), { kind: 'unsupported' }],
    [
      'Basic that is not base64',
      request([['Authorization', 'Basic !!!notbase64']]),
      { kind: 'malformed-basic' },
    ],
    [
      'Basic without a colon',
      request([['Authorization', basic('ada@example.com')]]),
      { kind: 'malformed-basic' },
    ],
    ['Basic with an empty user-id', request([['Authorization', basic(':pw')]]), { kind: 'malformed-basic' }],
    [
      'Basic that is not UTF-8',
      request([['Authorization', `Basic ${Buffer.from([0x61, 0x3a, 0xff, 0xfe]).toString('base64')}`]]),
      { kind: 'malformed-basic' },
    ],
  ])('reads %s', (_case, given, expected) => {
    expect(credentialsOf(given)).toEqual(expected);
  });

  it('never reads a token from the body', () => {
    const withBody = { ...request([]), body: { access_token: 'from-the-body' } };
    expect(credentialsOf(withBody)).toEqual({ kind: 'none' });
  });

  it('reads a request once', () => {
    const given = request([['Authorization', 'Bearer first']]);
    expect(credentialsOf(given)).toEqual({ kind: 'bearer', token: 'first' });
    given.raw.rawHeaders[1] = 'Bearer second';
    expect(credentialsOf(given)).toEqual({ kind: 'bearer', token: 'first' });
  });
});
