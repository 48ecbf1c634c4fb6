import { Api, startApi as startApiProcess } from '../../support/app-process';

export { type Api, kill9, running, stopRunning } from '../../support/app-process';

/** The API for a fault test: limits are another issue's, here many requests for one address must get through. */
export function startApi(dataDir: string, env: Record<string, string> = {}): Promise<Api> {
  return startApiProcess(dataDir, {
    RESET_REQUESTS_PER_EMAIL: '100',
    RESET_REQUESTS_PER_CLIENT: '100',
    ...env,
  });
}
