import { IdAllocEntity } from '../../queue-id/id-alloc.entity';

/** Every TypeORM entity of the service. */
export const ENTITIES = [IdAllocEntity];
