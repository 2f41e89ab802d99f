import { Body, Controller, Delete, Get, Inject, Param, Patch, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { AdminTokenGuard } from '../common/admin-token.guard';
import { SEGMENT_CONFIG, SegmentConfig } from '../config/config-tokens';
import { SegmentBufferView } from './core/segment-buffer';
import { MAX_STEP } from './core/step-policy';
import { parseCreateTag, parsePatchTag, parseSegmentKey } from './segment.input';
import { SegmentAdminService, TagRowView, TagView } from './segment-admin.service';

/** Segment-mode tags (`leaf_alloc` rows) and Leaf's `/cache` and `/db` monitor views. */
@Controller('admin/segment')
@UseGuards(AdminTokenGuard)
export class SegmentAdminController {
  private readonly maxStep: number;

  constructor(
    @Inject(SEGMENT_CONFIG) private readonly segment: SegmentConfig,
    private readonly service: SegmentAdminService,
  ) {
    this.maxStep = Math.max(MAX_STEP, segment.maxStep);
  }

  @Post('tags')
  @ApiOperation({
    summary: 'Create a segment tag (idempotent)',
    description:
      'Body {tag, step?, maxId?, description?}. maxId omitted: 1 for a tag never deleted; a tag deleted before ' +
      'resumes at the max_id it was deleted at, so no ID is issued twice. An explicit maxId below that is ' +
      'refused with 409 CONFLICT. The same tag again with the same step and description answers 200.',
  })
  async create(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<TagView> {
    const { created, tag } = await this.service.create(
      parseCreateTag(body, this.segment.keyMaxLength, this.maxStep),
    );
    reply.status(created ? 201 : 200);
    return tag;
  }

  @Get('tags')
  async list(): Promise<{ tags: TagView[] }> {
    return { tags: await this.service.list() };
  }

  @Get('tags/:tag')
  get(@Param('tag') tag: string): Promise<TagView> {
    return this.service.get(this.parseTag(tag));
  }

  @Patch('tags/:tag')
  update(@Param('tag') tag: string, @Body() body: unknown): Promise<TagView> {
    const key = this.parseTag(tag);
    return this.service.update(key, parsePatchTag(body, this.maxStep));
  }

  @Delete('tags/:tag')
  @ApiOperation({
    summary: 'Delete a segment tag',
    description: 'Records the max_id it had; a later create of the same tag resumes there. A second delete answers 404.',
  })
  remove(@Param('tag') tag: string): Promise<{ tag: string; deleted: true }> {
    return this.service.remove(this.parseTag(tag));
  }

  @Get('cache')
  cache(): { initialised: boolean; buffers: SegmentBufferView[] } {
    return this.service.cache();
  }

  @Get('db')
  async db(): Promise<{ rows: TagRowView[] }> {
    return { rows: await this.service.db() };
  }

  private parseTag(raw: string): string {
    return parseSegmentKey('tag', raw, this.segment.keyMaxLength);
  }
}
