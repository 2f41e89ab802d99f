import { Inject, Injectable } from '@nestjs/common';
import { SNOWFLAKE_CONFIG } from '../config/config-tokens';
import { SnowflakeConfig } from '../config/snowflake-config';
import { SnowflakeService } from './snowflake.service';

/** What other modules may read of the snowflake generator's state (readiness, worker-id gauges). */
@Injectable()
export class SnowflakeStatus {
  readonly mode: SnowflakeConfig['mode'];

  constructor(
    @Inject(SNOWFLAKE_CONFIG) snowflake: SnowflakeConfig,
    private readonly service: SnowflakeService,
  ) {
    this.mode = snowflake.mode;
  }

  /**
   * null when SNOWFLAKE_MODE=off; else whether IDs can be issued now and, when not, why (a lost
   * zk_recycle lease, a record that could not be extended).
   */
  readiness(): { ready: true } | { ready: false; reason: string } | null {
    if (this.mode === 'off') {
      return null;
    }
    const reason = this.service.notServingReason();
    return reason === null ? { ready: true } : { ready: false, reason };
  }

  /** Whether this instance holds a worker id (with its lease, in zk_recycle) and may issue IDs. */
  get serving(): boolean {
    return this.service.serving;
  }

  /** The worker id in use, or null when none is held. */
  get workerId(): number | null {
    return this.service.workerId;
  }
}
