import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { APP_CONFIG } from '../config/config.module';
import { DirectRoute } from '../common/direct-routes';
import { parseCount, parseIntParam, parseRequiredString } from '../common/input';
import { MAX_APP_ID } from './core/queue-id-layout';
import { QueueIdService } from './queue-id.service';

/** `GET /api/id/{appId}?gatePass=…[&count=N]`: text/plain ID, or JSON `{ids}` for a batch. */
@Controller('api/id')
export class QueueIdController {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly service: QueueIdService,
  ) {}

  @Get(':appId')
  async get(
    @Param('appId') appIdRaw: string,
    @Query() query: Record<string, unknown>,
  ): Promise<string | { ids: string[] }> {
    const appId = parseIntParam('appId', appIdRaw, 0, MAX_APP_ID);
    const gatePass = parseRequiredString('gatePass', query.gatePass, this.config.queue.gatePassMaxLength);
    const count = parseCount(query.count, this.config.queue.maxBatch);
    const ids = await this.service.get(appId, gatePass, count ?? 1);
    if (count === undefined) {
      return ids[0].toString();
    }
    return { ids: ids.map((id) => id.toString()) };
  }
}

/** Served straight from Fastify (common/direct-routes.ts): the hottest route of the service. */
export const QUEUE_ID_DIRECT_ROUTE: DirectRoute<QueueIdController> = {
  method: 'GET',
  url: '/api/id/:appId',
  controller: QueueIdController,
  handler: 'get',
  call: (controller, params, query) => controller.get(params.appId, query),
};
