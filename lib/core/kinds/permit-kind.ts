import type { KindDescriptor } from './kind-descriptor';

/**
 * A leased permit of a semaphore (Redisson's RPermitExpirableSemaphore): shared up to the
 * semaphore's limit, another object than a lock of the same name, and never a handle a call
 * waits for itself on (a chain that holds a permit re-enters it).
 */
export const PERMIT_KIND: KindDescriptor = {
  id: 'permit',
  family: 'permit',
  queue: 'permit',
  object: 'semaphore',
  shared: true,
  mode: undefined,
  fair: false,
  group: false,
  refusedInside: undefined,
  ownerFrom: undefined,
  waitsFor: [],
  holdBack: true,
};
