import { FAIR_ACQUIRE } from '../../../../lib/stores/redis/scripts/fair';
import { ACQUIRE, decodeAcquire, RELEASE } from '../../../../lib/stores/redis/scripts/plain';
import { SEMAPHORE_RELEASE } from '../../../../lib/stores/redis/scripts/permit';
import { scriptCall } from '../../../../lib/stores/redis/scripts/script-definition';

const request = {
  kind: 'lock' as const,
  key: 'k',
  name: 'k',
  owner: 'c:1',
  leaseTime: 30_000,
  fencing: false,
};

/** The layouts the scripts' headers describe: KEYS first (numKeys of them), then ARGV. */
describe('script definitions', () => {
  it('lay out acquire.lua: the hash; lease, owner', () => {
    const call = scriptCall(ACQUIRE, request, 'publish');
    expect([call.numKeys, call.keysAndArgs]).toEqual([1, ['k', 30_000, 'c:1']]);
  });

  it('lay out release.lua one way: the channel a key with SPUBLISH, else an argument', () => {
    const classic = scriptCall(RELEASE, request, 'latch', 'publish');
    expect([classic.numKeys, classic.keysAndArgs]).toEqual([
      2,
      ['k', 'latch', 'c:1', 10_000, 'publish', 'redisson_lock__channel:{k}'],
    ]);
    const sharded = scriptCall(RELEASE, request, 'latch', 'spublish');
    expect([sharded.numKeys, sharded.keysAndArgs]).toEqual([
      3,
      ['k', 'latch', 'redisson_lock__channel:{k}', 'c:1', 10_000, 'spublish', ''],
    ]);
  });

  it('lay out the other release scripts the same way (semaphore-release.lua)', () => {
    const hold = { ...request, kind: 'permit' as const, permits: 2 };
    expect(scriptCall(SEMAPHORE_RELEASE, hold, 'latch', 'spublish').keysAndArgs).toEqual([
      'k',
      '{k}:timeout',
      'latch',
      'redisson_sc:{k}',
      '',
      'c:1',
      10_000,
      2,
      'spublish',
    ]);
  });

  it('lay out fair-acquire.lua with the default place timeout and the queue flag', () => {
    const call = scriptCall(FAIR_ACQUIRE, { ...request, kind: 'fair', queue: false }, 'publish');
    expect(call.keysAndArgs.slice(call.numKeys)).toEqual([
      30_000,
      'c:1',
      5_000,
      '0',
      'redisson_lock__channel:{k}',
      'publish',
    ]);
  });

  it('decode replies: acquire.lua’s grant, token and refusal', () => {
    expect(decodeAcquire(0)).toEqual({ granted: true, fencingToken: undefined });
    expect(decodeAcquire(7)).toEqual({ granted: true, fencingToken: 7 });
    expect(decodeAcquire(-1)).toEqual({ granted: false, ttl: Infinity });
    expect(decodeAcquire(-1_002)).toEqual({ granted: false, ttl: 1_000 });
  });
});
