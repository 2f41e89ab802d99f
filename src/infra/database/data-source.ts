import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { loadConfig } from '../../config/load-config';
import { typeormOptions } from './typeorm-options';

/** The data source of the TypeORM CLI (`npm run migration:run`), configured like the service. */
export default new DataSource(typeormOptions(loadConfig(process.env).database));
