import { ChildProcess, spawn } from 'node:child_process';
import { request } from 'node:http';
import { createServer } from 'node:net';
import { pinnedCommand, placement } from './placement';

export const ROOT = `${__dirname}/../../..`;
/** Runs a TypeScript file of scripts/bench in plain node (transpile-only: no type-check at start). */
export const TS_NODE = ['-r', 'ts-node/register/transpile-only'];
/**
 * Runs a ceiling's TypeScript server in plain node, transpiled file by file without ts-node, whose
 * register loads Node's `domain` module and with it ~1 µs more CPU per request (lib/plain-ts-register.js).
 */
export const PLAIN_TS = ['-r', `${__dirname}/plain-ts-register.js`];

export interface ServerProc {
  name: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** A free TCP port on loopback. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const address = srv.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/**
 * V8 flags of every HTTP server the bench starts (service and ceilings alike). V8's memory reducer
 * runs one memory-reducing full GC ("Mark-Compact (reduce)" in --trace-gc) about 106 s after a
 * server starts, whatever its load; after it, a server's CPU per request can step up 15–45 % and
 * stay there (watched for up to ~5 min), the extra time in V8's property-add/map-transition
 * runtime under Node's http/stream code — in the constant server as well as the service, and
 * which of them and by how much varies from run to run (docs/performance.md, "A step after
 * ~105 s"). A ratio of a server measured before that GC to one measured after is V8's, not the
 * code's: with the reducer off no server takes that GC. `BENCH_MEMORY_REDUCER=on` keeps V8's
 * default. `BENCH_NODE_FLAGS` (separated by white space, so no flag's value can hold a space) adds
 * Node/V8 flags to every server alike, after that one.
 */
export function serverNodeFlags(env: NodeJS.ProcessEnv = process.env): string[] {
  const extra = (env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter((flag) => flag !== '');
  return [...(env.BENCH_MEMORY_REDUCER === 'on' ? [] : ['--no-memory-reducer']), ...extra];
}

/**
 * The servers' flags as the bench's first lines name them: where each comes from, and whether
 * V8's memory reducer is on (the last of `--memory-reducer` / `--no-memory-reducer` wins).
 */
export function describeServerFlags(env: NodeJS.ProcessEnv = process.env): string {
  const flags = serverNodeFlags(env);
  const extra = flags.slice(env.BENCH_MEMORY_REDUCER === 'on' ? 0 : 1);
  const last = flags.filter((flag) => flag === '--memory-reducer' || flag === '--no-memory-reducer').pop();
  const reducer =
    last === '--no-memory-reducer'
      ? "V8's memory reducer off (its memory-reducing GC ~106 s after start steps a server's CPU per request up; BENCH_MEMORY_REDUCER=on keeps it)"
      : "V8's memory reducer on: a server measured after its memory-reducing GC (~106 s) may need more CPU per request";
  return `HTTP servers' Node flags: ${flags.length > 0 ? flags.join(' ') : 'none'} (BENCH_NODE_FLAGS: ${extra.length > 0 ? extra.join(' ') : 'none'}); ${reducer}`;
}

/**
 * Starts `node args…` (after serverNodeFlags) with `env` on the servers' CPUs (lib/placement.ts),
 * waits until it answers HTTP on `port` (any status).
 */
export async function startServer(
  name: string,
  args: string[],
  env: NodeJS.ProcessEnv,
  port: number,
  timeoutMs = 60_000,
): Promise<ServerProc> {
  const [cmd, cmdArgs] = pinnedCommand(process.execPath, [...serverNodeFlags(), ...args], placement().server);
  const child = spawn(cmd, cmdArgs, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: number | null = null;
  child.once('exit', (code) => {
    exited = code ?? -1;
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) {
      return;
    }
    const done = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(timer);
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (exited !== null) {
      throw new Error(`${name} exited with ${String(exited)} before listening:\n${output}`);
    }
    if (await answers(port)) {
      return { name, port, child, stop };
    }
    await sleep(100);
  }
  await stop();
  throw new Error(`${name} did not listen on ${port} within ${timeoutMs} ms:\n${output}`);
}

function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/', method: 'GET', timeout: 1000 }, (res) => {
      res.resume();
      resolve(true);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => {
      req.destroy();
      resolve(false);
    });
    req.end();
  });
}

/** Runs `node args…` to completion and returns its stdout; throws with stderr on failure. */
export function runNode(args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000): Promise<string> {
  return runCommand(process.execPath, args, env, timeoutMs);
}

export function runCommand(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 300_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-8000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) {
        resolve(out);
      } else {
        reject(new Error(`${cmd} ${args.join(' ')} failed (${code ?? signal}):\n${err}${out.slice(-2000)}`));
      }
    });
  });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
