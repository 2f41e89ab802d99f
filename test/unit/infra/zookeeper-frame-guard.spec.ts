import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * src/infra/zookeeper/zookeeper-frame-guard.ts wraps three private methods of node-zookeeper-client
 * (docs/decisions/0025-zookeeper-frame-guard.md). These checks fail as soon as the installed library
 * is not the exact one the guard was read against, so an upgrade is a reviewed change of the guard,
 * never a silent one. The guard's behaviour is tested against a real ZooKeeper behind a fault proxy
 * (test/integration/zookeeper/zookeeper-bad-frames.spec.ts).
 */
const ROOT = join(__dirname, '..', '..', '..');
const LIBRARY = join(ROOT, 'node_modules', 'node-zookeeper-client');
/** sha256 of lib/ConnectionManager.js in node-zookeeper-client 1.1.3, the file whose methods are wrapped. */
const CONNECTION_MANAGER_SHA256 = '51fbfd9f71e6ccfe2e09c3d3576195c05b6855670805e6b50d67e554c582a97a';

type Method = (...args: unknown[]) => unknown;

function prototypeOfManager(): Record<string, Method> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const manager = require('node-zookeeper-client/lib/ConnectionManager.js') as { prototype: Record<string, Method> };
  return manager.prototype;
}

describe('node-zookeeper-client under the frame guard', () => {
  it('is pinned to exactly 1.1.3 in package.json and installed at that version', () => {
    const own = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const installed = JSON.parse(readFileSync(join(LIBRARY, 'package.json'), 'utf8')) as { version: string };
    expect(own.dependencies['node-zookeeper-client']).toBe('1.1.3');
    expect(installed.version).toBe('1.1.3');
  });

  it('has the ConnectionManager file the guard was read against, byte for byte', () => {
    const source = readFileSync(join(LIBRARY, 'lib', 'ConnectionManager.js'));
    expect(createHash('sha256').update(source).digest('hex')).toBe(CONNECTION_MANAGER_SHA256);
  });

  it('has the three wrapped methods, with the signatures and the fields the guard relies on', () => {
    const proto = prototypeOfManager();
    expect(typeof proto.onSocketData).toBe('function');
    expect(typeof proto.onSocketClosed).toBe('function');
    expect(typeof proto.onSocketConnected).toBe('function');
    // Read from the library's file, not the prototype: the guard may already have wrapped it.
    const source = readFileSync(join(LIBRARY, 'lib', 'ConnectionManager.js'), 'utf8');
    expect(source).toContain('ConnectionManager.prototype.onSocketData = function (buffer) {');
    expect(source).toContain('ConnectionManager.prototype.onSocketClosed = function (hasError) {');
    expect(source).toContain('ConnectionManager.prototype.onSocketConnected = function () {');
    // Bound per socket when it is created, so a prototype wrapped at load covers every connection.
    expect(source).toContain("self.socket.on('data', self.onSocketData.bind(self));");
    // One frame per call, the rest handled by calling onSocketData again (through the wrapper).
    expect(source).toContain('self.onSocketData(Buffer.alloc(0));');
    // The fields the guard reads and resets: the half-frame buffer, the pending calls, the zxid.
    for (const field of ['self.pendingBuffer = buffer;', 'pendingPacket = self.pendingQueue.shift();', 'self.zxid = responseHeader.zxid;']) {
      expect(source).toContain(field);
    }
  });

  it('refuses to install over another version of the library', () => {
    jest.isolateModules(() => {
      jest.doMock('node-zookeeper-client/package.json', () => ({ version: '1.1.4' }));
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const { installZookeeperFrameGuard } = require('../../../src/infra/zookeeper/zookeeper-frame-guard') as {
        installZookeeperFrameGuard: () => void;
      };
      expect(() => installZookeeperFrameGuard()).toThrow(/node-zookeeper-client 1\.1\.4 is installed/);
    });
  });
});
