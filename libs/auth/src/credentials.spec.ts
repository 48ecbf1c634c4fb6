import { singleCredential } from './credentials';

function request(headers: [string, string][], query: Record<string, unknown> = {}) {
  const lower: Record<string, string> = {};
  for (const [name, value] of headers) lower[name.toLowerCase()] ??= value;
  return { headers: lower, query, raw: { rawHeaders: headers.flat() } };
}

const basic = (text: string) => `Basic ${Buffer.from(text).toString('base64')}`;

describe('singleCredential', () => {
  it('reads a Bearer header, an access_token parameter and Basic credentials as passport does', () => {
    expect(singleCredential(request([['Authorization', 'Bearer abc.def']]))).toEqual({
      scheme: 'bearer',
      token: 'abc.def',
    });
    expect(singleCredential(request([['authorization', 'bearer abc']]))).toEqual({
      scheme: 'bearer',
      token: 'abc',
    });
    expect(singleCredential(request([], { access_token: 'tok' }))).toEqual({
      scheme: 'bearer',
      token: 'tok',
    });
    expect(singleCredential(request([['Authorization', basic('ada@example.com:secret pw')]]))).toEqual({
      scheme: 'basic',
      email: 'ada@example.com',
      password: 'secret pw',
    });
  });

  it.each([
    ['no credentials', request([])],
    [
      'two Authorization headers',
      request([
        ['Authorization', 'Bearer a'],
        ['authorization', 'Bearer b'],
      ]),
    ],
    ['a header and a parameter', request([['Authorization', 'Bearer a']], { access_token: 'b' })],
    ['an empty parameter', request([], { access_token: '' })],
    ['a repeated parameter', request([], { access_token: ['a', 'b'] })],
    ['another scheme', request([['Authorization', 'Digest abc']])],
    ['extra spaces', request([['Authorization', 'Bearer  abc']])],
    ['an empty password', request([['Authorization', basic('ada@example.com:')]])],
    ['no colon', request([['Authorization', basic('ada@example.com')]])],
  ])('leaves %s to the guard', (_case, given) => {
    expect(singleCredential(given)).toBeNull();
  });
});
