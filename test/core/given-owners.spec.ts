import { GivenOwners } from '../../lib/core/given-owners';

describe('GivenOwners', () => {
  it('marks an attempt superseded once a newer attempt of its owner id is sent', () => {
    const owners = new GivenOwners();
    const first = owners.sent('a');
    expect(owners.superseded('a', first)).toBe(false);
    const second = owners.sent('a');
    expect(owners.superseded('a', first)).toBe(true);
    expect(owners.superseded('a', second)).toBe(false);
    // Another owner id is its own.
    expect(owners.superseded('b', first)).toBe(false);
  });

  it('keeps an owner id while any attempt of it is in flight, and forgets it after', () => {
    const owners = new GivenOwners();
    const first = owners.sent('a');
    owners.sent('a');
    owners.settled('a'); // the newer one answered; the first (timed out) is still out
    expect(owners.superseded('a', first)).toBe(true);
    owners.settled('a');
    expect(owners.size).toBe(0);
    // Nothing newer is known any more: a cleanup of the first may free what it got.
    expect(owners.superseded('a', first)).toBe(false);
  });
});
