import { Logger } from '@nestjs/common';
import { Observable } from 'rxjs';
import { lockName } from '../../core';
import { LockOptionsError } from '../../errors';
import { LEADER_HANDLE } from '../leadership/leadership';
import { LockService } from '../lock.service';
import { LOCK_SERVICE_REF, LOGGER_CONTEXT } from '../redis-lock.constants';
import { lockServiceOf } from './locked.decorator';
import { injectPropertyOnce } from './property-dependency';

/** A method `@LeaderOnly` can wrap: one returning a Promise (or a plain value). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type LeaderMethod = (...args: any[]) => unknown;

/** A method decorator whose method then resolves `undefined` when this instance does not lead. */
export type LeaderOnlyDecorator = <M extends LeaderMethod>(
  target: object,
  propertyKey: string | symbol,
  descriptor: TypedPropertyDescriptor<M>,
) => TypedPropertyDescriptor<M>;

/**
 * Runs the method only while this instance leads `name` (the application's campaign for it,
 * `LockService.leader(name)`); otherwise it resolves `undefined` without running (a debug log).
 * The method runs as the owner of the leader lock: inside it, `locks.current()` is that lock's
 * handle, whose `signal` aborts if the term ends while the call runs and whose `fencingToken`
 * is the term. The name is checked here (LockKeyError); for instance methods of classes Nest
 * creates, which return a Promise.
 *
 * @example @Cron('* * * * *') @LeaderOnly('billing-scheduler') async bill() { … }
 */
export function LeaderOnly(name: string): LeaderOnlyDecorator {
  lockName('', name);
  return <M extends LeaderMethod>(
    target: object,
    propertyKey: string | symbol,
    descriptor: TypedPropertyDescriptor<M>,
  ): TypedPropertyDescriptor<M> => {
    const owner = typeof target === 'function' ? target.name : target.constructor.name;
    const where = `@LeaderOnly on ${owner}.${String(propertyKey)}`;
    const method: unknown = descriptor.value;
    if (typeof method !== 'function' || typeof target === 'function') {
      throw new LockOptionsError('@LeaderOnly', `${where}: applies to instance methods only.`);
    }
    if (Reflect.getMetadata('design:returntype', target, propertyKey) === Observable) {
      throw new LockOptionsError(
        '@LeaderOnly',
        `${where}: applies to methods returning a Promise, not an Observable.`,
      );
    }
    const original = method as (...args: unknown[]) => unknown;
    const logger = new Logger(LOGGER_CONTEXT);

    const wrapper = async function (this: object, ...args: unknown[]): Promise<unknown> {
      const locks = lockServiceOf(this, where, '@LeaderOnly');
      const handle = locks.leader(name)[LEADER_HANDLE];
      if (handle === undefined) {
        logger.debug(`${where}: skipped, this instance is not the leader of "${name}".`);
        return undefined;
      }
      return await locks.runAs(handle, () => original.apply(this, args));
    };

    for (const key of Reflect.getOwnMetadataKeys(original)) {
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, original), wrapper);
    }
    Object.defineProperty(wrapper, 'name', { value: original.name });
    Object.defineProperty(wrapper, 'length', { value: original.length });
    descriptor.value = wrapper as unknown as M;
    injectPropertyOnce(target, LOCK_SERVICE_REF, LockService);
    return descriptor;
  };
}
