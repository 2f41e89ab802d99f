import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { DirectRoute } from '../common/direct-routes/direct-route.decorator';
import { parseCount } from '../common/input';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
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
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly service: SnowflakeService,
  ) {}

  /** Served straight from Fastify (common/direct-routes, docs/performance.md). */
  @DirectRoute()
  @Get('get/:key')
  async get(@Param('key') key: string, @Query() query: Record<string, unknown>): Promise<string | { ids: string[] }> {
    parseSnowflakeKey(key);
    const count = parseCount(query.count, this.config.snowflake.maxBatch);
    const ids = await this.service.nextIds(count ?? 1);
    if (count === undefined) {
      return ids[0].toString();
    }
    return { ids: ids.map((id) => id.toString()) };
  }

  @Get('decode/:id')
  decode(@Param('id') id: string): DecodedId {
    return this.service.decode(parseSnowflakeId(id, this.service.layout.maxId));
  }

  @Get('time')
  time(): { timestamp: number; isoTime: string } {
    const timestamp = this.service.now();
    return { timestamp, isoTime: new Date(timestamp).toISOString() };
  }
}
