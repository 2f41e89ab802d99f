import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { ErrorKind, IdGenError } from '../../common/id-gen.error';
import { parseIdParam, parseTimeParam } from '../../common/input';
import { SEGMENT_CONFIG, SegmentConfig } from '../../config/config-tokens';
import { parseSegmentKey } from '../segment.input';
import { SegmentService } from '../segment.service';
import { LeafAllocHistoryRepository } from './leaf-alloc-history.repository';

/** The time of a segment ID, and the first ID of a tag allocated at or after a time. */
@Controller('api/segment')
export class SegmentHistoryController {
  constructor(
    @Inject(SEGMENT_CONFIG) private readonly config: SegmentConfig,
    private readonly segment: SegmentService,
    private readonly history: LeafAllocHistoryRepository,
  ) {}

  @Get('decode/:tag/:id')
  @ApiOperation({
    summary: 'When the range of a segment ID was allocated',
    description: 'allocatedAt (ISO, UTC) from leaf_alloc_history; null when older than the history or never allocated.',
  })
  async decode(@Param('tag') tagRaw: string, @Param('id') idRaw: string): Promise<{ tag: string; id: string; allocatedAt: string | null }> {
    this.segment.assertEnabled();
    const tag = parseSegmentKey('tag', tagRaw, this.config.keyMaxLength);
    const id = parseIdParam('id', idRaw);
    const range = await this.history.rangeOf(tag, id);
    return { tag, id: id.toString(), allocatedAt: range?.allocatedAt.toISOString() ?? null };
  }

  @Get('at/:tag')
  @ApiOperation({
    summary: 'The first segment ID of a tag allocated at or after a time',
    description:
      'Query: time (ISO 8601 with a zone, or ms since the epoch). Every ID of the tag above the answer was allocated at or ' +
      'after it as well. 404 when the history has no allocation of the tag at or after the time.',
  })
  async at(@Param('tag') tagRaw: string, @Query() query: Record<string, unknown>): Promise<{ tag: string; id: string; allocatedAt: string }> {
    this.segment.assertEnabled();
    const tag = parseSegmentKey('tag', tagRaw, this.config.keyMaxLength);
    const time = parseTimeParam('time', query.time);
    const range = await this.history.firstAtOrAfter(tag, time);
    if (range === null) {
      throw new IdGenError(ErrorKind.NotFound, `no allocation of '${tag}' at or after ${time.toISOString()} in the history`);
    }
    return { tag, id: range.from.toString(), allocatedAt: range.allocatedAt.toISOString() };
  }
}
