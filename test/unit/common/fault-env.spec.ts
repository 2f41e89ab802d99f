import { faultsFromEnv } from '../../chaos/support/fault-env';
import { NO_FAULTS } from '../../support/provider-overrides';

/** The chaos suite's entry point reads its injected faults from its environment (the service's own never does). */
describe('faultsFromEnv (chaos entry point)', () => {
  it('injects nothing when unset or empty', () => {
    expect(faultsFromEnv({})).toEqual(NO_FAULTS);
    expect(faultsFromEnv({ TEST_REFILL_DELAY_MS: ' ', TEST_CLOCK_OFFSET_MS: '' })).toEqual(NO_FAULTS);
  });

  it('reads TEST_REFILL_DELAY_MS and TEST_CLOCK_OFFSET_MS', () => {
    expect(faultsFromEnv({ TEST_REFILL_DELAY_MS: '1500', TEST_CLOCK_OFFSET_MS: '-60000' })).toEqual({
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
    expect(() => faultsFromEnv({ [name]: value })).toThrow(name);
  });
});
