import { Logger } from '@nestjs/common';
import { Observable, isObservable, lastValueFrom } from 'rxjs';
import { describe, type LockEngine } from '../../core';
import {
  checkBuiltKey,
  checkBuiltKeys,
  compileKeyTemplate,
  compileKeyTemplates,
  type KeyBuilder,
} from './key-template';
import { LockError, LockKeyError, LockOptionsError } from '../../errors';
import { LockService } from '../lock.service';
import { lockedObservable, type LockedRun } from './locked-observable';
import { LOCK_SERVICE_REF, LOGGER_CONTEXT } from '../redis-lock.constants';
import { SERVICE_ENGINE } from '../service-engine';
import { injectPropertyOnce } from './property-dependency';
import {
  checkLockedOptions,
  type CheckedLockedOptions,
  type LockedOptions,
} from './locked-options';

export type { LockedOptions };

/** A method `@Locked` can wrap: one returning a Promise or an Observable. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LockableMethod = (...args: any[]) => Promise<unknown> | Observable<unknown>;

/** A method decorator that accepts only methods returning a Promise or an Observable. */
export type LockedDecorator = <M extends LockableMethod>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => TypedPropertyDescriptor<M>;

/** What a locking decorator (`@Locked`, `@Semaphore`) knows of the method it decorates. */
export interface DecoratedMethod {
  readonly target: object;
  readonly propertyKey: string | symbol;
  readonly method: (...args: unknown[]) => unknown;
  /** `@Locked on Class.method`, for messages. */
  readonly where: string;
}

/** Runs a body holding the lock or permit for one call's arguments (throws on bad arguments). */
export type LockedCall = (
  args: unknown[],
) => (locks: LockService, body: () => Promise<unknown>, signal?: AbortSignal) => Promise<unknown>;

/**
 * Runs the method while holding a distributed lock whose key is built from its arguments,
 * releasing it in `finally`. `<N>` is argument N as the method receives it (after pipes),
 * `<N.a.b>` a property path into it. A list of templates (or `keys`) takes a multi-lock: every
 * key or none. Works on controller handlers and provider methods that return a Promise (declare
 * them `async`) or an Observable: the latter holds the lock from subscription until it
 * completes, errors or is unsubscribed. The class gets LockService as a hidden property
 * dependency, so Nest injects its application's LockService in every scope (singleton,
 * request, transient, lazily loaded modules).
 *
 * @example @Locked('order:pay:<0>')
 * @example @Locked('order:<0.id>', { waitTime: 0, onBusy: 'skip' })
 * @example @Locked({ key: (dto: PayDto) => `order:${dto.orderId}` })
 * @example @Locked(['account:<0>', 'account:<1>'])
 * @example @Locked({ keys: (from: string, to: string) => [`account:${from}`, `account:${to}`] })
 */
export function Locked(
  template: string | readonly string[],
  options?: Omit<LockedOptions, 'key' | 'keys'>,
): LockedDecorator;
export function Locked(options: LockedOptions): LockedDecorator;
export function Locked(
  templateOrOptions: string | readonly string[] | LockedOptions,
  maybeOptions?: Omit<LockedOptions, 'key' | 'keys'>,
): LockedDecorator {
  let options: LockedOptions;
  if (Array.isArray(templateOrOptions)) {
    options = { ...maybeOptions, keys: templateOrOptions };
  } else if (typeof templateOrOptions === 'object' && templateOrOptions !== null) {
    options = templateOrOptions as LockedOptions;
  } else {
    options = { ...maybeOptions, key: templateOrOptions };
  }
  const checked = checkLockedOptions(options);
  return lockingDecorator('@Locked', (decorated) => {
    const build = keysBuilder(checked, decorated);
    const { runOptions } = checked;
    return (args) => {
      const keys = build(args);
      return (locks, body, signal) => {
        const engine = engineOf(locks);
        if (engine !== undefined) return engine.runChecked(keys, body, runOptions, signal);
        return locks.run(keys, body, signal ? { ...runOptions, signal } : runOptions);
      };
    };
  });
}

/**
 * The engine of the instance's LockService, which runs a decorated call with the options the
 * decorator checked (no check per call); undefined for a LockService of the user's own (an
 * override), which gets the options through its `run()` / `semaphore()`.
 */
export function engineOf(locks: LockService): LockEngine | undefined {
  return (locks as Partial<Record<typeof SERVICE_ENGINE, LockEngine>>)[SERVICE_ENGINE];
}

/**
 * The decorator shared by `@Locked` and `@Semaphore`: `prepare` (at decoration time) checks
 * what it can and returns the locked call; the wrapper finds the instance's LockService and runs
 * the method holding its lock or permit, for Promise and Observable methods alike.
 */
