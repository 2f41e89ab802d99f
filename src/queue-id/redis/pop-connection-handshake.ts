import { Logger } from '@nestjs/common';
import { Socket } from 'node:net';
import { RedisUrlParts } from '../../config/redis-config';
import { encodeCommand } from './resp/resp-encode';
import { RespPopReader } from './resp/resp-pop-reader';

/** AUTH errors of a server that needs no password (the ioredis client ignores them too). */
const PASSWORD_NOT_NEEDED = /no password is set|without any password configured/i;

/**
 * The pop connection's handshake (pop-connection.ts): AUTH and SELECT of REDIS_URL, written
 * before any pop (pops asked for meanwhile wait and follow them). `onReady` once every reply was
 * OK (or, without any command, once connected); `fail` on an error reply (the connection must go).
 */
export function writeHandshake(
  endpoint: RedisUrlParts,
  socket: Socket,
  reader: RespPopReader,
  logger: Logger,
  fail: (err: Error) => void,
  onReady: () => void,
): void {
  const { username, password, db } = endpoint;
  const commands: string[][] = [];
  // As the ioredis client does: AUTH user password when there is a user, AUTH password when only a password.
  if (username) {
    commands.push(['AUTH', username, password ?? '']);
  } else if (password) {
    commands.push(['AUTH', password]);
  }
  if (db !== 0) {
    commands.push(['SELECT', String(db)]);
  }
  if (commands.length === 0) {
    socket.once(endpoint.tls ? 'secureConnect' : 'connect', onReady);
    return;
  }
  let left = commands.length;
  for (const args of commands) {
    reader.expectOk((reply) => {
      let err = reply;
      if (err && args[0] === 'AUTH' && PASSWORD_NOT_NEEDED.test(err.message)) {
        // A password the server does not ask for: the ioredis client warns and goes on; so does this one.
        logger.warn(`pop connection: ${err.message} (a password was given that Redis does not need)`);
        err = null;
      }
      if (err) {
        fail(new Error(`pop connection: ${args[0]} failed: ${err.message}`));
        return;
      }
      if (--left === 0) {
        onReady();
      }
    });
    socket.write(encodeCommand(args));
  }
}
