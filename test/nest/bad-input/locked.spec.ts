import { Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { LockError, LockKeyError, LockOptionsError, Locked, Semaphore } from '../../../lib';
import { lockApp } from '../../support/lock-app';
import { suiteRedis } from '../../support/suite-redis';
import { MALFORMED_TEMPLATES } from './malformed-templates';
import { bodies, nothingRanNorLeft } from './refusal-kit';

@Injectable()
class Orders {
  @Locked('order:<0>')
  byId(_id: unknown) {
    bodies.runs++;
    return Promise.resolve('ran');
  }

  @Locked('order:<0.customer.id>:<1>')
  byPath(_order: unknown, _part: unknown) {
    bodies.runs++;
    return Promise.resolve('ran');
  }

  @Locked({ key: (id: unknown) => id as string })
  byFunction(_id: unknown) {
    bodies.runs++;
    return Promise.resolve('ran');
  }
}

/** Decorates a fresh two-parameter method with `@Locked(...args)` (any arguments). */
function decorate(...args: unknown[]) {
  return () => {
    class Target {
      @((Locked as (...a: unknown[]) => MethodDecorator)(...args))
      method(_a: string, _b: string) {
        return Promise.resolve();
      }
    }
    return Target;
  };
}

describe('bad input to @Locked: typed errors naming the problem, the method body not run', () => {
  let orders: Orders;
  let raw: Redis;
  let prefix: string;
  const server = suiteRedis();

  beforeAll(async () => {
    raw = server.raw;
    const made = await lockApp(server.redis, {}, { providers: [Orders] });
    prefix = made.prefix;
    orders = server.closing(made.app).get(Orders);
  });
  nothingRanNorLeft(
    () => raw,
    () => prefix,
  );

  describe('templates, at decoration time (LockKeyError naming the method)', () => {
    it.each([
      ...MALFORMED_TEMPLATES,
      ['order:<id>', /'<id>' is not a placeholder/],
      ['order:<0..id>', /not a placeholder/],
      ['order:<0.ü>', /not a placeholder/], // path segments are ASCII identifiers or indexes
      ['order:<0<1>>', /not a placeholder/],
      ['order:<0.constructor>', /'constructor', which is not data/],
      ['order:<0.prototype.x>', /'prototype', which is not data/],
      ['order:<2>', /refers to argument 2, but the method declares 2 parameters/],
      ['order:\uD800<0>', /lone UTF-16 surrogate/],
      // A key without placeholders is complete: its hash tag is checked now.
      ['order{pay', /lock key "order\{pay" has a "\{" with no "\}" after it/],
      ['{}order', /has an empty hash tag/],
      ['order}pay', /has a "\}" with no "\{" before it/],
    ])('%j', (template, message) => {
      const define = decorate(template);
      expect(define).toThrow(LockKeyError);
      expect(define).toThrow(message);
      expect(define).toThrow(/@Locked on Target\.method/);
    });

    it.each([
      ['a number', 42],
      ['undefined', undefined],
      ['null', null],
    ])('a template that is %s', (_what, template) => {
      expect(decorate(template)).toThrow(LockKeyError);
      expect(decorate({ key: template })).toThrow(LockKeyError);
    });
  });

  describe('options, at decoration time (LockOptionsError naming the option)', () => {
    it.each([
      [{ waitTime: -1 }, 'waitTime'],
      [{ waitTime: '5' }, 'waitTime'],
      [{ leaseTime: 10 }, 'leaseTime'],
      [{ leaseTime: 100.5 }, 'leaseTime'],
      [{ onLockLost: 'retry' }, 'onLockLost'],
      [{ wait: 0 }, 'wait'],
      [{ signal: new AbortController().signal }, 'signal'],
      [{ holdAtLeast: -1 }, 'holdAtLeast'],
      [{ holdAtLeast: 500, fair: true }, 'holdAtLeast'],
      [{ holdAtLeast: 500, leaseTime: 100 }, 'holdAtLeast'],
      [{ maxHold: 500, leaseTime: 1_000 }, 'maxHold'],
    ])('%p', (options, option) => {
      for (const define of [decorate('k', options), decorate({ key: 'k', ...options })]) {
        let error: unknown;
        try {
          define();
        } catch (thrown) {
          error = thrown;
        }
        expect(error).toBeInstanceOf(LockOptionsError);
        expect((error as LockOptionsError).option).toBe(option);
      }
    });

    it.each([
      ['mode with a list', ['a:<0>', 'b:<1>'], { mode: 'write' }, 'mode'],
      ['fair with a list', ['a:<0>', 'b:<1>'], { fair: true }, 'fair'],
      ['holdAtLeast with a list', ['a:<0>', 'b:<1>'], { holdAtLeast: 100 }, 'holdAtLeast'],
      ['key and keys together', { key: 'k', keys: ['a'] }, undefined, 'keys'],
    ])('a multi-lock: %s', (_what, first, options, option) => {
      let error: unknown;
      try {
        decorate(first, options)();
      } catch (thrown) {
        error = thrown;
      }
      expect(error).toBeInstanceOf(LockOptionsError);
      expect((error as LockOptionsError).option).toBe(option);
    });

    it.each([
      ['an empty list', []],
      ['a list with a bad template', ['a:<0>', 'b:<2>']],
      ['a list with a number', ['a:<0>', 7]],
      ['more than 64 templates', Array.from({ length: 65 }, (_, i) => `k${i}:<0>`)],
    ])('a multi-lock: %s (LockKeyError)', (_what, keys) => {
      expect(decorate(keys)).toThrow(LockKeyError);
      expect(decorate({ keys })).toThrow(LockKeyError);
    });

    it.each([
      ['missing', {}],
      ['0', { permits: 0 }],
      ['1.5', { permits: 1.5 }],
      ['above 1 000 000', { permits: 1_000_001 }],
      ['a string', { permits: '3' }],
    ])('@Semaphore with permits %s', (_what, options) => {
      const semaphore = Semaphore as (...a: unknown[]) => unknown;
      expect(() => semaphore('s:<0>', options)).toThrow(LockOptionsError);
      expect(() => semaphore({ key: 's:<0>', ...options })).toThrow(LockOptionsError);
    });

    it('@Semaphore with a lock-only option or a bad template', () => {
      const semaphore = Semaphore as (...a: unknown[]) => unknown;
      for (const option of [
        { mode: 'read' },
        { fair: true },
        { fencing: true },
        { waitTime: -1 },
      ]) {
        expect(() => semaphore('s', { permits: 1, ...option })).toThrow(LockOptionsError);
      }
      expect(() => {
        class Target {
          @Semaphore('s:<1>', { permits: 1 })
          method(_a: string) {
            return Promise.resolve();
          }
        }
        return Target;
      }).toThrow(LockKeyError);
    });

    it('@Locked on something that is not a method', () => {
      // Not a method: the types refuse it too, so the check is reached only through a cast.
      const descriptor = { get: () => 1, configurable: true } as never;
      expect(() => Locked('k')(class {}.prototype, 'getter', descriptor)).toThrow(
        /@Locked applies to methods only/,
      );
      expect(() => Locked('k')(class {}.prototype, 'getter', descriptor)).toThrow(LockOptionsError);
    });
  });

  describe('argument values, at call time (LockKeyError, body not run, nothing locked)', () => {
    it.each([
      ['undefined', undefined, /argument 0 is undefined/],
      ['null', null, /argument 0 is null/],
      ['an empty string', '', /argument 0 is an empty string/],
      ['NaN', Number.NaN, /argument 0 is NaN/],
      ['-Infinity', -Infinity, /argument 0 is -Infinity/],
      ['an object', { id: 1 }, /argument 0 is an object; name the property to use, e\.g\. <0\.id>/],
      ['an array', [1, 2], /argument 0 is an array/],
      ['a function', () => 1, /a function, not a string or number/],
      ['a symbol', Symbol('s'), /not a string or number/],
      ['a 2 000-character string', 'x'.repeat(2_000), /bytes long; the limit is 1024/],
      // Lone surrogates would collide (all become U+FFFD on the wire).
      ['a lone surrogate', '\uD83D', /surrogate|unicode|UTF/i],
    ])('%s', async (_what, value, message) => {
      const error = await orders.byId(value).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockKeyError);
      expect(error).toBeInstanceOf(LockError);
      expect((error as Error).message).toMatch(message);
    });

    it.each([
      [
        'a missing object',
        [undefined, 'x'],
        /argument 0 is undefined, so it has no property 'customer'/,
      ],
      [
        'a missing property',
        [{}, 'x'],
        /argument 0.customer is undefined, so it has no property 'id'/,
      ],
      ['a string instead of an object', ['c-1', 'x'], /argument 0 is "c-1", so it has no property/],
      ['a null in the path', [{ customer: null }, 'x'], /argument 0.customer is null/],
      [
        'an empty id at the end',
        [{ customer: { id: '' } }, 'x'],
        /argument 0.customer.id is an empty string/,
      ],
      ['a missing second argument', [{ customer: { id: 7 } }], /argument 1 is undefined/],
    ])('a property path: %s', async (_what, args, message) => {
      const error = await orders.byPath(...(args as [unknown, unknown])).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockKeyError);
      expect((error as Error).message).toMatch(message);
      expect((error as Error).message).toMatch(/Orders\.byPath.*The method was not run/);
    });

    it.each([
      ['an empty string', '', /must return a non-empty string, returned ""/],
      ['a number', 42, /returned 42/],
      ['undefined', undefined, /returned undefined/],
      ['a 1 100-byte string', 'k'.repeat(1_100), /bytes long; the limit is 1024/],
    ])('a key function returning %s', async (_what, value, message) => {
      const error = await orders.byFunction(value).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockKeyError);
      expect((error as Error).message).toMatch(message);
    });
  });
});
