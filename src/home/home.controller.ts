import { Controller, Get, Headers, Res } from '@nestjs/common';
import { ApiOperation } from '@nestjs/swagger';
import { FastifyReply } from 'fastify';

/** Where a newcomer goes from `/`. */
export const HOME_LINKS = {
  docs: '/docs',
  dashboard: '/dashboard',
  ready: '/health/ready',
  metrics: '/metrics',
} as const;

const DESCRIPTIONS: Record<keyof typeof HOME_LINKS, string> = {
  docs: 'API reference (OpenAPI; the document at /docs-json)',
  dashboard: 'admin dashboard (asks for ADMIN_TOKEN)',
  ready: 'readiness: 200 while every backend and generator is ready',
  metrics: 'Prometheus metrics',
};

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>shardleaf</title>
<style>body{font:16px/1.5 system-ui,sans-serif;margin:3em auto;max-width:40em;padding:0 1em}code{background:#eee;padding:0 .2em}</style>
</head><body>
<h1>shardleaf</h1>
<p>Distributed 64-bit IDs: queue IDs <code>GET /api/id/{appId}?gatePass=…</code>, Leaf segment IDs
<code>GET /api/segment/get/{key}</code>, Leaf snowflake IDs <code>GET /api/snowflake/get/{key}</code>.</p>
<ul>
${Object.entries(HOME_LINKS)
  .map(([name, href]) => `<li><a href="${href}">${href}</a>: ${DESCRIPTIONS[name as keyof typeof HOME_LINKS]}</li>`)
  .join('\n')}
</ul>
</body></html>
`;

/** `GET /`: a page of links for a browser (Accept: text/html), else the same links as JSON. */
@Controller()
export class HomeController {
  @Get()
  @ApiOperation({
    summary: 'Links to the API reference, the dashboard, readiness and metrics',
    description: 'JSON `{name, links: {docs, dashboard, ready, metrics}}`; a small HTML page of the same links when the client accepts text/html.',
  })
  home(@Headers('accept') accept: string | undefined, @Res({ passthrough: true }) reply: FastifyReply): string | object {
    if (typeof accept === 'string' && accept.includes('text/html')) {
      void reply.header('content-type', 'text/html; charset=utf-8');
      return PAGE;
    }
    return { name: 'shardleaf', links: HOME_LINKS };
  }
}
