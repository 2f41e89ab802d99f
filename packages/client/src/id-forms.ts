import { toSafeNumber } from './safe-number';

/**
 * The other forms of the client's IDs, over its bigint methods: decimal strings (exact, as on the
 * wire) and JavaScript numbers (yitter's NextNumber). The number forms reject with a RangeError,
 * never round, when an ID is above 2^53 - 1 (that ID is then a gap): use them with
 * SNOWFLAKE_LAYOUT=js-safe, or for queue and segment IDs known to stay below 2^53.
 */
export abstract class IdForms {
  abstract queueId(appId: number, gatePass: string): Promise<bigint>;
  abstract queueIdBatch(appId: number, gatePass: string, n: number): Promise<bigint[]>;
  abstract segmentId(tag: string): Promise<bigint>;
  abstract segmentIdBatch(tag: string, n: number): Promise<bigint[]>;
  abstract snowflakeId(key?: string): Promise<bigint>;
  abstract snowflakeIdBatch(key: string, n: number): Promise<bigint[]>;

  async queueIdString(appId: number, gatePass: string): Promise<string> {
    return (await this.queueId(appId, gatePass)).toString();
  }

  async queueIdBatchStrings(appId: number, gatePass: string, n: number): Promise<string[]> {
    return (await this.queueIdBatch(appId, gatePass, n)).map(String);
  }

  async segmentIdString(tag: string): Promise<string> {
    return (await this.segmentId(tag)).toString();
  }

  async segmentIdBatchStrings(tag: string, n: number): Promise<string[]> {
    return (await this.segmentIdBatch(tag, n)).map(String);
  }

  async snowflakeIdString(key = 'default'): Promise<string> {
    return (await this.snowflakeId(key)).toString();
  }

  async snowflakeIdBatchStrings(key: string, n: number): Promise<string[]> {
    return (await this.snowflakeIdBatch(key, n)).map(String);
  }

  async queueIdNumber(appId: number, gatePass: string): Promise<number> {
    return toSafeNumber(await this.queueId(appId, gatePass));
  }

  async queueIdBatchNumbers(appId: number, gatePass: string, n: number): Promise<number[]> {
    return (await this.queueIdBatch(appId, gatePass, n)).map(toSafeNumber);
  }

  async segmentIdNumber(tag: string): Promise<number> {
    return toSafeNumber(await this.segmentId(tag));
  }

  async segmentIdBatchNumbers(tag: string, n: number): Promise<number[]> {
    return (await this.segmentIdBatch(tag, n)).map(toSafeNumber);
  }

  async snowflakeIdNumber(key = 'default'): Promise<number> {
    return toSafeNumber(await this.snowflakeId(key));
  }

  async snowflakeIdBatchNumbers(key: string, n: number): Promise<number[]> {
    return (await this.snowflakeIdBatch(key, n)).map(toSafeNumber);
  }
}
