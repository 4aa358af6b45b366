import { LOCK_FAMILIES, type KindDescriptor } from './kind-descriptor';

/**
 * A multi-lock: plain locks of several names taken together by one owner, all or none
 * (GroupAcquirer). Each member is re-entered as a plain lock and waited for in its queue.
 */
export const MULTI_KIND: KindDescriptor = {
  id: 'multi',
  family: 'lock',
  queue: 'lock',
  object: 'lock',
  shared: false,
  mode: undefined,
  fair: false,
  group: true,
  refusedInside: undefined,
  ownerFrom: undefined,
  waitsFor: LOCK_FAMILIES,
  holdBack: true,
};
