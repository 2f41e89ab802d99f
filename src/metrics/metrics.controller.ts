import { Controller, Get, Res } from '@nestjs/common';
import { FastifyReply } from 'fastify';
import { MetricsService } from './metrics.service';

/** `GET /metrics`: the Prometheus text exposition format. */
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  async scrape(@Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const { contentType, body } = await this.metrics.scrape();
    reply.header('content-type', contentType);
    return body;
  }
}
