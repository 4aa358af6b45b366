import { Controller, Get, Inject, Injectable, Module, Scope } from '@nestjs/common';
import { ContextIdFactory, LazyModuleLoader, REQUEST } from '@nestjs/core';
import request from 'supertest';
import { LockService, Locked } from '../../lib';
import { lockApp } from '../support/lock-app';
import { suiteRedis } from '../support/suite-redis';

/** Every locked method answers how deep its own application's LockService holds the key. */
@Injectable()
abstract class Probe {
  constructor(protected readonly locks: LockService) {}

  protected depth(key: string): number {
    return this.locks.holdCount(key);
  }
}

@Injectable({ scope: Scope.REQUEST })
class RequestInfo {
  constructor(@Inject(REQUEST) readonly request: unknown) {}
}

/** Request-scoped because it injects a request-scoped provider. */
@Controller('implicit')
class ImplicitRequestController extends Probe {
  constructor(
    locks: LockService,
    readonly info: RequestInfo,
  ) {
    super(locks);
  }

  @Get()
  @Locked('scope:implicit')
  async handle() {
    return Promise.resolve({ depth: this.depth('scope:implicit') });
  }
}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedService extends Probe {
  @Locked('scope:request')
  async work() {
    return Promise.resolve(this.depth('scope:request'));
  }
}

@Injectable({ scope: Scope.TRANSIENT })
class TransientService extends Probe {
  @Locked('scope:transient')
  async work() {
    return Promise.resolve(this.depth('scope:transient'));
  }
}

@Injectable()
class TransientUser {
  constructor(readonly transient: TransientService) {}
}

@Injectable()
class LazyService extends Probe {
  @Locked('scope:lazy')
  async work() {
    return Promise.resolve(this.depth('scope:lazy'));
  }
}

@Module({ providers: [LazyService] })
class LazyFeatureModule {}

@Injectable()
class SingletonService extends Probe {
  @Locked('scope:singleton:<0>')
  async work(id: string) {
    return Promise.resolve(this.depth(`scope:singleton:${id}`));
  }
}

describe('@Locked in every provider scope', () => {
  const server = suiteRedis();

  async function start() {
    const { app } = await lockApp(
      server.redis,
      {},
      {
        controllers: [ImplicitRequestController],
        providers: [
          RequestInfo,
          RequestScopedService,
          TransientService,
          TransientUser,
          SingletonService,
        ],
      },
    );
    return server.closing(app);
  }

  it('locks in a controller made request-scoped by its dependency', async () => {
    const app = await start();
    const response = await request(app.getHttpServer()).get('/implicit').expect(200);
    expect(response.body).toEqual({ depth: 1 });
  });

  it('locks in an explicitly request-scoped provider', async () => {
    const app = await start();
    const contextId = ContextIdFactory.create();
    app.registerRequestByContextId({}, contextId);
    const service = await app.resolve(RequestScopedService, contextId);
    await expect(service.work()).resolves.toBe(1);
  });

  it('locks in a transient provider, injected or resolved', async () => {
    const app = await start();
    await expect(app.get(TransientUser).transient.work()).resolves.toBe(1);
    await expect((await app.resolve(TransientService)).work()).resolves.toBe(1);
  });

  it('locks in a provider of a module loaded with LazyModuleLoader', async () => {
    const app = await start();
    const lazy = await app.get(LazyModuleLoader).load(() => LazyFeatureModule);
    await expect(lazy.get(LazyService).work()).resolves.toBe(1);
  });

  it('keeps two applications in one process apart', async () => {
    const [first, second] = [await start(), await start()];
    const [a, b] = [first.get(SingletonService), second.get(SingletonService)];
    expect(a).not.toBe(b);
    // Each instance locks through its own application's LockService: depth 1 seen by that one.
    await expect(a.work('x')).resolves.toBe(1);
    await expect(b.work('x')).resolves.toBe(1);
    // An instance Nest did not create gets the clear error.
    const stray = new SingletonService(first.get(LockService));
    await expect(stray.work('x')).rejects.toThrow(/no LockService is bound to this instance/);
  });
});
