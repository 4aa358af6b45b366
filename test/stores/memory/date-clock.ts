/**
 * Imported first by the specs that fake timers: Jest's fake timers fake Date but not the
 * perf_hooks clock, so the store's clock is made to run on Date.
 */
jest.mock('../../../lib/time/clock', () => ({ now: () => Date.now() }));

export {};
