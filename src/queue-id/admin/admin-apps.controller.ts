import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Res, UseGuards } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { QUEUE_CONFIG, QueueConfig } from '../../config/config-tokens';
import { parseIntParam } from '../../common/input';
import { MAX_APP_ID } from '../core/queue-id-layout';
import { parseCreateApp, parsePatchApp } from './admin-apps.input';
import { AdminAppsService, AppDetail, AppSummary, CreatedApp, RemovedApp } from './admin-apps.service';
import { AdminTokenGuard } from '../../common/admin-token.guard';

/** Queue-ID apps: creating an app's 64 shard rows and everything an operator needs around it. */
@Controller('admin/apps')
@UseGuards(AdminTokenGuard)
export class AdminAppsController {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly service: AdminAppsService,
  ) {}

  @Post()
  async create(@Body() body: unknown, @Res({ passthrough: true }) reply: FastifyReply): Promise<CreatedApp> {
    const { created, app } = await this.service.create(parseCreateApp(body, this.queue.maxStep));
    reply.status(created ? 201 : 200);
    return app;
  }

  @Get()
  async list(): Promise<{ apps: AppSummary[] }> {
    return { apps: await this.service.list() };
  }

  @Get(':appId')
  @ApiOperation({
    summary: 'One app with its 64 shards',
    description:
      'The app (step, maxLimitId, queue depth, remaining capacity) and per shard maxId, step, refillSize, queueLength, ' +
      'unallocated, remainingCapacity and jsSafe. `jsSafeMaxIndex` (549755813887 = 2^39 - 1): up to this index the ' +
      "app's IDs stay below 2^53 on every shard (exact as a JavaScript number); a shard's `jsSafe` is false once its maxId is above it.",
  })
  get(@Param('appId') appId: string): Promise<AppDetail> {
    return this.service.get(parseAppId(appId));
  }

  @Patch(':appId')
  update(@Param('appId') appId: string, @Body() body: unknown): Promise<AppDetail> {
    const id = parseAppId(appId);
    return this.service.update(id, parsePatchApp(body, this.queue.maxStep, id));
  }

  @Delete(':appId')
  remove(@Param('appId') appId: string): Promise<RemovedApp> {
    return this.service.remove(parseAppId(appId));
  }

  @Post(':appId/refill')
  @HttpCode(200)
  refill(@Param('appId') appId: string): Promise<object> {
    return this.service.refillApp(parseAppId(appId));
  }
}

function parseAppId(raw: string): number {
  return parseIntParam('appId', raw, 0, MAX_APP_ID);
}
