import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LeaseModule } from '../lease/lease.module';
import { LeafAllocHistoryRepository } from './history/leaf-alloc-history.repository';
import { LeafAllocHistoryWriter } from './history/leaf-alloc-history.writer';
import { LeafAllocProcedure } from './history/leaf-alloc-procedure';
import { SegmentHistoryController } from './history/segment-history.controller';
import { LeafAllocLeaseRepository } from './leaf-alloc-lease.repository';
import { LeafAllocEntity } from './leaf-alloc.entity';
import { LeafAllocRepository } from './leaf-alloc.repository';
import { SegmentAdminController } from './segment-admin.controller';
import { SegmentAdminService } from './segment-admin.service';
import { segmentGeneratorProvider } from './segment-generator.provider';
import { SegmentController } from './segment.controller';
import { SegmentScheduler } from './segment.scheduler';
import { SegmentService } from './segment.service';
import { SegmentStatus } from './segment-status';
import { SegmentLeaseController } from './segment-lease.controller';
import { SegmentLeaseService } from './segment-lease.service';

/** Leaf segment mode: `leaf_alloc`, a double buffer per tag, the ID route and its admin API. */
@Module({
  imports: [TypeOrmModule.forFeature([LeafAllocEntity]), LeaseModule],
  controllers: [SegmentController, SegmentAdminController, SegmentLeaseController, SegmentHistoryController],
  providers: [
    LeafAllocHistoryWriter,
    LeafAllocProcedure,
    LeafAllocHistoryRepository,
    LeafAllocRepository,
    segmentGeneratorProvider,
    SegmentService,
    SegmentAdminService,
    SegmentScheduler,
    LeafAllocLeaseRepository,
    SegmentLeaseService,
    SegmentStatus,
  ],
  exports: [SegmentStatus],
})
export class SegmentModule {}
