import { Module } from '@nestjs/common';
import { OpenApiUiController } from './openapi-ui.controller';

/** The Swagger UI page; the document itself is registered by setupOpenApi (bootstrap). */
@Module({ controllers: [OpenApiUiController] })
export class OpenApiModule {}
