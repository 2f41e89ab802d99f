import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `id_alloc_retired`: the tombstone of a deleted queue app. `DELETE /admin/apps/{appId}` records
 * each shard's last `max_id` here (never lowering an earlier one) in the transaction that deletes
 * its `id_alloc` rows; `POST /admin/apps` re-creates the app's rows from these values, so a
 * re-created app resumes above every index it ever allocated. The reload's list cleanup only ever
 * deletes Redis lists of the (app, shard) pairs found here and not in `id_alloc`.
 */
export class CreateIdAllocRetired1763770600000 implements MigrationInterface {
  name = 'CreateIdAllocRetired1763770600000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`id_alloc_retired\` (
        \`app_id\` int(11) NOT NULL COMMENT 'id_alloc.app_id of a deleted app',
        \`shard_id\` int(11) NOT NULL COMMENT 'id_alloc.shard_id',
        \`max_id\` bigint(20) NOT NULL COMMENT 'highest index ever allocated to (app, shard)',
        \`deleted_at\` datetime NOT NULL DEFAULT CURRENT_TIMESTAMP COMMENT 'time of the last delete',
        PRIMARY KEY (\`app_id\`,\`shard_id\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='shardleaf: tombstones of deleted queue apps'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP TABLE IF EXISTS `id_alloc_retired`');
  }
}
