import { Controller, Get, Header, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ErrorKind, IdGenError } from '../common/id-gen.error';

/** The three swagger-ui-dist files the page needs, read once on first use. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'application/javascript; charset=utf-8',
  'swagger-ui-standalone-preset.js': 'application/javascript; charset=utf-8',
};
const cache = new Map<string, Buffer>();

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>shardleaf API</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="/docs/swagger-ui.css"></head>
<body><div id="swagger-ui"></div>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/swagger-ui-standalone-preset.js"></script>
<script>
window.ui = SwaggerUIBundle({ url: '/docs-json', dom_id: '#swagger-ui', presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset], layout: 'StandaloneLayout' });
</script></body></html>
`;

/**
 * `GET /docs`: Swagger UI over `/docs-json`, served from swagger-ui-dist without @fastify/static
 * (whose current major pulls an ESM-only dependency that CommonJS Jest cannot load).
 */
@ApiExcludeController()
@Controller('docs')
export class OpenApiUiController {
  @Get()
  @Header('content-type', 'text/html; charset=utf-8')
  page(): string {
    return PAGE;
  }

  @Get(':asset')
  asset(@Param('asset') name: string, @Res({ passthrough: true }) reply: FastifyReply): Buffer {
    const type = ASSETS[name];
    if (type === undefined) {
      throw new IdGenError(ErrorKind.RouteNotFound, `no such file: /docs/${name.slice(0, 64)}`);
    }
    let body = cache.get(name);
    if (body === undefined) {
      body = readFileSync(join(swaggerUiDir(), name));
      cache.set(name, body);
    }
    reply.header('content-type', type).header('cache-control', 'public, max-age=86400');
    return body;
  }
}

/** swagger-ui-dist (a dependency of @nestjs/swagger): the folder of its package.json. */
function swaggerUiDir(): string {
  return dirname(require.resolve('swagger-ui-dist/package.json'));
}
