import { Inject, Logger, Optional } from '@nestjs/common';
import { PROPERTY_DEPS_METADATA } from '@nestjs/common/constants';
import { Observable, isObservable, lastValueFrom } from 'rxjs';
import {
  assertRunPolicies,
  LOCKED_OPTION_NAMES,
  type RunOptions,
} from './engine/options/lock-options';
import {
  assertBoolean,
  assertKnownOptions,
  assertLeaseTime,
  assertWaitTime,
  describe,
} from './engine/options/validate';
import { checkBuiltKey, compileKeyTemplate, type KeyBuilder } from './key-template';
import { LockError, LockOptionsError } from './lock.errors';
import { LockService } from './lock.service';
import { lockedObservable } from './locked-observable';
import { LOCK_SERVICE_REF, LOGGER_CONTEXT } from './redis-lock.constants';

/** Options of `@Locked`. */
export interface LockedOptions extends Omit<RunOptions, 'signal'> {
  /**
   * The lock key: a template (`'order:<0>'`, `'order:<0.id>:<1>'`) or a function of the
   * method's arguments returning the key.
   */
  // `any`: the function is typed by the user with the method's own parameter types.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  key: string | ((...args: any[]) => string);
}

/** A method `@Locked` can wrap: one returning a Promise or an Observable. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LockableMethod = (...args: any[]) => Promise<unknown> | Observable<unknown>;

/** A method decorator that accepts only methods returning a Promise or an Observable. */
type LockedDecorator = <M extends LockableMethod>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => TypedPropertyDescriptor<M>;

/**
 * Runs the method while holding a distributed lock whose key is built from its arguments,
 * releasing it in `finally`. `<N>` is argument N as the method receives it (after pipes),
 * `<N.a.b>` a property path into it. Works on controller handlers and provider methods that
 * return a Promise (declare them `async`) or an Observable: the latter holds the lock from
 * subscription until it completes, errors or is unsubscribed. The class gets LockService as a
 * hidden property dependency, so Nest injects its application's LockService in every scope
 * (singleton, request, transient, lazily loaded modules).
 *
 * @example @Locked('order:pay:<0>')
 * @example @Locked('order:<0.id>', { waitTime: 0, onBusy: 'skip' })
 * @example @Locked({ key: (dto: PayDto) => `order:${dto.orderId}` })
 */
export function Locked(template: string, options?: Omit<LockedOptions, 'key'>): LockedDecorator;
export function Locked(options: LockedOptions): LockedDecorator;
export function Locked(
  templateOrOptions: string | LockedOptions,
  maybeOptions?: Omit<LockedOptions, 'key'>,
): LockedDecorator {
  const options: LockedOptions =
    typeof templateOrOptions === 'object' && templateOrOptions !== null
      ? templateOrOptions
      : { ...maybeOptions, key: templateOrOptions };
  const runOptions = checkLockedOptions(options);
  return <M extends LockableMethod>(
    target: object,
    propertyKey: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M> => {
    const where = `@Locked on ${className(target)}.${String(propertyKey)}`;
    const method: unknown = descriptor.value;
    if (typeof method !== 'function') {
      throw new LockOptionsError('@Locked', `${where}: @Locked applies to methods only.`);
    }
    const original = method as (...args: unknown[]) => unknown;
    const buildKey = keyBuilder(options.key, target, propertyKey, original, where);
    const returnType: unknown = Reflect.getMetadata('design:returntype', target, propertyKey);
    const returnsObservable = returnType === Observable;

    const locked = function (this: object, ...args: unknown[]): unknown {
      let locks: LockService;
      let key: string;
      try {
        locks = lockServiceOf(this, where);
        key = buildKey(args);
      } catch (error) {
        return returnsObservable
          ? new Observable((subscriber) => subscriber.error(error))
          : Promise.reject(error);
      }
      if (returnsObservable) {
        return lockedObservable(locks, key, runOptions, () => original.apply(this, args), where);
      }
      return locks.run(
        key,
        async () => {
          const result = await original.apply(this, args);
          return isObservable(result) ? warnAndDrain(result, where) : result;
        },
        runOptions,
      );
    };

    copyMetadata(original, locked);
    Object.defineProperty(locked, 'name', { value: original.name });
    Object.defineProperty(locked, 'length', { value: original.length });
    descriptor.value = locked as M;
    if (typeof target !== 'function') declareLockService(target);
    return descriptor;
  };
}

function checkLockedOptions(options: LockedOptions): RunOptions {
  assertKnownOptions(options, LOCKED_OPTION_NAMES);
  const { key: _key, waitTime, leaseTime, fencing, ...policies } = options;
  if (waitTime !== undefined) assertWaitTime(waitTime);
  if (leaseTime !== undefined) assertLeaseTime(leaseTime);
  if (fencing !== undefined) assertBoolean(fencing, 'fencing');
  assertRunPolicies(policies);
  return { ...policies, waitTime, leaseTime, fencing };
}

function keyBuilder(
  key: unknown,
  target: object,
  propertyKey: string | symbol,
  method: (...args: unknown[]) => unknown,
  where: string,
): KeyBuilder {
  if (typeof key === 'function') {
    const build = key as (...args: unknown[]) => unknown;
    return (args) => checkBuiltKey(build(...args), where);
  }
  const paramTypes = Reflect.getMetadata('design:paramtypes', target, propertyKey) as
    unknown[] | undefined;
  const paramCount = Math.max(paramTypes?.length ?? 0, method.length);
  return compileKeyTemplate(key, paramCount, where);
}

/** Declares an optional property injection of LockService on the class, once per class. */
function declareLockService(prototype: object): void {
  const declared = (Reflect.getMetadata(PROPERTY_DEPS_METADATA, prototype.constructor) ?? []) as {
    key: unknown;
  }[];
  if (declared.some((dependency) => dependency.key === LOCK_SERVICE_REF)) return;
  Inject(LockService)(prototype, LOCK_SERVICE_REF);
  Optional()(prototype, LOCK_SERVICE_REF);
}

function lockServiceOf(instance: object, where: string): LockService {
  const locks = (instance as Record<symbol, LockService | undefined> | undefined)?.[
    LOCK_SERVICE_REF
  ];
  if (locks === undefined) {
    throw new LockError(
      `${where}: no LockService is bound to this instance. @Locked works on providers and ` +
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

function className(target: object): string {
  return typeof target === 'function' ? target.name : target.constructor.name;
}
