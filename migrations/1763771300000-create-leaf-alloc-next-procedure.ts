import { MigrationInterface, QueryRunner } from 'typeorm';
import { replaceProcedure } from './support/replace-procedure';

/**
 * `shardleaf_leaf_alloc_next`: one segment fetch or lease of a `leaf_alloc` tag in one round trip
 * (`CALL`), with its range recorded in `leaf_alloc_history` in the same transaction, instead of
 * START TRANSACTION / UPDATE / SELECT / INSERT / COMMIT sent statement by statement: the whole
 * transaction runs in the server, so the tag's row lock is not held across network round trips.
 *
 * Parameters: the tag; the mode: 0 = `max_id + step` (a fetch), 1 = `max_id + GREATEST(step, n)`
 * (a fetch with the dynamic step), 2 = `max_id + n` only when `max_id >= 1` (a lease); and `n`.
 * Result, one row: `found` (0 = no such row, 2 = a lease refused because max_id is below 1),
 * `tag` (as stored), `max_id` (after the fetch; unchanged when refused), `step` (the row's).
 * The range is Leaf's: a fetch that moved max_id from M to M + a owns M .. M + a - 1, recorded
 * from 1 at the lowest (INSERT IGNORE: a row already there never fails the allocation).
 * LeafAllocRepository and LeafAllocLeaseRepository fall back to their statement-by-statement
 * transactions when the procedure (or its history table) is missing.
 *
 * The tag parameter has the character set, collation and length of `leaf_alloc.biz_tag` as it
 * stands (Leaf's DDL makes it utf8, ours the database default): a parameter of another character
 * set would make `biz_tag = p_tag` compare converted values, which uses no index, and the locking
 * read would lock every row of the table. The repositories call it only for ASCII tags (which
 * every such character set holds as they are); other tags take the statement-by-statement path.
 * A later ALTER of the column's character set needs this migration's `up` run again.
 */
export class CreateLeafAllocNextProcedure1763771300000 implements MigrationInterface {
  name = 'CreateLeafAllocNextProcedure1763771300000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const columns = (await queryRunner.query(
      'SELECT CHARACTER_MAXIMUM_LENGTH AS len, CHARACTER_SET_NAME AS cs, COLLATION_NAME AS coll FROM information_schema.COLUMNS ' +
        "WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'leaf_alloc' AND COLUMN_NAME = 'biz_tag'",
    )) as Array<{ len: number | string; cs: string; coll: string }>;
    const column = columns[0];
    if (!column || !/^[a-z0-9_]+$/i.test(column.cs) || !/^[a-z0-9_]+$/i.test(column.coll)) {
      throw new Error('leaf_alloc.biz_tag not found (or of an unexpected character set): cannot define shardleaf_leaf_alloc_next');
    }
    const tagType = `VARCHAR(${Number(column.len)}) CHARACTER SET ${column.cs} COLLATE ${column.coll}`;
    await replaceProcedure(
      queryRunner,
      'shardleaf_leaf_alloc_next',
      `(IN p_tag ${tagType}, IN p_mode INT, IN p_n BIGINT)
      MODIFIES SQL DATA
      SQL SECURITY INVOKER
      COMMENT 'shardleaf: next segment or lease of a leaf_alloc tag in one round trip, recorded in leaf_alloc_history'
      BEGIN
        DECLARE v_found INT DEFAULT 1;
        DECLARE v_tag VARCHAR(${Number(column.len)}) CHARACTER SET ${column.cs} DEFAULT NULL;
        DECLARE v_max_id BIGINT;
        DECLARE v_step INT;
        DECLARE v_add BIGINT DEFAULT NULL;
        DECLARE CONTINUE HANDLER FOR NOT FOUND SET v_found = 0;
        DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
        START TRANSACTION;
        SELECT biz_tag, max_id, step INTO v_tag, v_max_id, v_step FROM leaf_alloc WHERE biz_tag = p_tag FOR UPDATE;
        IF v_found = 1 AND p_mode = 2 AND v_max_id < 1 THEN
          SET v_found = 2;
        END IF;
        IF v_found = 1 THEN
          SET v_add = CASE p_mode WHEN 0 THEN v_step WHEN 1 THEN GREATEST(v_step, p_n) ELSE p_n END;
          UPDATE leaf_alloc SET max_id = max_id + v_add WHERE biz_tag = p_tag;
          SET v_max_id = v_max_id + v_add;
          IF v_max_id - 1 >= GREATEST(v_max_id - v_add, 1) THEN
            INSERT IGNORE INTO leaf_alloc_history (biz_tag, from_id, to_id, allocated_at)
              VALUES (v_tag, GREATEST(v_max_id - v_add, 1), v_max_id - 1, UTC_TIMESTAMP(3));
          END IF;
        END IF;
        COMMIT;
        SELECT v_found AS found, v_tag AS tag, v_max_id AS max_id, v_step AS step;
      END`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query('DROP PROCEDURE IF EXISTS `shardleaf_leaf_alloc_next`');
  }
}
