import { CreateIdAlloc1763769600000 } from '../../../migrations/1763769600000-create-id-alloc';

/** Every migration, in order. Listed explicitly (no glob) so ts-node, Jest and dist load the same classes. */
export const MIGRATIONS = [CreateIdAlloc1763769600000];
