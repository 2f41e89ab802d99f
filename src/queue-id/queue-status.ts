import { Injectable } from '@nestjs/common';
import { AppRegistry } from './core/app-registry';

/** What other modules may read of the queue generator's state (readiness). */
@Injectable()
export class QueueStatus {
  constructor(private readonly registry: AppRegistry) {}

  /** Whether the queue generator can issue IDs: id_alloc has been read into the registry once. */
  get ready(): boolean {
    return this.registry.isLoaded;
  }
}
