import { Controller, Get, Inject, Param, Query, Res } from '@nestjs/common';
import { QUEUE_CONFIG, QueueConfig } from '../config/config-tokens';
import { DirectRoute } from '../common/direct-routes/direct-route.decorator';
import { parseCount, parseIntParam, parseRequiredString } from '../common/input';
import { MAX_APP_ID } from './core/queue-id-layout';
import { QueueIdService } from './queue-id.service';

/** What the controller uses of Fastify's reply. */
interface JsonReply {
  header(name: string, value: string): unknown;
}

/** `GET /api/id/{appId}?gatePass=…[&count=N]`: text/plain ID, or JSON `{ids}` for a batch. */
@Controller('api/id')
export class QueueIdController {
  constructor(
    @Inject(QUEUE_CONFIG) private readonly queue: QueueConfig,
    private readonly service: QueueIdService,
  ) {}

  /**
   * The hottest route of the service: served straight from Fastify (common/direct-routes), without
   * a request logger (the reply is taken for the batch's content type only; errors are logged by
   * the error filter).
   */
  @DirectRoute({ requestLogger: false })
  @Get(':appId')
  get(
    @Param('appId') appIdRaw: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) reply: JsonReply,
  ): Promise<string | Buffer> {
    // Not async: the single get's promise is returned as it is (no extra promise to adopt it). Bad
    // input throws here, before any pop; the direct route maps it as it maps a rejection.
    const appId = parseIntParam('appId', appIdRaw, 0, MAX_APP_ID);
    const gatePass = parseRequiredString('gatePass', query.gatePass, this.queue.gatePassMaxLength);
    const count = parseCount(query.count, this.queue.maxBatch);
    if (count === undefined) {
      return this.service.getOneText(appId, gatePass);
    }
    return this.batch(appId, gatePass, count, reply);
  }

  /**
   * `{"ids":[…]}` written by the service into one Buffer (the same bytes JSON.stringify would
   * give): Fastify sends a Buffer as it is, no serializer and no string encoding.
   */
  private async batch(appId: number, gatePass: string, count: number, reply: JsonReply): Promise<Buffer> {
    const body = await this.service.getBatchJson(appId, gatePass, count);
    reply.header('content-type', 'application/json; charset=utf-8');
    return body;
  }
}
