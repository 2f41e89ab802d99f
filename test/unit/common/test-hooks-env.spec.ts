import { NO_TEST_HOOKS } from '../../../src/common/test-hooks';
import { testHooksFromEnv } from '../../chaos/support/test-hooks-env';

/** The chaos suite's entry point reads the test hooks from its environment (the service's own never does). */
describe('testHooksFromEnv (chaos entry point)', () => {
  it('leaves every hook off when unset or empty', () => {
    expect(testHooksFromEnv({})).toEqual(NO_TEST_HOOKS);
    expect(testHooksFromEnv({ TEST_REFILL_DELAY_MS: ' ', TEST_CLOCK_OFFSET_MS: '' })).toEqual(NO_TEST_HOOKS);
  });

  it('reads TEST_REFILL_DELAY_MS and TEST_CLOCK_OFFSET_MS', () => {
    expect(testHooksFromEnv({ TEST_REFILL_DELAY_MS: '1500', TEST_CLOCK_OFFSET_MS: '-60000' })).toEqual({
      refillDelayMs: 1500,
      clockOffsetMs: -60000,
    });
  });

  it.each([
    ['TEST_REFILL_DELAY_MS', '1.5'],
    ['TEST_REFILL_DELAY_MS', '-1'],
    ['TEST_REFILL_DELAY_MS', '600001'],
    ['TEST_CLOCK_OFFSET_MS', 'behind'],
    ['TEST_CLOCK_OFFSET_MS', '86400001'],
  ])('refuses %s=%j with an error naming the variable', (name, value) => {
    expect(() => testHooksFromEnv({ [name]: value })).toThrow(name);
  });
});
