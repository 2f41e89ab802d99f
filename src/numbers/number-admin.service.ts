import { Injectable, Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { NumberBufferView, NumberGenerator } from './core/number-generator';
import { storedPattern } from './stored-format';
import { NewNumberFormat, NumberFormatPatch, NumberFormatRepository, NumberFormatRow } from './number-format.repository';

/** A format on the wire; sequences as decimal strings. */
export interface NumberFormatView {
  key: string;
  pattern: string;
  reset: string;
  step: number;
  description: string | null;
  createTime: string;
  updateTime: string;
  /** The largest sequence of a period: 10^N - 1 (or 62^N - 1); the number after it answers NUMBER_EXHAUSTED. */
  capacity: string;
  /** Characters of every number. */
  length: number;
  /** The latest period allocated (any instance), its highest sequence and what is left of it. */
  latest: { period: string; maxSeq: string; left: string } | null;
  /** This instance's segments of the key, null when it has served none. */
  buffer: NumberBufferView | null;
}

export interface NumberFormatDetail extends NumberFormatView {
  /** The latest periods (newest first, at most 10) and their highest sequence. */
  periods: Array<{ period: string; maxSeq: string; updateTime: string }>;
}

/** The admin use cases of number formats. */
@Injectable()
export class NumberAdminService {
  private readonly logger = new Logger(NumberAdminService.name);

  constructor(
    private readonly repo: NumberFormatRepository,
    private readonly generator: NumberGenerator,
  ) {}

  /**
   * Creates a format; the same definition again answers 200, another one for an existing key 409.
   * A deleted key comes back only with its old pattern and reset (409 otherwise) and continues
   * above every sequence it allocated: no number is issued twice.
   */
  async create(format: NewNumberFormat): Promise<{ created: boolean; format: NumberFormatView }> {
    const outcome = await this.repo.create(format);
    if (outcome.kind === 'retired-differs') {
      const r = outcome.retired;
      throw new IdGenError(
        ErrorKind.Conflict,
        `number format '${format.key}' was deleted with pattern '${r.pattern}' and reset ${r.reset}; ` +
          'it can come back only with those (another pattern could print numbers issued before); use a new key',
      );
    }
    if (outcome.kind === 'overlaps') {
      const o = outcome.other;
      throw new IdGenError(
        ErrorKind.NumberTextOverlap,
        `pattern '${format.pattern}' can print the same text as number format '${o.key}' ` +
          `${o.deletedAt === null ? '' : `(deleted at ${o.deletedAt.toISOString()}) `}with pattern '${o.pattern}': ` +
          'numbers would repeat across the two keys; give this one its own literal prefix, or send "allowTextOverlap": true',
      );
    }
    if (outcome.kind === 'created') {
      this.generator.forgetMiss(format.key);
      if (outcome.resumed) {
        this.logger.log(`number format '${format.key}' re-created; its sequences continue where they were`);
      }
    }
    const row = await this.require(format.key);
    if (
      outcome.kind === 'exists' &&
      (storedPattern(row.pattern, row.key).source !== format.pattern ||
        row.reset !== format.reset ||
        row.step !== format.step ||
        row.description !== format.description)
    ) {
      throw new IdGenError(
        ErrorKind.Conflict,
        `number format '${format.key}' exists with pattern '${row.pattern}', reset ${row.reset} and step ${row.step}; ` +
          'use PATCH to change its step or description',
      );
    }
    return { created: outcome.kind === 'created', format: this.view(row) };
  }

  async list(): Promise<NumberFormatView[]> {
    return (await this.repo.findAll()).map((row) => this.view(row));
  }

  async get(key: string): Promise<NumberFormatDetail> {
    const row = await this.require(key);
    const periods = await this.repo.periods(key, 10);
    return {
      ...this.view(row),
      periods: periods.map((p) => ({ period: p.period, maxSeq: p.maxSeq.toString(), updateTime: p.updateTime.toISOString() })),
    };
  }

  /** A new step applies to the next allocation of every instance. */
  async update(key: string, patch: NumberFormatPatch): Promise<NumberFormatView> {
    await this.require(key);
    await this.repo.update(key, patch);
    return this.view(await this.require(key));
  }

  /**
   * Deletes the format (its sequences and a tombstone stay). This instance stops at once; the
   * others at their next allocation or clock reading (at most NUMBER_CLOCK_TRUST_MS).
   */
  async remove(key: string): Promise<{ key: string; deleted: true }> {
    if (!(await this.repo.delete(key))) {
      const retired = await this.repo.retired(key);
      throw new IdGenError(
        ErrorKind.NotFound,
        retired === null ? `no number format '${key}'` : `number format '${key}' was deleted at ${retired.deletedAt.toISOString()}`,
      );
    }
    this.generator.drop(key);
    return { key, deleted: true };
  }

  private async require(key: string): Promise<NumberFormatRow> {
    const row = await this.repo.find(key);
    if (!row) {
      throw new IdGenError(ErrorKind.NotFound, `no number format '${key}'`);
    }
    return row;
  }

  private view(row: NumberFormatRow): NumberFormatView {
    const pattern = storedPattern(row.pattern, row.key);
    const latest = row.latest;
    return {
      key: row.key,
      pattern: row.pattern,
      reset: row.reset,
      step: row.step,
      description: row.description,
      createTime: row.createTime.toISOString(),
      updateTime: row.updateTime.toISOString(),
      capacity: pattern.capacity.toString(),
      length: pattern.length,
      latest:
        latest === null
          ? null
          : {
              period: latest.period,
              maxSeq: latest.maxSeq.toString(),
              left: (latest.maxSeq >= pattern.capacity ? 0n : pattern.capacity - latest.maxSeq).toString(),
            },
      buffer: this.generator.view(row.key),
    };
  }
}
