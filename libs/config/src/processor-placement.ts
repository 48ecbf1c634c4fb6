import { ChronicleConfig } from './chronicle-config';

/** The background handlers, by their checkpoint's name: the projections, the password saga, the sessions. */
export const BACKGROUND_HANDLERS = ['read-models', 'saga:password', 'account-sessions'] as const;
export type BackgroundHandler = (typeof BACKGROUND_HANDLERS)[number];

/**
 * Where a handler runs: the API's main thread, the API's worker thread for the sagas, or the
 * projector process (while it holds its lease).
 */
export type ProcessorPlace = 'api' | 'saga-worker' | 'projector';

/**
 * Where each handler runs, decided here once from the configuration. With MONGODB_URI the read
 * models are shared, so one lease-holding projector builds them and runs the saga (an e-mail is
 * sent once per deployment); without it, the API builds its in-memory models and runs the saga in
 * a worker thread. Every API process keeps its own sessions: its requests are checked against them.
 */
export function processorPlacement(
  config: Pick<ChronicleConfig, 'mongodbUri'>,
): Readonly<Record<BackgroundHandler, ProcessorPlace>> {
  const shared = Boolean(config.mongodbUri);
  return {
    'read-models': shared ? 'projector' : 'api',
    'saga:password': shared ? 'projector' : 'saga-worker',
    'account-sessions': 'api',
  };
}

/**
 * What each process (the worker thread counts as one) holds a unit for, and the place its unit
 * runs the handler in: the API's unit for the saga is the worker thread, which runs it in the
 * `saga-worker` place. A unit is started only where the placement names its place, so each
 * handler starts in one place.
 */
export const HOSTED_BY: Readonly<
  Record<ProcessorPlace, Readonly<Partial<Record<BackgroundHandler, ProcessorPlace>>>>
> = {
  api: { 'read-models': 'api', 'saga:password': 'saga-worker', 'account-sessions': 'api' },
  'saga-worker': { 'saga:password': 'saga-worker' },
  projector: { 'read-models': 'projector', 'saga:password': 'projector' },
};

/**
 * The one-off background jobs, by name, and the process each runs in: each runs to its end once
 * per process start, and is started again with back-off when it fails. Every API process keys the
 * address reservations (of a store written before they were keyed, or under another secret), so
 * that the first request naming an address seldom waits for it (such a request waits all the same).
 */
export const BACKGROUND_JOBS = { 'reservation-keys': 'api' } as const satisfies Readonly<
  Record<string, ProcessorPlace>
>;
export type BackgroundJob = keyof typeof BACKGROUND_JOBS;
