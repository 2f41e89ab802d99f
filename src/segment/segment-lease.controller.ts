import { Controller, HttpCode, Inject, Param, Post, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery } from '@nestjs/swagger';
import { SEGMENT_CONFIG, SegmentConfig } from '../config/config-tokens';
import { MAX_LEASE_COUNT, parseLeaseCount } from '../lease/lease-input';
import { parseSegmentKey } from './segment.input';
import { SegmentLeaseService } from './segment-lease.service';

export interface SegmentLeaseBody {
  key: string;
  from: string;
  to: string;
  count: number;
}

/** `POST /api/segment/lease/{key}?count=N`: exactly N IDs of the tag, `from..to`. */
@Controller('api/segment')
export class SegmentLeaseController {
  constructor(
    @Inject(SEGMENT_CONFIG) private readonly segment: SegmentConfig,
    private readonly service: SegmentLeaseService,
  ) {}

  @Post('lease/:key')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Lease a range of segment IDs (for a client that hands them out locally)',
    description:
      'Advances the tag\'s leaf_alloc max_id by `count` and answers `{key, from, to, count}`: the caller owns every ID ' +
      'from..to (decimal strings, inclusive) alone. A lease whose reply is lost is a gap; a retry gets a new range. ' +
      '409 CONFLICT when the row\'s max_id is below 1 (a row made by hand: IDs start at 1); nothing is taken.',
  })
  @ApiParam({ name: 'key', description: 'the biz_tag' })
  @ApiQuery({ name: 'count', required: true, description: `IDs wanted, 1..${MAX_LEASE_COUNT}` })
  async lease(@Param('key') keyRaw: string, @Query() query: Record<string, unknown>): Promise<SegmentLeaseBody> {
    const key = parseSegmentKey('key', keyRaw, this.segment.keyMaxLength);
    const count = parseLeaseCount(query.count);
    const lease = await this.service.lease(key, count);
    return { key: lease.key, from: lease.from.toString(), to: lease.to.toString(), count };
  }
}
