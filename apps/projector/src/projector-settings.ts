import { ChronicleConfig, ConfigError, integerVariable, processorPlacement } from '@chronicle/config';

/** What only the projector reads from the environment, on top of ChronicleConfig. */
export interface ProjectorSettings {
  mongodbUri: string;
  /** PROJECTOR_LEASE_TTL, in seconds (default 15): how long a silent holder keeps the lease. */
  leaseTtlMs: number;
}

export const DEFAULT_LEASE_TTL_SECONDS = 15;

export function parseProjectorSettings(
  config: ChronicleConfig,
  env: Record<string, string | undefined>,
): ProjectorSettings {
  // The projector runs what processorPlacement gives it: nothing without shared read models.
  if (processorPlacement(config)['read-models'] !== 'projector') {
    throw new ConfigError(
      'MONGODB_URI',
      'must be set: the projector writes the shared read models in MongoDB (without it the API projects in-process)',
    );
  }
  const ttl = integerVariable(env, 'PROJECTOR_LEASE_TTL', DEFAULT_LEASE_TTL_SECONDS, 1, 3600);
  return { mongodbUri: config.mongodbUri!, leaseTtlMs: ttl * 1000 };
}