export function lockingDecorator(
  name: string,
  prepare: (decorated: DecoratedMethod) => LockedCall,
): LockedDecorator {
  return <M extends LockableMethod>(
    target: object,
    propertyKey: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M> => {
    const where = `${name} on ${className(target)}.${String(propertyKey)}`;
    const method: unknown = descriptor.value;
    if (typeof method !== 'function') {
      throw new LockOptionsError(name, `${where}: ${name} applies to methods only.`);
    }
    const original = method as (...args: unknown[]) => unknown;
    const lockedCall = prepare({ target, propertyKey, method: original, where });
    const returnType: unknown = Reflect.getMetadata('design:returntype', target, propertyKey);
    const returnsObservable = returnType === Observable;
    let warnedKey = false;

    const wrapper = function (this: object, ...args: unknown[]): unknown {
      let locks: LockService;
      let run: ReturnType<LockedCall>;
      try {
        locks = lockServiceOf(this, where, name);
        run = lockedCall(args);
      } catch (error) {
        if (error instanceof LockKeyError && !warnedKey) {
          warnedKey = true; // the caller's input, usually: once per method, not per request
          new Logger(LOGGER_CONTEXT).warn(
            `${error.message} (A bad key argument, answered 400 where the module maps errors; logged once per method.)`,
          );
        }
        return returnsObservable
          ? new Observable((subscriber) => subscriber.error(error))
          : Promise.reject(error);
      }
      if (returnsObservable) {
        const runObservable: LockedRun = (body, signal) => run(locks, body, signal);
        return lockedObservable(runObservable, () => original.apply(this, args), where);
      }
      return run(locks, async () => {
        const result = await original.apply(this, args);
        return isObservable(result) ? warnAndDrain(result, where) : result;
      });
    };

    copyMetadata(original, wrapper);
    Object.defineProperty(wrapper, 'name', { value: original.name });
    Object.defineProperty(wrapper, 'length', { value: original.length });
    descriptor.value = wrapper as M;
    if (typeof target !== 'function') declareLockService(target);
    return descriptor;
  };
}

/** The builder of a call's key (`key`) or key list (`keys`). */
function keysBuilder(
  options: CheckedLockedOptions,
  decorated: DecoratedMethod,
): (args: readonly unknown[]) => string | string[] {
  const { where } = decorated;
  if (options.keys === undefined) return keyBuilder(options.key, decorated);
  if (typeof options.keys === 'function') {
    const build = options.keys as (...args: unknown[]) => unknown;
    return (args) => checkBuiltKeys(build(...args), where);
  }
  return compileKeyTemplates(options.keys, paramCountOf(decorated), where, paramTypesOf(decorated));
}

/** The builder of one key from a template or a key function. */
export function keyBuilder(key: unknown, decorated: DecoratedMethod): KeyBuilder {
  if (typeof key === 'function') {
    const build = key as (...args: unknown[]) => unknown;
    return (args) => checkBuiltKey(build(...args), decorated.where);
  }
  return compileKeyTemplate(key, paramCountOf(decorated), decorated.where, paramTypesOf(decorated));
}

/** The method's declared parameter types (TypeScript's decorator metadata), when emitted. */
function paramTypesOf({ target, propertyKey }: DecoratedMethod): unknown[] | undefined {
  return Reflect.getMetadata('design:paramtypes', target, propertyKey) as unknown[] | undefined;
}

function paramCountOf(decorated: DecoratedMethod): number {
  return Math.max(paramTypesOf(decorated)?.length ?? 0, decorated.method.length);
}

/**
 * Declares a property injection of LockService on the class, once per class. Required, so an
 * application that uses the class without RedisLockModule fails at startup (Nest resolves it
 * for every scope then), naming the class and LOCK_SERVICE_REF's description: the fix.
 */
function declareLockService(prototype: object): void {
  injectPropertyOnce(prototype, LOCK_SERVICE_REF, LockService);
}

/** The LockService Nest injected into `instance` (LockError naming the fix when none). */
export function lockServiceOf(instance: object, where: string, name: string): LockService {
  const locks = (instance as Record<symbol, LockService | undefined> | undefined)?.[
    LOCK_SERVICE_REF
  ];
  if (locks === undefined) {
    throw new LockError(
      `${where}: no LockService is bound to this instance. ${name} works on providers and ` +
        'controllers that Nest created (any scope) in an application that imports ' +
        'RedisLockModule or provides LockService. For instances created with new, inject ' +
        `LockService and use run(). Got ${describe(instance)}.`,
    );
  }
  return locks;
}

let warnedDrain = false;
/** A method not declared as returning Observable returned one: hold the lock until it completes. */
function warnAndDrain(source: Observable<unknown>, where: string): Promise<unknown> {
  if (!warnedDrain) {
    warnedDrain = true;
    new Logger(LOGGER_CONTEXT).warn(
      `${where} returned an Observable but its declared return type is not Observable; the lock ` +
        'is held until it completes and the caller gets its last value. Declare `: Observable<T>`.',
    );
  }
  return lastValueFrom(source, { defaultValue: undefined });
}

function copyMetadata(from: object, to: object): void {
  for (const metadataKey of Reflect.getOwnMetadataKeys(from)) {
    Reflect.defineMetadata(metadataKey, Reflect.getOwnMetadata(metadataKey, from), to);
  }
}

/** The name of the class a decorator was applied in (`target`: its prototype, or the class). */
export function className(target: object): string {
  return typeof target === 'function' ? target.name : target.constructor.name;
}
