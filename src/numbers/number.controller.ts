import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { DirectRoute } from '../common/direct-routes/direct-route.decorator';
import { parseCount } from '../common/input';
import { NUMBERS_CONFIG } from '../config/config-tokens';
import { NumbersConfig } from '../config/numbers-config';
import { NumberGenerator } from './core/number-generator';
import { parseNumberKey } from './numbers.input';

/** `GET /api/number/{key}`: one formatted number as text/plain; `?count=N` gives JSON `{numbers}`. */
@Controller('api/number')
export class NumberController {
  constructor(
    @Inject(NUMBERS_CONFIG) private readonly numbers: NumbersConfig,
    private readonly generator: NumberGenerator,
  ) {}

  /** Served straight from Fastify (common/direct-routes), like the ID routes. */
  @DirectRoute()
  @Get(':key')
  async get(@Param('key') keyRaw: string, @Query() query: Record<string, unknown>): Promise<string | { numbers: string[] }> {
    const key = parseNumberKey('key', keyRaw);
    const count = parseCount(query.count, this.numbers.maxBatch);
    const numbers = await this.generator.next(key, count ?? 1);
    return count === undefined ? numbers[0] : { numbers };
  }
}
