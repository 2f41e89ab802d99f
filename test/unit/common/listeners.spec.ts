import { Listeners } from '../../../src/common/listeners';

class Pings extends Listeners<[string, number]> {
  record(name: string, n: number): void {
    this.notify(name, n);
  }
}

describe('Listeners', () => {
  it('calls every subscriber in order with the arguments, and not after it unsubscribed', () => {
    const pings = new Pings();
    const seen: string[] = [];
    const stopA = pings.subscribe((name, n) => seen.push(`a:${name}:${n}`));
    pings.subscribe((name, n) => seen.push(`b:${name}:${n}`));
    pings.record('x', 1);
    stopA();
    pings.record('y', 2);
    expect(seen).toEqual(['a:x:1', 'b:x:1', 'b:y:2']);
  });

  it('a listener that unsubscribes while called does not disturb the others of that call', () => {
    const pings = new Pings();
    const seen: string[] = [];
    const stop = pings.subscribe(() => {
      seen.push('a');
      stop();
    });
    pings.subscribe(() => seen.push('b'));
    pings.record('x', 1);
    pings.record('y', 2);
    expect(seen).toEqual(['a', 'b', 'b']);
  });
});
