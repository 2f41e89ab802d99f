import { DataSource } from 'typeorm';
import { loadConfig } from '../../../src/config/load-config';
import { HistoryMonitor } from '../../../src/id-history/history-monitor';
import { HistoryPruner } from '../../../src/id-history/history-pruner';
import { LockService } from '../../../src/infra/redis/lock.service';
import { FakeLocks } from '../queue-id/fake-locks';

describe('HistoryPruner.pruneAlone (the scheduled run of every instance at the same second)', () => {
  const config = loadConfig({ KEY_PREFIX: 'p.' });
  const pruner = (locks: FakeLocks): HistoryPruner => {
    const p = new HistoryPruner({} as DataSource, config.redis, config.idHistory, new HistoryMonitor(), locks as unknown as LockService);
    jest.spyOn(p, 'prune').mockResolvedValue({ id_alloc_history: 3, leaf_alloc_history: 0 });
    return p;
  };

  it('prunes under the lock p.lock_history_prune; another instance holding it: this one skips the tick', async () => {
    const locks = new FakeLocks();
    const a = pruner(locks);
    expect(await a.pruneAlone()).toEqual({ id_alloc_history: 3, leaf_alloc_history: 0 });
    const release = locks.hold('p.lock_history_prune');
    const b = pruner(locks);
    expect(await b.pruneAlone()).toBeNull();
    expect(b.prune).not.toHaveBeenCalled();
    release();
    expect(await b.pruneAlone()).not.toBeNull();
  });
});
