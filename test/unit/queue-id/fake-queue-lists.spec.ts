import { FakeQueueLists } from './fake-queue-lists';
import { queueListsContract } from './queue-lists-contract';

/** The in-memory lists keep the QueueLists contract (RedisQueueLists runs it in the integration tier). */
describe('FakeQueueLists', () => {
  queueListsContract(() => {
    const lists = new FakeQueueLists();
    return { lists, setMarker: async (appId, shardId, raw) => lists.setRawMarker(appId, shardId, raw) };
  });
});
