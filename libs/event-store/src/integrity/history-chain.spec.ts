import { chainHash, GENESIS_HASH } from './history-chain';

/**
 * Known answers, computed outside the code from the documented encoding (`printf '%s' '<the JSON
 * array>' | sha256sum`): an auditor's own verifier must reach the same hashes. A change of the
 * encoding changes every hash of writer and verifier alike, which only a fixed vector shows.
 */
describe('chainHash', () => {
  const link = {
    position: '7',
    id: 'e-1',
    stream: 'user-u1',
    revision: 0,
    type: 'UserCreated.v1',
    data: '{"name":"Zoë"}',
    metadata: '{"actor":"a-1"}',
    recordedAt: '2026-11-24T09:00:00.000Z',
  };

  it('hashes the log scope over the position and recorded time too', () => {
    expect(chainHash('log', link, GENESIS_HASH)).toBe(
      'cb8ab4fdf6ccc6ea35c35d325f8a5a9312dda67ebf0f2bef37da30aec3202d81',
    );
  });

  it('hashes the stream scope with null for what the server assigns after the hash is made', () => {
    expect(chainHash('stream', link, GENESIS_HASH)).toBe(
      'c0adda62860e942fff14d3c91910f615fb88392386814cbc10c6de7e63ac4c55',
    );
    expect(
      chainHash('stream', { ...link, position: '9:8', recordedAt: '2027-01-01T00:00:00.000Z' }, GENESIS_HASH),
    ).toBe('c0adda62860e942fff14d3c91910f615fb88392386814cbc10c6de7e63ac4c55');
  });
});
