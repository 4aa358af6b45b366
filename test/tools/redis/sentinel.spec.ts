import { Redis } from 'ioredis';
import { suiteSentinel } from '../../support/suite-topology';

/** Self-tests of the Sentinel helper (tools/redis/sentinel.ts), on one shared set. */
describe('test helper: startSentinel()', () => {
  const suite = suiteSentinel();
  const readOn = async (port: number, key: string) => {
    const raw = new Redis({ host: '127.0.0.1', port });
    try {
      return await raw.get(key);
    } finally {
      raw.disconnect();
    }
  };

  it('client() writes to the primary the sentinels name', async () => {
    const { sentinel } = suite;
    await sentinel.client().set('topology:sentinel', 'written');
    expect(await readOn(await sentinel.primary(), 'topology:sentinel')).toBe('written');
  });

  it('after killPrimary() the replica becomes primary and the client writes again', async () => {
    const { sentinel } = suite;
    const client = sentinel.client();
    await client.set('topology:before', '1');
    // Replication is asynchronous: the replica must have the write before the primary dies.
    expect(await client.wait(1, 5_000)).toBe(1);
    const old = await sentinel.killPrimary();
    const replica = sentinel.nodes().find((node) => node.kind === 'data' && node.port !== old)!;
    expect(await sentinel.waitForNewPrimary(old)).toBe(replica.port);
    expect(await sentinel.primary()).toBe(replica.port);
    await client.set('topology:after', '2');
    expect(await readOn(replica.port, 'topology:after')).toBe('2');
    expect(await readOn(replica.port, 'topology:before')).toBe('1');
  }, 20_000);
});
