import { runInNewContext } from 'node:vm';
import { DASHBOARD_AMOUNTS_JS } from '../../../src/dashboard/dashboard-amounts';

interface Amounts {
  amount(digits: string | number): string;
  exact(digits: string | number): string;
}

/** The page's script, run as the browser runs it. */
const amounts = runInNewContext(`${DASHBOARD_AMOUNTS_JS}; Amounts`) as Amounts;

describe("the dashboard's amounts", () => {
  it.each([
    ['0', '0'],
    [300, '300'],
    ['19200', '19,200'],
    ['999999', '999,999'],
    ['1000000', '1 million'],
    ['1994999', '1.99 million'],
    ['1995000', '2 million'],
    ['1999999', '2 million'],
    ['4294967296', '4.29 billion'],
    ['999994999', '999.99 million'],
    ['999995000', '1 billion'],
    ['562949953421311', '562.95 trillion'],
    ['36028796968265896', '36.03 quadrillion'],
    ['9223372036854775807', '9.22 quintillion'],
    ['0001200', '1,200'],
    ['-', '-'],
  ])('shows %j as %j', (digits, shown) => {
    expect(amounts.amount(digits)).toBe(shown);
  });

  it('gives the exact value with separators, digit for digit (never through a number)', () => {
    expect(amounts.exact('9223372036854775807')).toBe('9,223,372,036,854,775,807');
    expect(amounts.exact(64)).toBe('64');
  });
});
