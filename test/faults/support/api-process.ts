import { runCliWithInput } from '../../e2e/support/cli-process';
import { Api, AppProcessOptions, startApi as startApiProcess } from '../../support/app-process';

export { type Api, kill9, running, stopRunning } from '../../support/app-process';

/** The API for a fault test: limits are another issue's, here many requests for one address must get through. */
export function startApi(
  dataDir: string,
  env: Record<string, string> = {},
  options: AppProcessOptions = {},
): Promise<Api> {
  return startApiProcess(
    dataDir,
    { RESET_REQUESTS_PER_EMAIL: '100', RESET_REQUESTS_PER_CLIENT: '100', ...env },
    options,
  );
}

/** The admin a fault test opens with the CLI before its API starts. */
export const FAULT_ADMIN = { email: 'admin@example.com', password: 'fault-test-admin-passphrase' };

/** Opens FAULT_ADMIN on `dataDir` with the CLI's `accounts create --admin`. */
export async function createFaultAdmin(dataDir: string): Promise<void> {
  const created = await runCliWithInput(
    dataDir,
    FAULT_ADMIN.password,
    ...[
      'accounts',
      'create',
      '--email',
      FAULT_ADMIN.email,
      '--password-stdin',
      '--name',
      'Admin',
      '--age',
      '40',
      '--admin',
    ],
  );
  if (created.code !== 0) throw new Error(`accounts create failed: ${created.stderr}`);
}
