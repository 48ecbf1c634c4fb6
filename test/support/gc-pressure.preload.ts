// Preloaded (-r, with --expose-gc) by GC_PRESSURE: a full collection every 10 ms. Asynchronous, so
// that it runs as V8's own collections do, from a task: one forced synchronously from JavaScript
// runs its finalisers inside the caller's context, and would hide what the tests look for.
const collect = (globalThis as { gc?: (options: { type: 'major'; execution: 'async' }) => Promise<void> }).gc;
if (collect === undefined) throw new Error('gc-pressure.preload needs --expose-gc');
setInterval(() => void collect({ type: 'major', execution: 'async' }), 10).unref();
