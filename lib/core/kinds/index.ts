import type { HoldKind } from '../../store';
import type { LockMode } from '../options/lock-options';
import { FAIR_KIND } from './fair-kind';
import type { KindDescriptor } from './kind-descriptor';
import { MULTI_KIND } from './multi-kind';
import { PERMIT_KIND } from './permit-kind';
import { PLAIN_KIND } from './plain-kind';
import { READ_KIND, WRITE_KIND } from './read-write-kind';

export type { HoldFamily, KindDescriptor, QueueFamily } from './kind-descriptor';
export { FAIR_KIND, MULTI_KIND, PERMIT_KIND, PLAIN_KIND, READ_KIND, WRITE_KIND };

/** Every kind's descriptor, by id. */
const KINDS: { readonly [K in HoldKind]: KindDescriptor } = {
  lock: PLAIN_KIND,
  fair: FAIR_KIND,
  read: READ_KIND,
  write: WRITE_KIND,
  multi: MULTI_KIND,
  permit: PERMIT_KIND,
};

/** The descriptor of the kind `kind` (a target's or a hold's `kind`). */
export function kindOf(kind: HoldKind): KindDescriptor {
  return KINDS[kind];
}

/** The kind of a lock on one key: a read-write lock's `mode`, else fair or plain. */
export function lockKind(mode: LockMode | undefined, fair: boolean): KindDescriptor {
  if (mode !== undefined) return KINDS[mode];
  return fair ? FAIR_KIND : PLAIN_KIND;
}
