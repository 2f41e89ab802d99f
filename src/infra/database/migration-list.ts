import { CreateIdAlloc1763769600000 } from '../../../migrations/1763769600000-create-id-alloc';
import { CreateLeafAlloc1763769700000 } from '../../../migrations/1763769700000-create-leaf-alloc';
import { CreateLeafWorkeridAlloc1763769800000 } from '../../../migrations/1763769800000-create-leaf-workerid-alloc';
import { CreateIdAllocNextProcedure1763770500000 } from '../../../migrations/1763770500000-create-id-alloc-next-procedure';
import { CreateIdAllocRetired1763770600000 } from '../../../migrations/1763770600000-create-id-alloc-retired';
import { CreateLeafAllocRetired1763770700000 } from '../../../migrations/1763770700000-create-leaf-alloc-retired';
import { AddLeafWorkeridAllocOwner1763770800000 } from '../../../migrations/1763770800000-add-leaf-workerid-alloc-owner';
import { CreateNumberFormats1763770900000 } from '../../../migrations/1763770900000-create-number-formats';
import { CreateIdAllocHistory1763771000000 } from '../../../migrations/1763771000000-create-id-alloc-history';
import { CreateLeafAllocHistory1763771100000 } from '../../../migrations/1763771100000-create-leaf-alloc-history';
import { NumberClockUtc1763771200000 } from '../../../migrations/1763771200000-number-clock-utc';
import { CreateLeafAllocNextProcedure1763771300000 } from '../../../migrations/1763771300000-create-leaf-alloc-next-procedure';

/** Every migration, in order. Listed explicitly (no glob) so ts-node, Jest and dist load the same classes. */
export const MIGRATIONS = [
  CreateIdAlloc1763769600000,
  CreateLeafAlloc1763769700000,
  CreateLeafWorkeridAlloc1763769800000,
  CreateIdAllocNextProcedure1763770500000,
  CreateIdAllocRetired1763770600000,
  CreateLeafAllocRetired1763770700000,
  AddLeafWorkeridAllocOwner1763770800000,
  CreateNumberFormats1763770900000,
  CreateIdAllocHistory1763771000000,
  CreateLeafAllocHistory1763771100000,
  NumberClockUtc1763771200000,
  CreateLeafAllocNextProcedure1763771300000,
];
