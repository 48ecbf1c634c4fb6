import { TurnQueue } from './turn-queue';

/** A piece of work that ends when the test says so, recording when it started. */
function gate(log: string[], name: string) {
  let open!: () => void;
  let fail!: (error: Error) => void;
  const ended = new Promise<string>((resolve, reject) => {
    open = () => resolve(name);
    fail = reject;
  });
  return {
    work: () => {
      log.push(`start ${name}`);
      return ended;
    },
    open,
    fail,
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('TurnQueue', () => {
  it('runs the work of one key one at a time, in the order it was queued', async () => {
    const queue = new TurnQueue();
    const log: string[] = [];
    const [a, b, c] = ['a', 'b', 'c'].map((name) => gate(log, name));
    const results = [queue.run('s', a.work), queue.run('s', b.work), queue.run('s', c.work)];
    await settle();
    expect(log).toEqual(['start a']);
    a.open();
    await settle();
    expect(log).toEqual(['start a', 'start b']);
    b.open();
    c.open();
    await expect(Promise.all(results)).resolves.toEqual(['a', 'b', 'c']);
    expect(log).toEqual(['start a', 'start b', 'start c']);
  });

  it('lets other keys go on meanwhile', async () => {
    const queue = new TurnQueue();
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((name) => gate(log, name));
    const first = queue.run('s1', a.work);
    const second = queue.run('s2', b.work);
    await settle();
    expect(log).toEqual(['start a', 'start b']);
    b.open();
    await expect(second).resolves.toBe('b');
    a.open();
    await expect(first).resolves.toBe('a');
  });

  it('fails only the work that failed: the next in turn still runs', async () => {
    const queue = new TurnQueue();
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((name) => gate(log, name));
    const first = queue.run('s', a.work);
    const second = queue.run('s', b.work);
    a.fail(new Error('conflict'));
    await expect(first).rejects.toThrow('conflict');
    b.open();
    await expect(second).resolves.toBe('b');
    expect(log).toEqual(['start a', 'start b']);
  });

  it('forgets a key once nothing is queued on it', async () => {
    const queue = new TurnQueue();
    const log: string[] = [];
    const [a, b] = ['a', 'b'].map((name) => gate(log, name));
    const first = queue.run('s1', a.work);
    const second = queue.run('s2', b.work);
    expect(queue.size).toBe(2);
    a.open();
    await first;
    await settle();
    expect(queue.size).toBe(1);
    b.fail(new Error('gone'));
    await expect(second).rejects.toThrow('gone');
    await settle();
    expect(queue.size).toBe(0);
  });
});
