import { Injectable, type INestApplication } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Observable, of } from 'rxjs';
import {
  LeaderOnly,
  LockError,
  LockKeyError,
  LockLostError,
  LockOptionsError,
  LockService,
  MemoryLockStore,
  RedisLockModule,
} from '../../lib';
import { sleep } from '../../tools/time';

@Injectable()
class Scheduler {
  constructor(readonly locks: LockService) {}

  @LeaderOnly('scheduler')
  async tick(): Promise<string> {
    return Promise.resolve('ran');
  }
}

// The Nest side of leader election: when campaigns start and end, and what @LeaderOnly checks
// when it decorates. Elections themselves: test/behaviour/leader.spec.ts.
describe('leader election in the Nest lifecycle', () => {
  let app: INestApplication | undefined;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('campaigns start when the application has started, not before', async () => {
    const store = new MemoryLockStore();
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forTesting({ store })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    const leadership = app.get(LockService).leader('boot');
    await sleep(50);
    expect(leadership.isLeader).toBe(false);
    expect(store.remainingTtl({ kind: 'lock', key: 'boot', name: 'boot' })).toBeNull();
    await app.init();
    await leadership.whenLeader();
    expect(leadership.isLeader).toBe(true);
  });

  it('shutdown resigns before the engine stops: no wait for shutdownTimeout, no loss reported', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forTesting({ shutdownTimeout: 10_000 })],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const locks = app.get(LockService);
    const lost: LockLostError[] = [];
    locks.lockLost$.subscribe((error) => lost.push(error));
    const leadership = locks.leader('quick');
    await leadership.whenLeader();
    const { signal } = leadership;
    const started = performance.now();
    await app.close();
    app = undefined;
    expect(performance.now() - started).toBeLessThan(5_000); // not the 10 s shutdownTimeout
    expect(signal.aborted).toBe(true);
    expect(lost).toEqual([]);
  });

  it('after shutdown, leader() answers a closed leadership and @LeaderOnly skips', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RedisLockModule.forTesting()],
      providers: [Scheduler],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.init();
    const locks = app.get(LockService);
    const scheduler = app.get(Scheduler);
    await locks.leader('scheduler').whenLeader();
    await app.close();
    app = undefined;
    expect(locks.leader('scheduler').isLeader).toBe(false);
    await expect(locks.leader('scheduler').whenLeader()).rejects.toBeInstanceOf(LockError);
    expect(await scheduler.tick()).toBeUndefined();
  });

  it('@LeaderOnly refuses a bad name, a static method and an Observable method when decorating', () => {
    expect(() => LeaderOnly('')).toThrow(LockKeyError);
    expect(() => LeaderOnly('{}x')).toThrow(LockKeyError);
    expect(() => {
      class Static {
        @LeaderOnly('s')
        static run(): Promise<void> {
          return Promise.resolve();
        }
      }
      return Static;
    }).toThrow(LockOptionsError);
    expect(() => {
      class Streams {
        @LeaderOnly('s')
        run(): Observable<number> {
          return of(1);
        }
      }
      return Streams;
    }).toThrow(LockOptionsError);
  });
});
