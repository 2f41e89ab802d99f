import Redis from 'ioredis';
import { standaloneEndpoint } from '../../../src/infra/redis/redis-client.factory';

/**
 * The pop connection must reach the database and user the ioredis client reaches:
 * its endpoint is read from the client's resolved options, query parameters of REDIS_URL included
 * (a `?db=3` read as database 0 would pop another deployment's lists).
 */
describe('standaloneEndpoint', () => {
  it.each([
    ['redis://127.0.0.1:6379/0', { host: '127.0.0.1', port: 6379, tls: false, username: undefined, password: undefined, db: 0 }],
    ['redis://h:6380?db=3', { host: 'h', port: 6380, tls: false, username: undefined, password: undefined, db: 3 }],
    ['redis://h:6380/?db=4&password=s%20ecret', { host: 'h', port: 6380, tls: false, username: undefined, password: 's ecret', db: 4 }],
    ['redis://u:p%40@h:1/2', { host: 'h', port: 1, tls: false, username: 'u', password: 'p@', db: 2 }],
    ['redis://user@h', { host: 'h', port: 6379, tls: false, username: 'user', password: undefined, db: 0 }],
    ['rediss://[::1]:7000/1', { host: '::1', port: 7000, tls: true, username: undefined, password: undefined, db: 1 }],
  ])('%s', (url, expected) => {
    const client = new Redis(url, { lazyConnect: true });
    try {
      expect(standaloneEndpoint(client)).toEqual(expected);
    } finally {
      client.disconnect();
    }
  });
});
