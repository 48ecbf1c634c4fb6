import { position } from '../position';
import { headDigest, verifyChain } from './chain-verifier';
import { chainHash, type ChainLink, type ChainScope, GENESIS_HASH } from './history-chain';

/** A history of `count` events over two streams, chained as a store of `scope` would chain it. */
function history(scope: ChainScope, count: number): ChainLink[] {
  const links: ChainLink[] = [];
  const heads = new Map<string, { revision: number; hash: string }>();
  for (let i = 0; i < count; i++) {
    const stream = i % 2 === 0 ? 'user-1' : 'user-2';
    const before = heads.get(stream);
    const link = {
      position: String(i + 1),
      id: `e-${i + 1}`,
      stream,
      revision: before === undefined ? 0 : before.revision + 1,
      type: 'UserPatched.v1',
      data: `{"age":${20 + i}}`,
      metadata: `{"actor":"a-1","correlationId":"c-${i}"}`,
      recordedAt: `2026-11-24T00:00:0${i}.000Z`,
    };
    const previous = scope === 'log' ? (links.at(-1)?.hash ?? GENESIS_HASH) : (before?.hash ?? GENESIS_HASH);
    const hash = chainHash(scope, link, previous);
    heads.set(stream, { revision: link.revision, hash });
    links.push({ ...link, hash });
  }
  return links;
}

async function* iterate(links: ChainLink[]): AsyncGenerator<ChainLink> {
  await Promise.resolve();
  yield* links;
}

