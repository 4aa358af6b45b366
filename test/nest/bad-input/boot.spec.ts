import {
  Body,
  Controller,
  Injectable,
  Module,
  Param,
  ParseIntPipe,
  Post,
  Scope,
} from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { LockKeyError, Locked, Semaphore } from '../../../lib';

// Mistakes a developer makes that the application must refuse when it starts (or when the class
// loads), not at the first request.

@Injectable()
class OrdersService {
  @Locked('order:<0>')
  pay(_id: number) {
    return Promise.resolve('paid');
  }
}

@Controller('orders')
class OrdersController {
  @Post(':id/pay')
  @Locked('order:<0>')
  pay(@Param('id', ParseIntPipe) id: number) {
    return Promise.resolve(id);
  }
}

@Injectable({ scope: Scope.REQUEST })
class RequestScopedExports {
  @Semaphore('export', { permits: 2 })
  run() {
    return Promise.resolve();
  }
}

class PayDto {
  orderId!: number;
}

/** Compiles a testing module with `metadata` and no RedisLockModule; its startup error. */
async function bootError(metadata: Parameters<typeof Module>[0]): Promise<Error> {
  const error = await Test.createTestingModule(metadata)
    .compile()
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  expect(error).toBeInstanceOf(Error);
  return error as Error;
}

describe('mistakes refused at startup', () => {
  it.each([
    ['a provider', { providers: [OrdersService] }, 'OrdersService'],
    ['a controller', { controllers: [OrdersController] }, 'OrdersController'],
  ])(
    '@Locked on %s in an application without RedisLockModule: the startup fails, naming the class and the fix',
    async (_what, metadata, className) => {
      const error = await bootError(metadata);
      expect(error.message).toContain(`dependencies of the ${className}`);
      expect(error.message).toContain('import RedisLockModule.forRoot()');
    },
  );

  it('a request-scoped provider (Nest builds it per request, not at startup) fails at its first instance, with the same message', async () => {
    const moduleRef = await Test.createTestingModule({
      providers: [RequestScopedExports],
    }).compile();
    const error = await moduleRef.resolve(RequestScopedExports).catch((e: unknown) => e);
    expect((error as Error).message).toContain('dependencies of the RequestScopedExports');
    expect((error as Error).message).toContain('import RedisLockModule.forRoot()');
    await moduleRef.close();
  });

  it('a template that can never fit its declared parameter fails when the class loads', () => {
    const onNumber = () => {
      class Payments {
        @Locked('order:<0.id>')
        pay(_id: number) {
          return Promise.resolve();
        }
      }
      return Payments;
    };
    expect(onNumber).toThrow(LockKeyError);
    expect(onNumber).toThrow(
      '@Locked on Payments.pay: key template "order:<0.id>" never fits its parameter: ' +
        "'<0.id>' reads a property of argument 0, declared as a number, which has none; use <0>.",
    );
    const onDto = () => {
      class Payments {
        @Locked(['order:<1>', 'order:<0>'])
        pay(@Body() _dto: PayDto, _id: string) {
          return Promise.resolve();
        }
      }
      return Payments;
    };
    expect(onDto).toThrow(/'<0>' is argument 0 itself, declared as PayDto: .* e\.g\. <0\.id>/);
  });

  it('templates that fit (or whose parameter type says nothing) still load', () => {
    expect(() => {
      class Fine {
        @Locked('a:<0>:<1.orderId>:<2.id>:<3>')
        run(_id: number, _dto: PayDto, _any: { id: string }, _name: string) {
          return Promise.resolve();
        }
      }
      return Fine;
    }).not.toThrow();
  });
});
