/** DI tokens of the snowflake feature. */
export const SNOWFLAKE_CLOCK = Symbol('SNOWFLAKE_CLOCK');
/** The WorkerIdRegistry of SNOWFLAKE_MODE, or null when the mode is `off`. */
export const WORKER_ID_REGISTRY = Symbol('WORKER_ID_REGISTRY');
/** The clock the snowflake feature reads (the system clock; a test may replace it). */
export const SNOWFLAKE_BASE_CLOCK = Symbol('SNOWFLAKE_BASE_CLOCK');
