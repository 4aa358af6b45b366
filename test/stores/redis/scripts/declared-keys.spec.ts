import { LockScripts } from '../../../../lib/stores/redis/lock-scripts';
import { UNDECLARED_ALLOWED, watchDeclaredKeys } from '../../../support/declared-keys';
import { suiteRedis } from '../../../support/suite-redis';

/** Dragonfly's per-script permission to touch keys not in KEYS (its first line). */
const DRAGONFLY_FLAG = '--!df flags=allow-undeclared-keys';

describe('scripts declare the keys they touch (servers that check KEYS: Dragonfly, some proxies)', () => {
  const server = suiteRedis();

  it('finds a key a script touches without declaring it (the check the behavioural suites run)', async () => {
    const watch = await watchDeclaredKeys(server.raw, true);
    await server.raw.eval(
      "redis.call('set', KEYS[1], 1) return redis.call('get', ARGV[1])",
      1,
      'k:declared',
      'k:not',
    );
    await server.raw
      .evalsha(LockScripts.acquire.sha, 1, 'k:lock', 1_000, 'owner:1')
      .catch(async () =>
        server.raw.eval(LockScripts.acquire.source, 1, 'k:lock', 1_000, 'owner:1'),
      );
    expect(await watch.stop()).toEqual([
      { script: 'not a library script', command: 'get', key: 'k:not' },
    ]);
  });

  it("carries Dragonfly's allow-undeclared-keys flag exactly on the scripts allowed undeclared keys", () => {
    const flagged = Object.entries(LockScripts)
      .filter(([, lua]) => lua.source.startsWith(`${DRAGONFLY_FLAG}\n`))
      .map(([name]) => name)
      .sort();
    // renewOnNode declares no keys at all: its keys span slots of one Cluster master.
    expect(flagged).toEqual([...Object.keys(UNDECLARED_ALLOWED), 'renewOnNode'].sort());
  });
});
