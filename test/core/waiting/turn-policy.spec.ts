import { TurnPolicy } from '../../../lib/core/waiting/turn-policy';

describe('TurnPolicy', () => {
  /** A policy that lost a race, then won and released to `listeners` listeners (each in turn). */
  const wonAfterLoss = (...listeners: number[]) => {
    const turns = new TurnPolicy();
    turns.lostRace();
    turns.won();
    for (const count of listeners) turns.released(count);
    return turns;
  };

  it('never holds back before others wanted the lock: no race lost, no release heard by others', () => {
    const turns = new TurnPolicy();
    expect(turns.noticed()).toBeLessThan(0);
    turns.won();
    turns.released(1); // only its own subscription heard it
    for (let i = 0; i < 6; i++) expect(turns.noticed()).toBeLessThan(0);
    expect(turns.rotating).toBe(false);
  });

  it('takes turns once a release of its own was heard by others, without a lost race', () => {
    const turns = new TurnPolicy();
    turns.won();
    turns.released(3);
    expect(turns.rotating).toBe(true);
    expect([turns.noticed(), turns.noticed(), turns.noticed()]).toEqual([2, 1, 0]);
  });

  it('after a lost race, counts itself early until as many releases as other listeners were seen', () => {
    const turns = new TurnPolicy();
    turns.lostRace();
    // Not won since: nothing to give back.
    expect(turns.noticed()).toBeLessThan(0);
    turns.won();
    turns.released(4); // three other processes heard the release
    expect([turns.noticed(), turns.noticed(), turns.noticed()]).toEqual([3, 2, 1]);
    expect(turns.noticed()).toBe(0); // its turn
    expect(turns.noticed()).toBe(-1); // overdue
  });

  it('starts counting again at every win', () => {
    const turns = new TurnPolicy();
    turns.lostRace();
    turns.released(3);
    turns.won();
    expect(turns.noticed()).toBe(2);
    turns.won();
    expect([turns.noticed(), turns.noticed(), turns.noticed()]).toEqual([2, 1, 0]);
  });

  it('does not hold back when it was the only listener of its release', () => {
    const turns = wonAfterLoss(1);
    expect(turns.noticed()).toBe(0);
    expect(turns.noticed()).toBeLessThan(0);
  });

  it('uses the listener count of its latest release', () => {
    const turns = wonAfterLoss(5, 2);
    expect([turns.noticed(), turns.noticed()]).toEqual([1, 0]);
  });

  it('counts itself at most 8 releases early', () => {
    const turns = wonAfterLoss(50);
    expect(turns.noticed()).toBe(8);
  });

  /**
   * Processes that all heard every release, answering each notice in Redis' fixed delivery
   * order: the overdue first, then the one whose turn it is, then the held-back by how early
   * they are (their hold-backs are that many steps long); the first to try takes the lock.
   * Every `disturbEvery` releases, the due process is late and the first held-back one to try
   * takes the lock instead.
   */
  function simulate(processes: number, releases: number, disturbEvery: number): number[] {
    const turns = Array.from({ length: processes }, () => new TurnPolicy());
    const wins = turns.map(() => 0);
    let holder = 0;
    turns[holder].won();
    for (let release = 1; release <= releases; release++) {
      turns[holder].released(processes);
      const early = turns.map((policy) => policy.noticed());
      // Every process but the holder lost a race once already; the holder re-enters at last.
      let next = early
        .map((value, index) => ({ value, index }))
        .filter(({ index }) => index !== holder)
        .sort((a, b) => a.value - b.value || a.index - b.index)[0].index;
      if (release % disturbEvery === 0) {
        // The due process is late: the least early of the held-back ones tries first.
        const heldBack = early
          .map((value, index) => ({ value, index }))
          .filter(({ value, index }) => value > 0 && index !== holder)
          .sort((a, b) => a.value - b.value || a.index - b.index)[0];
        if (heldBack) next = heldBack.index;
      }
      for (const [index, policy] of turns.entries()) if (index !== next) policy.lostRace();
      turns[next].won();
      wins[next]++;
      holder = next;
    }
    return wins;
  }

  it('gives every process of 8 an even share of turns, also when hand-offs are disturbed', () => {
    for (const disturbEvery of [Infinity, 13, 5, 3]) {
      const wins = simulate(8, 800, disturbEvery);
      expect(wins.reduce((sum, count) => sum + count, 0)).toBe(800);
      // Were the disturbed races, and those between overdue and due processes, decided by
      // delivery order (the hold-back of one fixed length before), the turns would drift to the
      // processes first in that order: min/max 0.50 disturbing every 5th, 0 (starved) every 3rd.
      expect(Math.min(...wins) / Math.max(...wins)).toBeGreaterThanOrEqual(0.75);
    }
  });
});
