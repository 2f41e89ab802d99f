import { Controller, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery } from '@nestjs/swagger';
import { parseIntParam, parseRequiredString } from '../common/input';
import { QUEUE_CONFIG, QueueConfig } from '../config/config-tokens';
import { MAX_LEASE_COUNT, parseLeaseCount } from '../lease/lease-input';
import { MAX_APP_ID } from './core/queue-id-layout';
import { QueueLeaseService } from './queue-lease.service';

export interface QueueLeaseBody {
  appId: number;
  shard: number;
  from: string;
  to: string;
  count: number;
  /** The app's max_limit_id (decimal string; "0" = no limit): no ID above it may be handed out. */
  maxLimitId: string;
}

/** `POST /api/id/{appId}/lease?gatePass=…&count=N`: a range of indexes of the gatePass's shard. */
@Controller('api/id')
export class QueueLeaseController {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly service: QueueLeaseService,
  ) {}

  @Post(':appId/lease')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Lease a range of queue IDs (for a client that hands them out locally)',
    description:
      'Allocates at least `count` indexes of the shard of `gatePass` (whole steps of the app, cut at its max_limit_id) ' +
      'from id_alloc and answers `{appId, shard, from, to, count, maxLimitId}` (from/to decimal strings, inclusive). ' +
      'The caller owns every ID `index << 14 | shard << 8 | appId` for `from <= index <= to` alone. ' +
      '`maxLimitId` is the app\'s max_limit_id at the time of the lease (decimal string, "0" = no limit): a client must ' +
      'never hand out an ID above it, and should drop the IDs it still holds above a lower maxLimitId seen in a later lease ' +
      '(a limit lowered after a lease reaches the client with its next lease). ' +
      'A lease whose reply is lost is a gap; a retry gets a new range. 410 QUEUE_EXHAUSTED when the shard is used up.',
  })
  @ApiParam({ name: 'appId', description: `0..${MAX_APP_ID}` })
  @ApiQuery({ name: 'gatePass', required: true, description: 'selects the shard: abs(Java hashCode) % 64' })
  @ApiQuery({ name: 'count', required: true, description: `indexes wanted, 1..${MAX_LEASE_COUNT} (rounded up to whole steps)` })
  async lease(@Param('appId') appIdRaw: string, @Query() query: Record<string, unknown>): Promise<QueueLeaseBody> {
    const appId = parseIntParam('appId', appIdRaw, 0, MAX_APP_ID);
    const gatePass = parseRequiredString('gatePass', query.gatePass, this.queue.gatePassMaxLength);
    const count = parseLeaseCount(query.count);
    const lease = await this.service.lease(appId, gatePass, count);
    return {
      appId: lease.appId,
      shard: lease.shard,
      from: lease.from.toString(),
      to: lease.to.toString(),
      // At most MAX_LEASE_COUNT plus one step: far below 2^53.
      count: Number(lease.to - lease.from + 1n),
      maxLimitId: lease.maxLimitId.toString(),
    };
  }
}
