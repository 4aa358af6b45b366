/**
 * A test decorator for scheduled methods, placed between `@Cron` and `@ScheduledLock`: each
 * invocation records the tick (the second it fired in) and calls the method `delayOf(instance)`
 * ms later with that tick, as an instance whose timer fires late (clock skew, slow start, GC).
 * `onCall` sees each call of the method as it is made (after the delay), with the instance.
 */
export function Skewed(
  delayOf: (instance: object) => number,
  onCall?: (tick: number, instance: object) => void,
): MethodDecorator {
  return (_target, _key, descriptor) => {
    const method = descriptor.value as unknown as (tick: number) => Promise<unknown>;
    const skewed = async function (this: object): Promise<unknown> {
      const tick = Math.floor(Date.now() / 1000);
      const delay = delayOf(this);
      if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
      onCall?.(tick, this);
      return method.call(this, tick);
    };
    for (const key of Reflect.getOwnMetadataKeys(method)) {
      Reflect.defineMetadata(key, Reflect.getOwnMetadata(key, method), skewed);
    }
    (descriptor as PropertyDescriptor).value = skewed;
    return descriptor;
  };
}
