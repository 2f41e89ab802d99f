import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A row of Leaf's `leaf_alloc`: one per biz_tag. BIGINTs are strings, never numbers. */
@Entity({ name: 'leaf_alloc' })
export class LeafAllocEntity {
  @PrimaryColumn({ name: 'biz_tag', type: 'varchar', length: 128, default: '' })
  bizTag!: string;

  @Column({ name: 'max_id', type: 'bigint', default: '1' })
  maxId!: string;

  @Column({ name: 'step', type: 'int' })
  step!: number;

  @Column({ name: 'description', type: 'varchar', length: 256, nullable: true })
  description!: string | null;

  @Column({ name: 'update_time', type: 'timestamp', default: () => 'CURRENT_TIMESTAMP' })
  updateTime!: Date;
}
