import { NestFastifyApplication } from '@nestjs/platform-fastify';
import { TestEnv, createTestEnv, startApp } from '../../support/test-env';
import { pollUntil } from '../../support/poll';
import { bufferView } from './segment-test-helpers';

describe('scheduled leaf_alloc tag sync', () => {
  let env: TestEnv;
  let app: NestFastifyApplication;

  beforeAll(async () => {
    env = await createTestEnv('segsync');
    app = await startApp(env.config({ SEGMENT_SYNC_CRON: '* * * * * *' }));
  });

  afterAll(async () => {
    await app?.close();
    await env?.cleanup();
  });

  it('adds tags inserted into the table and drops deleted ones without any request for them', async () => {
    expect(await bufferView(app, 'synced')).toBeUndefined();
    await env.sql("INSERT INTO leaf_alloc (biz_tag, max_id, step) VALUES ('synced', 1, 10)");
    const added = await pollUntil('the tag to be added', () => bufferView(app, 'synced'));
    expect(added).toMatchObject({ key: 'synced', initOk: false });
    await env.sql("DELETE FROM leaf_alloc WHERE biz_tag = 'synced'");
    await pollUntil('the tag to be dropped', async () => (await bufferView(app, 'synced')) === undefined);
  });
});
