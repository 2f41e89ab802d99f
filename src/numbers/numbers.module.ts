import { Module } from '@nestjs/common';
import { NumberAdminController } from './number-admin.controller';
import { NumberAdminService } from './number-admin.service';
import { NumberController } from './number.controller';
import { NumberClockCheck } from './number-clock-check';
import { NumberFormatRepository } from './number-format.repository';
import { numberClockProvider, numberGeneratorProvider } from './number-generator.provider';
import { NumberMonitor } from './number-monitor';
import { NumberSequenceRepository } from './number-sequence.repository';
import { NumberShutdown } from './number-shutdown';
import { NumberStatus } from './number-status';

/** Formatted business numbers: `number_format` / `number_seq`, the number route and its admin API. */
@Module({
  controllers: [NumberController, NumberAdminController],
  providers: [
    { provide: NumberMonitor, useFactory: () => new NumberMonitor() },
    NumberSequenceRepository,
    NumberFormatRepository,
    numberClockProvider,
    numberGeneratorProvider,
    NumberAdminService,
    NumberStatus,
    NumberShutdown,
    NumberClockCheck,
  ],
  exports: [NumberMonitor, NumberStatus],
})
export class NumbersModule {}
