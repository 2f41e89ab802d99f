import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { DirectRoute } from '../common/direct-routes/direct-route.decorator';
import { parseCount } from '../common/input';
import { SNOWFLAKE_CONFIG } from '../config/config-tokens';
import { SnowflakeConfig } from '../config/snowflake-config';
import { DecodedId } from './core/snowflake-layout';
import { parseSnowflakeId, parseSnowflakeKey } from './snowflake-input';
import { SnowflakeService } from './snowflake.service';

/**
 * Leaf-compatible `GET /api/snowflake/get/{key}` (text/plain; `?count=N` → JSON `{ids}`),
 * `GET /api/snowflake/decode/{id}` and the peer clock route `GET /api/snowflake/time`.
 */
@Controller('api/snowflake')
export class SnowflakeController {
  constructor(
    @Inject(SNOWFLAKE_CONFIG) private readonly snowflake: SnowflakeConfig,
    private readonly service: SnowflakeService,
  ) {}

  /** Served straight from Fastify (common/direct-routes, docs/performance.md). */
  @DirectRoute()
  @Get('get/:key')
  @ApiOperation({
    summary: 'Snowflake IDs (Leaf-compatible)',
    description:
      'text/plain ID, or with `?count=N` (1..1000) JSON `{ids}` strictly increasing. Layout SNOWFLAKE_LAYOUT: `leaf` ' +
      '(41-bit ms since twepoch | 10-bit worker id | 12-bit sequence) or `js-safe` (41 | 5 | 7: every ID below 2^53). ' +
      '503 SNOWFLAKE_LEASE_LOST while the worker id cannot be known to be held (SNOWFLAKE_MODE redis or zk_recycle: ' +
      'a lease not renewed in time or taken by another instance; any mode: the recorded time not extended).',
  })
  async get(@Param('key') key: string, @Query() query: Record<string, unknown>): Promise<string | { ids: string[] }> {
    parseSnowflakeKey(key);
    const count = parseCount(query.count, this.snowflake.maxBatch);
    const ids = await this.service.nextIds(count ?? 1);
    if (count === undefined) {
      return ids[0].toString();
    }
    return { ids: ids.map((id) => id.toString()) };
  }

  @Get('decode/:id')
  @ApiOperation({
    summary: 'Split a snowflake ID into time, worker id and sequence',
    description:
      'JSON `{timestamp, isoTime, workerId, sequence}` read with this service\'s SNOWFLAKE_LAYOUT and SNOWFLAKE_TWEPOCH. ' +
      '400 BAD_INPUT for anything but a decimal 0..2^63-1 (js-safe: 0..2^53-1).',
  })
  decode(@Param('id') id: string): DecodedId {
    return this.service.decode(parseSnowflakeId(id, this.service.layout.maxId));
  }

  @Get('time')
  time(): { timestamp: number; isoTime: string } {
    const timestamp = this.service.now();
    return { timestamp, isoTime: new Date(timestamp).toISOString() };
  }
}
