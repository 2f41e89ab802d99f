import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './bootstrap';
import { loadConfigOrExit } from './config/load-config-or-exit';

async function main(): Promise<void> {
  const config = loadConfigOrExit(process.env);
  const app = await createApp(config);
  await app.listen(config.http.port, config.http.host);
  new Logger('shardleaf').log(`listening on http://${config.http.host}:${config.http.port}`);
}

main().catch((err: unknown) => {
  console.error('shardleaf failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
