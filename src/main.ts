import 'reflect-metadata';
import { loadConfigOrExit } from './config/load-config-or-exit';
import { startService } from './start-service';

/** Reads the environment once, then starts (start-service.ts logs why when it cannot). */
startService(loadConfigOrExit(process.env)).catch(() => process.exit(1));
