import { Module } from '@nestjs/common';
import { QueueIdModule } from '../queue-id.module';
import { AdminAppsController } from './admin-apps.controller';
import { AdminAppsService } from './admin-apps.service';
import { AdminTokenGuard } from '../../common/admin-token.guard';

@Module({
  imports: [QueueIdModule],
  controllers: [AdminAppsController],
  providers: [AdminAppsService, AdminTokenGuard],
  exports: [AdminTokenGuard],
})
export class AdminModule {}
