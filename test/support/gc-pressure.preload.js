// Preloaded (-r, with --expose-gc) by GC_PRESSURE: a full collection every 10 ms. Asynchronous, so
// that it runs as V8's own collections do, from a task: one forced synchronously from JavaScript
// runs its finalisers inside the caller's context, and would hide what the tests look for.
// JavaScript, not TypeScript: a TypeScript preload needs the TypeScript loader, which would then
// compile every file the process loads from dist/.
const collect = globalThis.gc;
if (collect === undefined) throw new Error('gc-pressure.preload needs --expose-gc');
setInterval(() => void collect({ type: 'major', execution: 'async' }), 10).unref();
