/** DI tokens of the snowflake feature. */
export const SNOWFLAKE_CLOCK = Symbol('SNOWFLAKE_CLOCK');
/** The WorkerIdRegistry of SNOWFLAKE_MODE, or null when the mode is `off`. */
export const WORKER_ID_REGISTRY = Symbol('WORKER_ID_REGISTRY');
