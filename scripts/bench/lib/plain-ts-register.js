'use strict';
/**
 * Runs the bench's TypeScript servers (servers/*.ts) in plain node: each .ts file transpiled
 * alone with the project's compiler options as it is required, nothing else loaded. ts-node's
 * register loads its REPL, which loads Node's `domain` module, and with it loaded every
 * EventEmitter (each request's IncomingMessage and ServerResponse among them) goes through
 * domain's EventEmitter.init: about 1 µs more CPU per request, measured (docs/performance.md,
 * "Ceilings without ts-node"). The service runs from dist/ without it: a ceiling must not either.
 *
 *   node -r ./scripts/bench/lib/plain-ts-register.js scripts/bench/servers/bare-queue.ts
 */
const { readFileSync } = require('node:fs');
const { join } = require('node:path');
const ts = require('typescript');

const configPath = join(__dirname, '../../../tsconfig.json');
const { config, error } = ts.readConfigFile(configPath, ts.sys.readFile);
if (error !== undefined) {
  throw new Error(`plain-ts-register: cannot read ${configPath}: ${ts.flattenDiagnosticMessageText(error.messageText, '\n')}`);
}
const compilerOptions = {
  ...ts.convertCompilerOptionsFromJson(config.compilerOptions, join(__dirname, '../../..')).options,
  module: ts.ModuleKind.CommonJS,
  sourceMap: false,
  inlineSourceMap: false,
};

require.extensions['.ts'] = function compileTs(module, filename) {
  const source = readFileSync(filename, 'utf8');
  const { outputText } = ts.transpileModule(source, { compilerOptions, fileName: filename });
  module._compile(outputText, filename);
};
