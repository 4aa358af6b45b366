import { TurnPolicy } from '../../lib/engine/waiting/turn-policy';

describe('TurnPolicy', () => {
  it('never holds back before a race was lost, whatever it won or released', () => {
    const turns = new TurnPolicy();
    expect(turns.noticed()).toBe(false);
    turns.won();
    turns.released(5);
    for (let i = 0; i < 6; i++) expect(turns.noticed()).toBe(false);
  });

  it('after a lost race, holds back until as many releases as other listeners were seen', () => {
    const turns = new TurnPolicy();
    turns.lostRace();
    // Not won since: nothing to give back.
    expect(turns.noticed()).toBe(false);
    turns.won();
    turns.released(4); // three other processes heard the release
    expect([turns.noticed(), turns.noticed(), turns.noticed()]).toEqual([true, true, true]);
    expect(turns.noticed()).toBe(false);
    expect(turns.noticed()).toBe(false);
  });

  it('starts counting again at every win', () => {
    const turns = new TurnPolicy();
    turns.lostRace();
    turns.released(3);
    turns.won();
    expect(turns.noticed()).toBe(true);
    turns.won();
    expect([turns.noticed(), turns.noticed(), turns.noticed()]).toEqual([true, true, false]);
  });

  it('does not hold back when it was the only listener of its release', () => {
    const turns = new TurnPolicy();
    turns.lostRace();
    turns.won();
    turns.released(1);
    expect(turns.noticed()).toBe(false);
  });

  it('uses the listener count of its latest release', () => {
    const turns = new TurnPolicy();
    turns.lostRace();
    turns.won();
    turns.released(5);
    turns.released(2);
    expect([turns.noticed(), turns.noticed()]).toEqual([true, false]);
  });
});
