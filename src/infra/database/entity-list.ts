import { IdAllocEntity } from '../../queue-id/id-alloc.entity';
import { LeafAllocEntity } from '../../segment/leaf-alloc.entity';

/** Every TypeORM entity of the service. */
export const ENTITIES = [IdAllocEntity, LeafAllocEntity];
