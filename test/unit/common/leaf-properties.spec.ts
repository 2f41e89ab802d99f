import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError } from '../../../src/config/config.error';
import { parseProperties } from '../../../src/config/leaf-properties';
import { loadConfig } from '../../../src/config/load-config';

describe('LEAF_PROPERTIES (migration from Leaf)', () => {
  let dir: string;
  const write = (text: string): string => {
    const file = join(dir, `leaf-${Math.random().toString(36).slice(2)}.properties`);
    writeFileSync(file, text);
    return file;
  };

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'shardleaf-leafprops-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('parses Java properties: =, :, comments and continuations', () => {
    const props = parseProperties('# c\n! c\na=1\nb : two\nc = x\\\n  y\n');
    expect([...props]).toEqual([
      ['a', '1'],
      ['b', 'two'],
      ['c', 'xy'],
    ]);
  });

  it("maps Leaf's settings onto ours", () => {
    const file = write(
      [
        'leaf.name=com.sankuai.leaf.opensource.test',
        'leaf.segment.enable=false',
        'leaf.jdbc.url=jdbc:mysql://db.local:3307/leaf?useUnicode=true&characterEncoding=utf8',
        'leaf.jdbc.username=leaf',
        'leaf.jdbc.password=p@ss:w/rd',
        'leaf.snowflake.enable=true',
        'leaf.snowflake.zk.address=zk1:2181,zk2:2181',
        'leaf.snowflake.port=2182',
      ].join('\n'),
    );
    const config = loadConfig({ LEAF_PROPERTIES: file });
    expect(config.snowflake.name).toBe('com.sankuai.leaf.opensource.test');
    expect(config.segment.enabled).toBe(false);
    expect(config.database).toMatchObject({ host: 'db.local', port: 3307, database: 'leaf', user: 'leaf', password: 'p@ss:w/rd' });
    expect(config.snowflake.mode).toBe('zk_normal');
    expect(config.snowflake.zk.address).toBe('zk1:2181,zk2:2181');
    expect(config.snowflake.port).toBe(2182);
  });

  it('lets explicit environment variables win, and maps leaf.snowflake.mode / enable=false', () => {
    const file = write('leaf.snowflake.enable=true\nleaf.snowflake.mode=zk_recycle\nleaf.segment.enable=false\n');
    expect(loadConfig({ LEAF_PROPERTIES: file }).snowflake.mode).toBe('zk_recycle');
    const explicit = loadConfig({ LEAF_PROPERTIES: file, SNOWFLAKE_MODE: 'mysql', SEGMENT_ENABLED: 'true' });
    expect(explicit.snowflake.mode).toBe('mysql');
    expect(explicit.segment.enabled).toBe(true);
    expect(loadConfig({ LEAF_PROPERTIES: write('leaf.snowflake.enable=false\n') }).snowflake.mode).toBe('off');
  });

  it.each([
    ['leaf.segment.enable=yes', 'leaf.segment.enable'],
    ['leaf.snowflake.enable=1', 'leaf.snowflake.enable'],
    ['leaf.jdbc.url=mysql://nope', 'leaf.jdbc.url'],
    ['leaf.snowflake.port=99999', 'leaf.snowflake.port'],
    ['leaf.snowflake.mode=etcd', 'leaf.snowflake.mode'],
    ['leaf.snowflake.zk.address=zk1', 'leaf.snowflake.zk.address'],
    ['leaf.name=has space', 'leaf.name'],
  ])('refuses %s with a ConfigError naming the property', (line, property) => {
    const file = write(`${line}\n`);
    expect(() => loadConfig({ LEAF_PROPERTIES: file })).toThrow(ConfigError);
    expect(() => loadConfig({ LEAF_PROPERTIES: file })).toThrow(property);
  });

  it('refuses an unreadable file naming LEAF_PROPERTIES', () => {
    expect(() => loadConfig({ LEAF_PROPERTIES: join(dir, 'missing.properties') })).toThrow(/LEAF_PROPERTIES/);
  });
});
