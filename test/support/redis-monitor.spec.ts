import { monitorServer, type MonitoredCommand } from './redis-monitor';
import { suiteRedis } from './suite-redis';

/** Waits until a command `seen` holds has `args` (MONITOR's socket may deliver it after the reply). */
async function sees(seen: MonitoredCommand[], args: string[]): Promise<void> {
  const found = () => seen.some((command) => JSON.stringify(command.args) === JSON.stringify(args));
  for (let waited = 0; !found() && waited < 5_000; waited += 5) {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  expect(seen.map((command) => command.args)).toContainEqual(args);
}

// The MONITOR reader the declared-keys watch and the renewal tests use.
describe('monitorServer', () => {
  const server = suiteRedis();

  it('starts while another connection runs commands without pause, and sees them', async () => {
    // ioredis' monitor() failed its start here ("Command queue state error"), most often on the
    // first try: a PING line came in the same chunk as MONITOR's +OK.
    const busy = server.redis.client();
    let running = true;
    const traffic = (async () => {
      while (running) await Promise.all([busy.ping(), busy.ping(), busy.ping()]);
    })();
    try {
      for (let i = 0; i < 30; i++) {
        const seen: MonitoredCommand[] = [];
        const monitor = await monitorServer(server.raw, (command) => seen.push(command));
        await busy.echo(`after start ${i}`);
        await sees(seen, ['echo', `after start ${i}`]);
        monitor.close();
      }
    } finally {
      running = false;
      await traffic;
      busy.disconnect();
    }
  });

  it('gives each argument as sent, and marks the commands a script ran as lua', async () => {
    const seen: MonitoredCommand[] = [];
    const monitor = await monitorServer(server.raw, (command) => seen.push(command));
    const key = 'k "q" \\ \n\r\t\x07\b\x00\x7f é €';
    try {
      await server.raw.set(key, 'v v');
      await server.raw.eval("return redis.call('get', KEYS[1])", 1, key);
      await server.raw.ping(); // MONITOR shows commands in order: this one comes last
      await sees(seen, ['ping']);
    } finally {
      monitor.close();
    }
    expect(seen.map(({ source, args }) => [source === 'lua' ? 'lua' : 'client', ...args])).toEqual([
      ['client', 'set', key, 'v v'],
      ['client', 'eval', "return redis.call('get', KEYS[1])", '1', key],
      ['lua', 'get', key],
      ['client', 'ping'],
    ]);
    expect(seen[0].source).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(seen[0].time).toMatch(/^\d+\.\d{6}$/);
  });
});
