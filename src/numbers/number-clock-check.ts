import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { NUMBERS_CONFIG } from '../config/config-tokens';
import { NumbersConfig } from '../config/numbers-config';
import { CLOCK_VIEW } from './number-clock-sql';
import { NumberSequenceRepository } from './number-sequence.repository';

/**
 * At start, one reading of the database clock view: a line naming it when it cannot be read or
 * answers no time (number requests answer 503 until it is put right), and one when the database's
 * NOW() runs in another UTC offset than NUMBER_TIME_ZONE (days are counted in NUMBER_TIME_ZONE).
 * Nothing is logged when all is well; the start goes on in every case.
 */
@Injectable()
export class NumberClockCheck implements OnApplicationBootstrap {
  private readonly logger = new Logger(NumberClockCheck.name);

  constructor(
    private readonly repo: NumberSequenceRepository,
    @Inject(NUMBERS_CONFIG) private readonly numbers: NumbersConfig,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    let check;
    try {
      check = await this.repo.checkClock();
    } catch (err) {
      this.logger.warn(`numbers: ${CLOCK_VIEW}: ${(err as Error).message}: number requests answer 503 until it is put right`);
      return;
    }
    const zone = this.numbers.timeZone;
    const viewIsUtc = Math.abs(check.viewMinusUtcS) < 60;
    if (viewIsUtc && check.nowOffsetMin !== offsetMinutes(zone)) {
      this.logger.log(
        `numbers: days are counted in NUMBER_TIME_ZONE ${zone} of the database's UTC clock (${CLOCK_VIEW}); ` +
          `this database's NOW() runs at UTC${offsetText(check.nowOffsetMin)}: set NUMBER_TIME_ZONE=${offsetText(check.nowOffsetMin)} to count them in its time zone`,
      );
    }
  }
}

function offsetMinutes(offset: string): number {
  const sign = offset.startsWith('-') ? -1 : 1;
  return sign * (Number(offset.slice(1, 3)) * 60 + Number(offset.slice(4, 6)));
}

function offsetText(minutes: number): string {
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
}
