import { Injectable, Logger } from '@nestjs/common';
import { ErrorKind, IdGenError } from '../common/id-gen.error';
import { SegmentBufferView } from './core/segment-buffer';
import { SegmentIdGenerator } from './core/segment-id-generator';
import { LeafAllocPatch, LeafAllocRepository, LeafAllocRow, NewLeafAlloc } from './leaf-alloc.repository';
import { SegmentService } from './segment.service';

/** A `leaf_alloc` row on the wire (Leaf's `/db` page); BIGINTs as decimal strings. */
export interface TagRowView {
  tag: string;
  maxId: string;
  step: number;
  description: string | null;
  updateTime: string;
}

export interface TagView extends TagRowView {
  /** This instance's double buffer of the tag (Leaf's `/cache` line), null when not cached yet. */
  buffer: SegmentBufferView | null;
}

/** The admin use cases over `leaf_alloc` and this instance's buffers. */
@Injectable()
export class SegmentAdminService {
  private readonly logger = new Logger(SegmentAdminService.name);

  constructor(
    private readonly repo: LeafAllocRepository,
    private readonly generator: SegmentIdGenerator,
    private readonly service: SegmentService,
  ) {}

  /**
   * Creates a tag; the same tag again with the same step and description is a no-op, else 409.
   * A tag deleted before never restarts below its old `max_id`: an omitted maxId resumes there,
   * an explicit lower one is refused (409), so no ID it issued is issued again.
   */
  async create(alloc: NewLeafAlloc): Promise<{ created: boolean; tag: TagView }> {
    this.service.assertEnabled();
    const outcome = await this.repo.create(alloc);
    if (outcome.kind === 'below-retired') {
      const n = outcome.retiredMaxId;
      throw new IdGenError(
        ErrorKind.Conflict,
        `tag '${alloc.tag}' was deleted at max_id ${n}; create it with maxId ≥ ${n} or omit maxId`,
      );
    }
    const created = outcome.kind === 'created';
    if (created && outcome.resumedFrom !== null) {
      this.logger.log(`tag '${alloc.tag}' re-created; it resumes at its retired max_id ${outcome.resumedFrom}`);
    }
    const row = await this.repo.find(alloc.tag);
    if (!row) {
      throw new IdGenError(ErrorKind.Conflict, `tag '${alloc.tag}' was deleted while being created; retry`);
    }
    if (!created && (row.step !== alloc.step || row.description !== alloc.description)) {
      throw new IdGenError(
        ErrorKind.Conflict,
        `tag '${row.tag}' already exists with step ${row.step}; use PATCH to change its step or description`,
      );
    }
    await this.syncQuietly();
    return { created, tag: this.tagView(row) };
  }

  async list(): Promise<TagView[]> {
    this.service.assertEnabled();
    return (await this.repo.findAll()).map((row) => this.tagView(row));
  }

  async get(tag: string): Promise<TagView> {
    this.service.assertEnabled();
    return this.tagView(await this.require(tag));
  }

  /** A new step takes effect at the tag's next fetch (on every instance). */
  async update(tag: string, patch: LeafAllocPatch): Promise<TagView> {
    this.service.assertEnabled();
    await this.require(tag);
    const row = await this.repo.update(tag, patch);
    if (!row) {
      throw notFound(tag);
    }
    return this.tagView(row);
  }

  /**
   * Deletes the row and records its max_id in leaf_alloc_retired (see create); every instance
   * drops the tag at its next sync (this one at once). A second delete answers 404.
   */
  async remove(tag: string): Promise<{ tag: string; deleted: true }> {
    this.service.assertEnabled();
    if ((await this.repo.delete(tag)) === null) {
      const retired = await this.repo.retiredMaxId(tag);
      if (retired !== null) {
        throw new IdGenError(ErrorKind.NotFound, `tag '${tag}' is not in leaf_alloc (it was deleted at max_id ${retired})`);
      }
      throw notFound(tag);
    }
    await this.syncQuietly();
    return { tag, deleted: true };
  }

  /** Leaf's `/cache`: every buffer of this instance. */
  cache(): { initialised: boolean; buffers: SegmentBufferView[] } {
    this.service.assertEnabled();
    return { initialised: this.generator.isInitialised, buffers: this.generator.views() };
  }

  /** Leaf's `/db`: the table as it stands. */
  async db(): Promise<TagRowView[]> {
    this.service.assertEnabled();
    return (await this.repo.findAll()).map(rowView);
  }

  private async require(tag: string): Promise<LeafAllocRow> {
    const row = await this.repo.find(tag);
    if (!row) {
      throw notFound(tag);
    }
    return row;
  }

  private tagView(row: LeafAllocRow): TagView {
    return { ...rowView(row), buffer: this.generator.view(row.tag) };
  }

  /** The table change is done; a failed sync here only delays this instance's view of it. */
  private async syncQuietly(): Promise<void> {
    try {
      await this.generator.sync();
    } catch (err) {
      this.logger.warn(`leaf_alloc sync after an admin change failed: ${(err as Error).message}`);
    }
  }
}

function rowView(row: LeafAllocRow): TagRowView {
  return {
    tag: row.tag,
    maxId: row.maxId.toString(),
    step: row.step,
    description: row.description,
    updateTime: row.updateTime.toISOString(),
  };
}

function notFound(tag: string): IdGenError {
  return new IdGenError(ErrorKind.NotFound, `tag '${tag}' is not in leaf_alloc`);
}
