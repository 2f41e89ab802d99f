import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { CUSTOM_ROUTE_ARGS_METADATA, ROUTE_ARGS_METADATA, RESPONSE_PASSTHROUGH_METADATA } from '@nestjs/common/constants';

/** What a direct route reads of Fastify's request (structural: Nest carries its own Fastify). */
export interface DirectRequest {
  /** Fastify's request id (logged with errors, as ErrorFilter does). */
  id?: string;
  params: Record<string, string>;
  query: Record<string, unknown>;
  headers: Record<string, string | string[] | undefined>;
}

/** What a direct route uses of Fastify's reply. */
export interface DirectReply {
  callNotFound(): void;
  status(code: number): DirectReply;
  header(name: string, value: string): DirectReply;
  send(payload: unknown): DirectReply;
}

/** Reads one argument of the controller method from the request, as Nest's RouteParamsFactory does. */
export type ArgReader = (request: DirectRequest, reply: DirectReply) => unknown;

/** Calls the controller method with its arguments read from the request. */
export type DirectInvoker = (request: DirectRequest, reply: DirectReply) => unknown;

/** One entry of Nest's ROUTE_ARGS_METADATA (`@Param('key', …pipes)` → `{ index, data: 'key', pipes }`). */
interface RouteArgMetadata {
  index: number;
  data?: unknown;
  pipes?: unknown[];
}

const noArgument: ArgReader = () => undefined;

/**
 * The readers of a controller method's arguments, from the metadata its parameter decorators left
 * (`@Param`, `@Query`, `@Headers`, `@Req`, `@Res({ passthrough: true })`); an argument without a
 * decorator is `undefined`, as in Nest. Values come out as Nest gives them without pipes: path
 * parameters and query values are strings (the controllers parse them). Anything else is refused
 * into `refusals`: a parameter pipe, a custom parameter decorator, any other kind (`@Body`, `@Ip`…).
 */
export function argReaders(controller: object, handler: string, refusals: string[]): ArgReader[] {
  const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) ?? {}) as Record<string, RouteArgMetadata>;
  const passthrough = Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, handler) === true;
  const readers: Array<ArgReader | undefined> = [];
  for (const [key, arg] of Object.entries(metadata)) {
    const where = `argument ${arg.index}`;
    if (key.includes(CUSTOM_ROUTE_ARGS_METADATA)) {
      refusals.push(`${where} comes from a custom parameter decorator (createParamDecorator)`);
      continue;
    }
    if (arg.pipes !== undefined && arg.pipes.length > 0) {
      refusals.push(`${where} has parameter pipes (e.g. @Param('n', ParseIntPipe)): parse in the method instead`);
    }
    const reader = readerOf(Number(key.split(':')[0]), arg.data, passthrough);
    if (typeof reader === 'string') {
      refusals.push(`${where}: ${reader}`);
      continue;
    }
    readers[arg.index] = reader;
  }
  return Array.from(readers, (reader) => reader ?? noArgument);
}

/**
 * Whether the method is given Fastify's request or reply (`@Req()`, `@Res({ passthrough: true })`):
 * then it may log through `request.log`, which the route must make (logging/fastify-logging.ts).
 */
export function takesRequestOrReply(controller: object, handler: string): boolean {
  const metadata = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler) ?? {}) as Record<string, RouteArgMetadata>;
  return Object.keys(metadata).some((key) => {
    const type = Number(key.split(':')[0]);
    return type === Number(RouteParamtypes.REQUEST) || type === Number(RouteParamtypes.RESPONSE);
  });
}

/**
 * Per argument kind (exhaustive: a kind a Nest release adds fails the type-check), the reader as
 * RouteParamsFactory.exchangeKeyForValue reads it for Fastify, or the decorator that is refused.
 */
const KINDS: Record<RouteParamtypes, ((name: string | undefined, passthrough: boolean) => ArgReader | string) | string> = {
  [RouteParamtypes.PARAM]: (name) => (name === undefined ? (request) => request.params : (request) => request.params[name]),
  [RouteParamtypes.QUERY]: (name) => (name === undefined ? (request) => request.query : (request) => request.query[name]),
  [RouteParamtypes.HEADERS]: (name) => {
    const header = name?.toLowerCase();
    return header === undefined ? (request) => request.headers : (request) => request.headers[header];
  },
  [RouteParamtypes.REQUEST]: () => (request) => request,
  // Without passthrough the method sends the reply itself and Nest ignores what it returns.
  [RouteParamtypes.RESPONSE]: (_name, passthrough) => (passthrough ? (_request, reply) => reply : '@Res() without { passthrough: true }'),
  [RouteParamtypes.BODY]: '@Body()',
  [RouteParamtypes.RAW_BODY]: '@RawBody()',
  [RouteParamtypes.NEXT]: '@Next()',
  [RouteParamtypes.SESSION]: '@Session()',
  [RouteParamtypes.FILE]: '@UploadedFile()',
  [RouteParamtypes.FILES]: '@UploadedFiles()',
  [RouteParamtypes.HOST]: '@HostParam()',
  [RouteParamtypes.IP]: '@Ip()',
  [RouteParamtypes.ACK]: '@Ack()',
};

/** The reader of one argument, or why it is refused. */
function readerOf(type: RouteParamtypes, data: unknown, passthrough: boolean): ArgReader | string {
  const kind = KINDS[type] as (typeof KINDS)[RouteParamtypes] | undefined;
  if (data !== undefined && data !== null && data !== '' && typeof data !== 'string') {
    return 'its decorator was given a non-string key';
  }
  const reader = typeof kind === 'function' ? kind(data || undefined, passthrough) : (kind ?? `argument kind ${String(type)}`);
  return typeof reader === 'string' ? `${reader} is not supported on a direct route` : reader;
}

/**
 * The per-request call: the readers resolved at start, then the method called with what they read.
 * Specialised by argument count so that a request does a fixed few calls and no array.
 */
export function directInvoker(instance: object, method: (...args: unknown[]) => unknown, readers: ArgReader[]): DirectInvoker {
  switch (readers.length) {
    case 0:
      return () => method.call(instance);
    case 1: {
      const [a] = readers;
      return (request, reply) => method.call(instance, a(request, reply));
    }
    case 2: {
      const [a, b] = readers;
      return (request, reply) => method.call(instance, a(request, reply), b(request, reply));
    }
    case 3: {
      const [a, b, c] = readers;
      return (request, reply) => method.call(instance, a(request, reply), b(request, reply), c(request, reply));
    }
    default:
      return (request, reply) => method.apply(instance, readers.map((read) => read(request, reply)));
  }
}
