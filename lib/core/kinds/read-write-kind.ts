import { LOCK_FAMILIES, type KindDescriptor } from './kind-descriptor';

/*
 * The two modes of a read-write lock (Redisson's RReadWriteLock), each a kind of hold of its
 * own: readers and writers share one local queue (one release channel); a read inside the
 * chain's write is a downgrade (the write's owner id), a write inside its read is refused.
 */

/** The read hold: shared by readers, excluded by a writer. */
export const READ_KIND: KindDescriptor = {
  id: 'read',
  family: 'read',
  queue: 'rw',
  object: 'lock',
  shared: true,
  mode: 'read',
  fair: false,
  group: false,
  refusedInside: undefined,
  ownerFrom: 'write',
  waitsFor: ['lock', 'write'],
  holdBack: true,
};

/** The write hold: exclusive. */
export const WRITE_KIND: KindDescriptor = {
  id: 'write',
  family: 'write',
  queue: 'rw',
  object: 'lock',
  shared: false,
  mode: 'write',
  fair: false,
  group: false,
  refusedInside: 'read',
  ownerFrom: undefined,
  waitsFor: LOCK_FAMILIES,
  holdBack: true,
};
