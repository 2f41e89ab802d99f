import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { ErrorKind, IdGenError, badInput } from '../../common/id-gen.error';
import { parseIdParam, parseIntParam, parseRequiredString, parseTimeParam } from '../../common/input';
import { QUEUE_CONFIG, QueueConfig } from '../../config/config-tokens';
import { MAX_APP_ID, SHARD_COUNT, composeQueueId, decomposeQueueId, shardOf } from '../core/queue-id-layout';
import { IdAllocHistoryRepository } from './id-alloc-history.repository';

export interface DecodedQueueId {
  id: string;
  appId: number;
  shard: number;
  index: string;
  /** When the ID's range was allocated (ISO, UTC); null when older than the history or never allocated. */
  allocatedAt: string | null;
}

export interface QueueIdAtTime {
  appId: number;
  shard: number;
  /** The first ID of the first range the shard allocated at or after the time asked. */
  id: string;
  index: string;
  allocatedAt: string;
}

/** The time of a queue ID, and the first queue ID of a shard allocated at or after a time. */
@Controller('api/id')
export class QueueHistoryController {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly history: IdAllocHistoryRepository,
  ) {}

  @Get('decode/:id')
  @ApiOperation({
    summary: 'Decode a queue ID: appId, shard, index, and when its range was allocated',
    description: 'allocatedAt is the allocation time of the ID\'s range (id_alloc_history), null when older than the history.',
  })
  async decode(@Param('id') raw: string): Promise<DecodedQueueId> {
    const id = parseIdParam('id', raw);
    const { appId, shardId, index } = decomposeQueueId(id);
    const range = await this.history.rangeOf(appId, shardId, index);
    return {
      id: id.toString(),
      appId,
      shard: shardId,
      index: index.toString(),
      allocatedAt: range?.allocatedAt.toISOString() ?? null,
    };
  }

  @Get(':appId/at')
  @ApiOperation({
    summary: 'The first queue ID of an app shard allocated at or after a time',
    description:
      'Query: time (ISO 8601 with a zone, or ms since the epoch) and the shard (shard=0..63, or gatePass=… to use its shard). ' +
      'Every ID of the shard above the answer was allocated at or after it as well. 404 when the history has no ' +
      'allocation of the shard at or after the time.',
  })
  async at(@Param('appId') appIdRaw: string, @Query() query: Record<string, unknown>): Promise<QueueIdAtTime> {
    const appId = parseIntParam('appId', appIdRaw, 0, MAX_APP_ID);
    const time = parseTimeParam('time', query.time);
    const shard = this.shardOf(query);
    const range = await this.history.firstAtOrAfter(appId, shard, time);
    if (range === null) {
      throw new IdGenError(
        ErrorKind.NotFound,
        `no allocation of app ${appId} shard ${shard} at or after ${time.toISOString()} in the history`,
      );
    }
    return {
      appId,
      shard,
      id: composeQueueId(range.from, shard, appId).toString(),
      index: range.from.toString(),
      allocatedAt: range.allocatedAt.toISOString(),
    };
  }

  private shardOf(query: Record<string, unknown>): number {
    if ((query.shard === undefined) === (query.gatePass === undefined)) {
      throw badInput('give exactly one of shard (0..63) and gatePass');
    }
    if (query.shard !== undefined) {
      return parseIntParam('shard', query.shard, 0, SHARD_COUNT - 1);
    }
    return shardOf(parseRequiredString('gatePass', query.gatePass, this.queue.gatePassMaxLength));
  }
}