describe('verifyChain', () => {
  describe.each<ChainScope>(['log', 'stream'])('on the %s scope', (scope) => {
    it('passes an untouched history and gives its head', async () => {
      const links = history(scope, 6);

      const result = await verifyChain(iterate(links), scope);

      expect(result).toMatchObject({ scope, events: 6, broken: null, sealMismatch: null });
      expect(result.head).toMatchObject({ position: '6', recordedAt: links[5].recordedAt });
      expect(result.head!.hash).toMatch(/^[0-9a-f]{64}$/);
    });

    it('walks up to a given position only: the head there, whatever follows', async () => {
      const links = history(scope, 6);
      const upToFour = await verifyChain(iterate(links.slice(0, 4)), scope);

      const result = await verifyChain(iterate(links), scope, null, position(4));

      expect(result).toEqual(upToFour);
      expect(result).toMatchObject({ events: 4, head: { position: '4' } });
    });

    it('names the edited event', async () => {
      const links = history(scope, 6);
      links[3] = { ...links[3], metadata: links[3].metadata.replace('a-1', 'admin') };

      const result = await verifyChain(iterate(links), scope);

      expect(result.broken).toMatchObject({ position: '4', stream: 'user-2', revision: 1 });
      expect(result.events).toBe(4);
    });

    it('names the event after a deleted one', async () => {
      const links = history(scope, 6);
      links.splice(2, 1);

      const result = await verifyChain(iterate(links), scope);

      // Position 3 (user-1) deleted: the log's next event is 4, user-1's next is 5.
      expect(result.broken).toMatchObject({ position: scope === 'log' ? '4' : '5' });
    });

    it('names an inserted event', async () => {
      const links = history(scope, 6);
      links.splice(3, 0, { ...links[1], position: '3.5', id: 'forged', hash: 'f'.repeat(64) });

      const result = await verifyChain(iterate(links), scope);

      expect(result.broken).toMatchObject({ position: '3.5' });
    });

    it('catches a history cut short before the sealed position', async () => {
      const links = history(scope, 6);
      const sealed = (await verifyChain(iterate(links), scope)).head!;

      const whole = await verifyChain(iterate(links), scope, sealed);
      const cut = await verifyChain(iterate(links.slice(0, 4)), scope, sealed);

      expect(whole.sealMismatch).toBeNull();
      expect(cut.broken).toBeNull();
      expect(cut.sealMismatch).toContain('the sealed position 6 is not in the history (it ends at 4)');
      const emptied = await verifyChain(iterate([]), scope, sealed);
      expect(emptied.sealMismatch).toBe(
        'the sealed position 6 is not in the history (it is empty): the history was cut short or rewritten',
      );
    });

    it('accepts events appended after the seal, and refuses a seal whose hash differs', async () => {
      const links = history(scope, 6);
      const sealed = (await verifyChain(iterate(links.slice(0, 4)), scope)).head!;

      const grown = await verifyChain(iterate(links), scope, sealed);
      const other = await verifyChain(iterate(links), scope, { ...sealed, hash: '0'.repeat(64) });

      expect(grown).toMatchObject({ broken: null, sealMismatch: null, events: 6 });
      expect(other.sealMismatch).toBe(
        `the history up to the sealed position 4 is not the one sealed (hash ${sealed.hash}, sealed ${'0'.repeat(64)})`,
      );
    });

    it('refuses a seal of the same hash but another recorded time', async () => {
      const links = history(scope, 6);
      const sealed = (await verifyChain(iterate(links.slice(0, 4)), scope)).head!;

      const other = await verifyChain(iterate(links), scope, {
        ...sealed,
        recordedAt: '2026-01-01T00:00:00.000Z',
      });

      expect(other.sealMismatch).toContain('is not the one sealed');
    });

    it('reports a break before the sealed position as the break alone', async () => {
      const links = history(scope, 6);
      const sealed = (await verifyChain(iterate(links), scope)).head!;
      links[1] = { ...links[1], data: '{"age":99}' };

      const result = await verifyChain(iterate(links), scope, sealed);

      expect(result).toMatchObject({ events: 2, broken: { position: '2' }, sealMismatch: null });
    });

    it('names a link stored without a hash', async () => {
      const links = history(scope, 3);
      links[2] = { ...links[2], hash: '' };

      const result = await verifyChain(iterate(links), scope);

      expect(result.broken!.reason).toMatch(
        /^the stored hash \(none\) is not [0-9a-f]{64}: the event, or the one before it, was changed, inserted or removed$/,
      );
    });
  });

  it("on the log scope, the head's hash is its last event's", async () => {
    const links = history('log', 6);

    expect((await verifyChain(iterate(links), 'log')).head!.hash).toBe(links[5].hash);
  });

  it('digests the stream heads in the order of their names, whatever order they were met in', () => {
    const a = { revision: 1, hash: 'a'.repeat(64) };
    const b = { revision: 2, hash: 'b'.repeat(64) };

    expect(
      headDigest(
        new Map([
          ['user-2', b],
          ['user-1', a],
        ]),
      ),
    ).toBe(
      headDigest(
        new Map([
          ['user-1', a],
          ['user-2', b],
        ]),
      ),
    );
  });

  it('on the log scope, names two events swapped', async () => {
    const links = history('log', 6);
    [links[2], links[3]] = [links[3], links[2]];

    const result = await verifyChain(iterate(links), 'log');

    expect(result.broken).toMatchObject({ position: '4' });
  });

  it('on the log scope, names a recorded time that goes back', async () => {
    const links = history('log', 3);
    const previous = links[1].hash;
    const link = { ...links[2], recordedAt: '2026-01-01T00:00:00.000Z' };
    links[2] = { ...link, hash: chainHash('log', link, previous) };

    const result = await verifyChain(iterate(links), 'log');

    expect(result.broken).toMatchObject({ position: '3' });
    expect(result.broken!.reason).toContain('is before its predecessor');
  });

  it('on the stream scope, the head digest changes when only a stream tail is cut', async () => {
    const links = history('stream', 6);
    const whole = await verifyChain(iterate(links), 'stream');
    // user-1's last event (position 5) removed: position 6 is still the last of the log.
    const cut = await verifyChain(iterate([...links.slice(0, 4), links[5]]), 'stream', whole.head);

    expect(cut.broken).toBeNull();
    expect(cut.sealMismatch).toContain('is not the one sealed');
  });

  it('starts every chain at the genesis hash', () => {
    const link = {
      position: '1',
      id: 'e',
      stream: 's',
      revision: 0,
      type: 'T.v1',
      data: '{}',
      metadata: '{}',
      recordedAt: '2026-01-01T00:00:00.000Z',
    };
    expect(chainHash('log', link, GENESIS_HASH)).not.toBe(chainHash('log', link, 'f'.repeat(64)));
    // Position and time are outside the stream scope's hash: the server assigns them later.
    expect(chainHash('stream', link, GENESIS_HASH)).toBe(
      chainHash('stream', { ...link, position: '9', recordedAt: '' }, GENESIS_HASH),
    );
    expect(chainHash('log', link, GENESIS_HASH)).not.toBe(
      chainHash('log', { ...link, position: '9' }, GENESIS_HASH),
    );
  });
});
