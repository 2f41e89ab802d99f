import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { SEGMENT_CONFIG, SegmentConfig } from '../config/config-tokens';
import { DirectRoute } from '../common/direct-routes/direct-route.decorator';
import { parseCount } from '../common/input';
import { parseSegmentKey } from './segment.input';
import { SegmentService } from './segment.service';

/** Leaf's `GET /api/segment/get/{key}`: text/plain ID; `?count=N` gives JSON `{ids}`. */
@Controller('api/segment')
export class SegmentController {
  constructor(
    @Inject(SEGMENT_CONFIG) private readonly segment: SegmentConfig,
    private readonly service: SegmentService,
  ) {}

  /** Served straight from Fastify (common/direct-routes, docs/performance.md). */
  @DirectRoute()
  @Get('get/:key')
  async get(@Param('key') keyRaw: string, @Query() query: Record<string, unknown>): Promise<string | { ids: string[] }> {
    this.service.assertEnabled();
    const key = parseSegmentKey('key', keyRaw, this.segment.keyMaxLength);
    const count = parseCount(query.count, this.segment.maxBatch);
    const ids = await this.service.get(key, count ?? 1);
    if (count === undefined) {
      return ids[0].toString();
    }
    return { ids: ids.map((id) => id.toString()) };
  }
}
