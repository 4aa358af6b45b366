import { LOCK_FAMILIES, type KindDescriptor } from './kind-descriptor';

/** A plain reentrant lock (Redisson's RLock; with fencing, RFencedLock): one owner at a time. */
export const PLAIN_KIND: KindDescriptor = {
  id: 'lock',
  family: 'lock',
  queue: 'lock',
  object: 'lock',
  shared: false,
  mode: undefined,
  fair: false,
  group: false,
  refusedInside: undefined,
  ownerFrom: undefined,
  waitsFor: LOCK_FAMILIES,
  holdBack: true,
};
