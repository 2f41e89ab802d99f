import { MigrationInterface, QueryRunner } from 'typeorm';
import { CreateIdAllocNextProcedure1763770500000 } from './1763770500000-create-id-alloc-next-procedure';
import { replaceProcedure } from './support/replace-procedure';

/**
 * The allocation history of queue IDs (docs/id-history.md): one row per range of indexes an
 * (app, shard) allocated from `id_alloc` — refills and leases alike — with the database's UTC time,
 * written by `shardleaf_id_alloc_next` in the allocation's own transaction. Ranges of a shard are
 * disjoint and increase with time, so `(app_id, shard_id, to_index)` finds the range of an index
 * and `(app_id, shard_id, allocated_at)` the first range at or after a time. `allocated_at` alone
 * serves the retention (ID_HISTORY_RETENTION_DAYS).
 *
 * The procedure is redefined with one INSERT more; everything else is as in migration
 * 1763770500000 (INSERT IGNORE: a row already there, say from a hand-edited id_alloc, never fails
 * an allocation). On MariaDB in one statement (CREATE OR REPLACE): instances running meanwhile
 * never find it missing; on MySQL, DROP then CREATE (replaceProcedure).
 */
export class CreateIdAllocHistory1763771000000 implements MigrationInterface {
  name = 'CreateIdAllocHistory1763771000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`
      CREATE TABLE IF NOT EXISTS \`id_alloc_history\` (
        \`app_id\` int(11) NOT NULL,
        \`shard_id\` int(11) NOT NULL,
        \`from_index\` bigint(20) NOT NULL COMMENT 'first index of the range',
        \`to_index\` bigint(20) NOT NULL COMMENT 'last index of the range',
        \`allocated_at\` datetime(3) NOT NULL COMMENT 'UTC time of the allocation',
        PRIMARY KEY (\`app_id\`, \`shard_id\`, \`to_index\`),
        KEY \`idx_id_alloc_history_time\` (\`app_id\`, \`shard_id\`, \`allocated_at\`),
        KEY \`idx_id_alloc_history_retention\` (\`allocated_at\`)
      ) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COMMENT='shardleaf: when each queue index range was allocated'`);
    await replaceProcedure(
      queryRunner,
      'shardleaf_id_alloc_next',
      `(
        IN p_app_id INT, IN p_shard_id INT, IN p_min_wanted BIGINT,
        IN p_low_bits BIGINT, IN p_index_divisor BIGINT, IN p_max_index BIGINT)
      MODIFIES SQL DATA
      SQL SECURITY INVOKER
      COMMENT 'shardleaf: next segment of an id_alloc row in one round trip, recorded in id_alloc_history'
      BEGIN
        DECLARE v_found INT DEFAULT 1;
        DECLARE v_max_id BIGINT;
        DECLARE v_step INT;
        DECLARE v_limit BIGINT;
        DECLARE v_max_index BIGINT;
        DECLARE v_from BIGINT;
        DECLARE v_to BIGINT DEFAULT NULL;
        DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
        START TRANSACTION;
        SELECT max_id, step, max_limit_id INTO v_max_id, v_step, v_limit
          FROM id_alloc WHERE app_id = p_app_id AND shard_id = p_shard_id FOR UPDATE;
        IF v_found = 1 THEN
          IF v_step < 1 THEN
            SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'id_alloc.step must be >= 1';
          END IF;
          IF v_limit <= 0 THEN
            SET v_max_index = p_max_index;
          ELSEIF v_limit < p_low_bits THEN
            SET v_max_index = -1;
          ELSE
            SET v_max_index = LEAST((v_limit - p_low_bits) DIV p_index_divisor, p_max_index);
          END IF;
          IF v_max_id < v_max_index THEN
            SET v_to = LEAST(v_max_id + GREATEST(1, (p_min_wanted + v_step - 1) DIV v_step) * v_step, v_max_index);
            SET v_from = GREATEST(v_max_id + 1, 0);
            IF v_to >= v_from THEN
              UPDATE id_alloc SET max_id = v_to WHERE app_id = p_app_id AND shard_id = p_shard_id;
              INSERT IGNORE INTO id_alloc_history (app_id, shard_id, from_index, to_index, allocated_at)
                VALUES (p_app_id, p_shard_id, v_from, v_to, UTC_TIMESTAMP(3));
            ELSE
              SET v_to = NULL;
            END IF;
          END IF;
        END IF;
        COMMIT;
        SELECT v_found AS found, v_max_id AS old_max_id, v_to AS new_max_id, v_step AS step, v_limit AS max_limit_id;
      END`,
    );
  }

  /** The procedure as migration 1763770500000 defined it, and no history table. */
  async down(queryRunner: QueryRunner): Promise<void> {
    await new CreateIdAllocNextProcedure1763770500000().up(queryRunner);
    await queryRunner.query('DROP TABLE IF EXISTS `id_alloc_history`');
  }
}
