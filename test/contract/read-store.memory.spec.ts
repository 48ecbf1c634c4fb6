import { MemoryReadStore } from '@chronicle/read-models';
import { describeReadStoreContract } from './read-store.contract';

describeReadStoreContract('memory', async () => {
  const store = new MemoryReadStore();
  return { store, cleanup: () => store.close() };
});
