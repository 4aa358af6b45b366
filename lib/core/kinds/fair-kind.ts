import { LOCK_FAMILIES, type KindDescriptor } from './kind-descriptor';

/**
 * A fair lock (Redisson's RFairLock): the plain lock of its name (one family for re-entry),
 * granted in the order of a queue in the store. Its waiters wait in that queue (takeFair), not
 * in a local one, and a release tells the queue's head only, so nothing is held back.
 */
export const FAIR_KIND: KindDescriptor = {
  id: 'fair',
  family: 'lock',
  queue: 'lock',
  object: 'lock',
  shared: false,
  mode: undefined,
  fair: true,
  group: false,
  refusedInside: undefined,
  ownerFrom: undefined,
  waitsFor: LOCK_FAMILIES,
  holdBack: false,
};
