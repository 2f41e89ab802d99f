import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { createApp } from './bootstrap';
import { ConfigError } from './config/config.error';
import { loadConfig } from './config/load-config';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const app = await createApp(config);
  await app.listen(config.http.port, config.http.host);
  new Logger('shardleaf').log(`listening on http://${config.http.host}:${config.http.port}`);
}

main().catch((err: unknown) => {
  console.error('shardleaf failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
