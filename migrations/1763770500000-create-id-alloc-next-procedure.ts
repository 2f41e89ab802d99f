import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `shardleaf_id_alloc_next`: one refill's allocation in one round trip (`CALL`), instead of
 * START TRANSACTION / SELECT … FOR UPDATE / UPDATE / COMMIT (four). Same transaction, same row
 * lock, same arithmetic as `planSegment` + `maxIndexFor` (refill-policy.ts, queue-id-layout.ts);
 * the bit layout comes in as parameters so it stays defined in TypeScript only.
 *
 * Parameters: app id, shard id, indexes wanted (≥ 1 whole step, as many whole steps as needed),
 * the shard's low ID bits (`shard << 8 | appId`), 2^14 (the index shift as a divisor) and the
 * largest index (2^49 - 1). Result, one row: `found` (0 = no such row), `old_max_id`,
 * `new_max_id` (NULL = nothing left under max_limit_id), `step`, `max_limit_id`.
 * IdAllocRepository checks the range against planSegment and falls back to the four-statement
 * transaction when the procedure is missing (a database made by the seed's DDL, not migrated).
 */
export class CreateIdAllocNextProcedure1763770500000 implements MigrationInterface {
  name = 'CreateIdAllocNextProcedure1763770500000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP PROCEDURE IF EXISTS `shardleaf_id_alloc_next`');
    await queryRunner.query(`
      CREATE PROCEDURE \`shardleaf_id_alloc_next\`(
        IN p_app_id INT, IN p_shard_id INT, IN p_min_wanted BIGINT,
        IN p_low_bits BIGINT, IN p_index_divisor BIGINT, IN p_max_index BIGINT)
      MODIFIES SQL DATA
      SQL SECURITY INVOKER
      COMMENT 'shardleaf: next segment of an id_alloc row in one round trip'
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
            ELSE
              SET v_to = NULL;
            END IF;
          END IF;
        END IF;
        COMMIT;
        SELECT v_found AS found, v_max_id AS old_max_id, v_to AS new_max_id, v_step AS step, v_limit AS max_limit_id;
      END`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP PROCEDURE IF EXISTS `shardleaf_id_alloc_next`');
  }
}
