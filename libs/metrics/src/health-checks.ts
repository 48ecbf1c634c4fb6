/** One check of a process's health: down says why, with what else helps (how far a catch-up is). */
export type HealthCheckResult =
  { status: 'up' } | { status: 'down'; message: string; [detail: string]: unknown };

/**
 * A check: its result, or nothing when it passed (a store's ping). A throw is the check down,
 * with the error's message.
 */
export type HealthCheck = () => HealthCheckResult | void | Promise<HealthCheckResult | void>;

/** The health body both processes answer with: `status`, and every check's result by name. */
export interface HealthReport {
  status: 'ok' | 'error';
  details: Record<string, HealthCheckResult>;
}

/** Runs the checks together; ok when every one is up. */
export async function checkHealth(checks: Record<string, HealthCheck>): Promise<HealthReport> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => [name, await resultOf(check)] as const),
  );
  const details = Object.fromEntries(results);
  return { status: results.every(([, result]) => result.status === 'up') ? 'ok' : 'error', details };
}

async function resultOf(check: HealthCheck): Promise<HealthCheckResult> {
  try {
    return (await check()) ?? { status: 'up' };
  } catch (error) {
    return { status: 'down', message: error instanceof Error ? error.message : 'unreachable' };
  }
}
