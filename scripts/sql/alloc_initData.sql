-- Seed 001's alloc_initData: creates the 64 shard rows of one app (max_id 0, so the first index
-- is 1; step from the column default, 1000). The admin API (POST /admin/apps) does the same.
-- Usage: mariadb shardleaf < scripts/sql/alloc_initData.sql, then CALL alloc_initData(1, 'test', 'demo');
DROP PROCEDURE IF EXISTS alloc_initData;
DELIMITER $
CREATE PROCEDURE alloc_initData(
IN appId INT(11),
IN appName VARCHAR(128),
IN description VARCHAR(255)
)
BEGIN
    DECLARE i INT DEFAULT 0;
    WHILE i<64 DO
        INSERT INTO id_alloc(app_id, app_name, max_id, shard_id, description) VALUES(appId,appName,0,i, description);
        SET i = i+1;
    END WHILE;
END $
DELIMITER ;
