import type { FastifyInstance } from 'fastify';

/**
 * Fastify's JSON body parser (same prototype-poisoning protection), except that an empty body is
 * no body: `curl -X DELETE -H 'content-type: application/json' …` on a route that takes none is
 * served instead of answering 400 "Body cannot be empty". A route that needs a body still refuses
 * a missing one through its own input parser (BAD_INPUT).
 */
export function installJsonBodyParser(fastify: FastifyInstance): void {
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') {
      done(null, undefined);
      return;
    }
    void parseJson(request, text, done);
  });
}
