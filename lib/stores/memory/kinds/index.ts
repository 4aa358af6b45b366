import type { HoldKind } from '../../../store';
import type { LockTable } from '../lock-table';
import { lockChannel, readWriteChannel } from '../channels';
import { FairKind } from './fair-kind';
import type { MemoryKind, MemoryKindHost, Publish } from './memory-kind';
import { MultiKind } from './multi-kind';
import { PermitKind } from './permit-kind';
import { PlainKind } from './plain-kind';
import { ReadWriteKind } from './read-write-kind';

export type { MemoryKind, Publish } from './memory-kind';
export { membersOf } from './memory-kind';

/**
 * The memory side of every kind of hold, for one store, by the kind's id, sharing `table`: a
 * lock's kinds exclude each other under one name, a semaphore's name refuses a lock, and a
 * force unlock of a lock frees whatever lock (and fair queue) lives under the name.
 */
export function memoryKinds(
  table: LockTable,
  publish: Publish,
): { readonly [K in HoldKind]: MemoryKind } {
  const permits = new PermitKind(table, publish);
  const host: MemoryKindHost = {
    table,
    publish,
    isSemaphore: (name) => permits.has(name),
    forceUnlockLocks: (names) => {
      let freed = false;
      for (const name of names) {
        const row = table.get(name);
        fair.clear(name);
        if (row === undefined) continue;
        table.delete(name, row);
        publish(row.type === 'rw' ? readWriteChannel(name) : lockChannel(name));
        freed = true;
      }
      return freed;
    },
  };
  const fair = new FairKind(host);
  return {
    lock: new PlainKind(host),
    fair,
    read: new ReadWriteKind('read', host),
    write: new ReadWriteKind('write', host),
    multi: new MultiKind(host),
    permit: permits,
  };
}
