/**
 * The built API server (dist/, or BENCH_DIST), started in this process exactly as dist/apps/api/src/main.js
 * starts it, with two observers the HTTP interface cannot offer:
 * - the embedded store's commit counter (each commit is one fsync), for fsyncs per request;
 * - read-model visibility: the time from a PATCH's response leaving the server to the read
 *   store applying that user's change (there is no GET /users to poll, and polling would
 *   measure the poll interval). A PATCH is matched to its change by user id and modifiedon.
 * Run by the write benchmark with an IPC channel; answers 'stats' with what it saw since the last.
 * 'observe' and 'quiet' turn the lag observer on and off (answered with the stats too): it is the
 * bench's work, not the server's, so it is off while the server's CPU per request is measured.
 */
import 'reflect-metadata';
import { join } from 'node:path';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** BENCH_DIST: the dist/ of the build under test (a baseline's: support/baseline.ts); this worktree's by default. */
const DIST = process.env.BENCH_DIST ?? join(__dirname, '..', '..', 'dist');

export interface HarnessStats {
  commits: number;
  /** Events written since the server started. */
  events: number;
  /** Milliseconds from each PATCH response to its change in the read model, since the last stats. */
  lags: number[];
  /** Responses whose change had not reached the read model when the stats were taken. */
  pending: number;
}

async function main(): Promise<void> {
  // The built modules, typed by their sources.
  const { createApp } = (await import(
    join(DIST, 'apps/api/src/create-app.js')
  )) as typeof import('../../apps/api/src/create-app');
  const { parseConfig } = (await import(
    join(DIST, 'libs/config/src/index.js')
  )) as typeof import('@chronicle/config');
  const { EventStore, PersonalDataEventStore, SqliteEventStore, UpcastingEventStore } = (await import(
    join(DIST, 'libs/event-store/src/index.js')
  )) as typeof import('@chronicle/event-store');
  const { ReadStore } = (await import(
    join(DIST, 'libs/read-models/src/index.js')
  )) as typeof import('@chronicle/read-models');

  const config = parseConfig(process.env);
  const app = await createApp(config);

  let store = app.get(EventStore);
  if (store instanceof UpcastingEventStore) store = store.inner;
  // Builds before personal data was encrypted have no such layer.
  if (PersonalDataEventStore !== undefined && store instanceof PersonalDataEventStore) store = store.inner;
  if (!(store instanceof SqliteEventStore)) throw new Error('The harness needs the embedded event store');
  const eventStore = store;

  const responded = new Map<string, number>();
  const visible = new Map<string, number>();
  let lags: number[] = [];
  const settle = (key: string): void => {
    const sent = responded.get(key);
    const seen = visible.get(key);
    if (sent === undefined || seen === undefined) return;
    responded.delete(key);
    visible.delete(key);
    // Applied before the response left: visible as soon as the client could look.
    lags.push(Math.max(0, seen - sent));
  };

  const readStore = app.get(ReadStore);
  const applyBatch = readStore.applyBatch.bind(readStore);
  let observing = true;
  readStore.applyBatch = (changes, checkpoint) => {
    const applied = applyBatch(changes, checkpoint);
    if (!observing) return applied;
    const now = performance.now();
    for (const change of changes) {
      const modifiedon = change.collection === 'users' ? change.set?.modifiedon : undefined;
      if (modifiedon === undefined) continue;
      const key = `${change.id}|${modifiedon}`;
      visible.set(key, now);
      settle(key);
    }
    return applied;
  };

  const keys = new WeakMap<FastifyRequest, string>();
  const fastify = app.getHttpAdapter().getInstance();
  fastify.addHook('onSend', (request: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    if (observing && request.method === 'PATCH' && reply.statusCode === 200 && Buffer.isBuffer(payload)) {
      const user = JSON.parse(payload.toString('utf8')) as { id: string; modifiedon: string };
      keys.set(request, `${user.id}|${user.modifiedon}`);
    }
    done(null, payload);
  });
  fastify.addHook('onResponse', (request: FastifyRequest, _reply: FastifyReply, done) => {
    const key = keys.get(request);
    if (key !== undefined) {
      responded.set(key, performance.now());
      settle(key);
    }
    done();
  });

  process.on('message', (message) => {
    if (message !== 'stats' && message !== 'observe' && message !== 'quiet') return;
    if (message !== 'stats') {
      observing = message === 'observe';
      // What was half seen while the observer was off would never settle.
      responded.clear();
      visible.clear();
    }
    const { commits, events } = eventStore.stats();
    const stats: HarnessStats = { commits, events, lags, pending: responded.size };
    lags = [];
    process.send?.(stats);
  });
  process.once('disconnect', () => void app.close());

  await app.listen({ port: config.port, host: '127.0.0.1' });
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
