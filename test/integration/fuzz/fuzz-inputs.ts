/**
 * Generators of malformed inputs for the fuzz test: a seeded PRNG (reproducible) picking from
 * bad numbers, huge numbers, unicode, empty and very long strings, bad JSON, wrong content types,
 * bad tokens and path tricks.
 */
export class Rng {
  constructor(private state: number) {}

  next(): number {
    // mulberry32
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)];
  }

  int(max: number): number {
    return Math.floor(this.next() * max);
  }
}

export const BAD_NUMBERS = [
  '', ' ', '-1', '-0', '+1', '1.5', '1e3', '0x10', '0b1', '0o7', 'NaN', 'Infinity', '-Infinity', 'null',
  'undefined', 'true', '[]', '{}', '1,2', '1 2', ' 1', '1 ', '01', '00', '１', '٣', '1\u0000', '256', '1000000',
  '1001', '0', '9007199254740993', '18446744073709551616', '9223372036854775807', '9223372036854775808',
  '-9223372036854775809', '9'.repeat(40), '1'.repeat(300), '%', '%%', '%zz', '%00', '%ff', '😀', 'ä', '\u202e1',
];

export const BAD_STRINGS = [
  '', ' ', '\t', '\n', '\u0000', '\uffff', '\ud800', '😀'.repeat(200), 'ä'.repeat(300), 'a'.repeat(257),
  'a'.repeat(5000), '../../etc/passwd', '..%2f..%2f', '%2e%2e', '<script>', "' OR 1=1 --", '${jndi:x}', '*', '?',
  '#', '&', '=', '/', '\\', '%', '%25', '%u0041', '\u202e', 'x'.repeat(129), 'a b', 'a+b', 'key;drop',
];

export const BAD_JSON_BODIES = [
  '{', '}', '{"appId":', '{"appId": 1,}', 'null', '[]', '"x"', '1', 'true', '{"appId":"1"', "{'appId':1}",
  '['.repeat(5000), '{"a":'.repeat(2000), '\u0000', '\ufeff{}', '{"appId":1e400}', '{"appId":-1}',
  '{"appId":1.5}', '{"appId":"9999999999999999999999"}', '{"appId":1,"appName":""}', '{"appId":1,"step":0}',
  '{"appId":1,"step":-5}', '{"appId":1,"step":"x"}', '{"appId":1,"maxLimitId":"-1"}', '{"appId":1,"appName":1}',
  '{"appId":1,"maxLimitId":"99999999999999999999999"}', '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}',
  '{"appId":300,"appName":"x"}', '{"bizTag":"","maxId":-1}', '{"bizTag":"x","step":"1e9"}', '{"step":null}',
  `{"appName":"${'a'.repeat(70_000)}"}`,
];

export const BAD_PATTERNS = [
  '', 'ORD', '{seq:0}', '{seq:19}', '{seq62:11}', '{seq:2}{seq:2}', '{', '}', '{seq:2', '{yyyy{seq:2}', '{}', '{YYYY}{seq:2}',
  'A B{seq:2}', '%{seq:2}', '😀{seq:2}', '{seq:-1}', '{seq:1e1}', `${'A'.repeat(70)}{seq:2}`, '{seq:2}\u0000', null, 5, [], {},
];

export const BAD_TIMES = [
  '', 'now', 'yesterday', '2026-11-26', '2026-11-26T09:00:00', '2026-13-01T00:00:00Z', '2026-11-26T25:00:00Z', '-1', '1e12',
  '99999999999999999', '2026-11-26T09:00:00+99:00', '0x10', '１７００００００００', '2026-11-26T09:00:00Z ',
];

export const CONTENT_TYPES = [
  undefined, 'application/json', 'text/plain', 'application/xml', 'multipart/form-data; boundary=x',
  'application/x-www-form-urlencoded', 'application/json; charset=utf-16', 'application/json; charset=bogus',
  'application/octet-stream', '', 'json', '*/*', 'application/json, text/plain',
];

export const TOKENS = [
  null, '', 'Bearer', 'Bearer ', 'Bearer wrong-token', 'Basic dGVzdDp0ZXN0', 'bearer test-admin-tokeN',
  `Bearer ${'x'.repeat(5000)}`, 'Bearer test-admin-token\u0000', 'Token test-admin-token', 'Bearer  test-admin-token',
];

export const PATH_TRICKS = [
  '/api/id/../admin/apps', '/api/id/%2e%2e/admin/apps', '//api/id/1', '/api/id/1/', '/api/id/1/x', '/api//id/1',
  '/api/id/%31', '/api/id/1%3FgatePass=a', '/api/id/%252e', '/api/id/;1', '/api/id/1;x', '/api/ID/1', '/API/id/1',
  '/api/id/%00', '/api/id/%', '/api/id/%zz', '/admin/apps/../../api/id/1', '/admin/apps/%2F', '/admin//apps',
  '/api/snowflake/decode/', '/api/snowflake/get/', '/api/segment/get/', `/api/id/${'1'.repeat(600)}`,
  `/api/snowflake/get/${'k'.repeat(600)}`, '/health/../metrics', '/.env', '/api/id/1?gatePass=a&gatePass=b',
  '/api/id/1?gatePass[]=a', '/api/id/1?gatePass[x]=a', '/api/id/1?count=1&count=2', '/api/id/1?gatePass=a&count[]=1',
  '/api/id/1?__proto__[x]=1', '/api/id/1?constructor[prototype][x]=1', '/api/id/1?' + '&'.repeat(3000),
];
