import { ChronicleConfig } from '@chronicle/config';
import { SqliteDataKeyStore } from '../embedded/sqlite-data-key-store';
import { DataKeyStore } from './data-key-store.port';
import { dataKeySecretOf } from './data-key-wrapper';

/**
 * The key store of the configured shape: `DATA_DIR/data-keys.db` on the embedded default,
 * MongoDB's `data_keys` with MONGODB_URI (where DATA_KEY_SECRET must be set).
 */
export async function openDataKeyStore(
  config: Pick<ChronicleConfig, 'dataKeySecret' | 'dataDir' | 'mongodbUri'>,
): Promise<DataKeyStore> {
  const secret = dataKeySecretOf(config);
  if (config.mongodbUri === null) return new SqliteDataKeyStore(config.dataDir, secret);
  // Loaded only when configured, like every MongoDB adapter.
  const { MongoDataKeyStore } = await import('./mongo-data-key-store');
  return new MongoDataKeyStore(config.mongodbUri, secret);
}
