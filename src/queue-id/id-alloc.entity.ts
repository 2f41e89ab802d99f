import { Column, Entity, PrimaryColumn } from 'typeorm';

/** A row of `id_alloc`: one per (app, shard). BIGINTs are strings, never numbers. */
@Entity({ name: 'id_alloc' })
export class IdAllocEntity {
  @PrimaryColumn({ name: 'app_id', type: 'int' })
  appId!: number;

  @PrimaryColumn({ name: 'shard_id', type: 'int' })
  shardId!: number;

  @Column({ name: 'app_name', type: 'varchar', length: 128 })
  appName!: string;

  @Column({ name: 'max_id', type: 'bigint', default: '1' })
  maxId!: string;

  @Column({ name: 'step', type: 'int', default: 1000 })
  step!: number;

  @Column({ name: 'description', type: 'varchar', length: 255, nullable: true })
  description!: string | null;

  @Column({ name: 'create_time', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  createTime!: Date;

  @Column({ name: 'update_time', type: 'datetime', default: () => 'CURRENT_TIMESTAMP' })
  updateTime!: Date;

  @Column({ name: 'max_limit_id', type: 'bigint', default: '0' })
  maxLimitId!: string;
}
