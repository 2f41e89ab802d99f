import { Module } from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard';
import { LeafAllocRepository } from './leaf-alloc.repository';
import { SegmentAdminController } from './segment-admin.controller';
import { SegmentAdminService } from './segment-admin.service';
import { segmentGeneratorProvider } from './segment-generator.provider';
import { SegmentController } from './segment.controller';
import { SegmentScheduler } from './segment.scheduler';
import { SegmentService } from './segment.service';

/** Leaf segment mode: `leaf_alloc`, a double buffer per tag, the ID route and its admin API. */
@Module({
  controllers: [SegmentController, SegmentAdminController],
  providers: [
    LeafAllocRepository,
    segmentGeneratorProvider,
    SegmentService,
    SegmentAdminService,
    SegmentScheduler,
    AdminTokenGuard,
  ],
  exports: [SegmentService],
})
export class SegmentModule {}
