import type { HoldKind } from '../../../store';
import { FairKind } from './fair-kind';
import { MultiKind } from './multi-kind';
import { PermitKind } from './permit-kind';
import { PlainKind } from './plain-kind';
import { ReadKind, WriteKind } from './read-write-kind';
import type { KindHost, RedisKind } from './redis-kind';

export type { KindHost, RedisKind } from './redis-kind';

/** The Redis side of every kind of hold, for one store: by the kind's id. */
export function redisKinds(host: KindHost): { readonly [K in HoldKind]: RedisKind } {
  return {
    lock: new PlainKind(host),
    fair: new FairKind(host),
    read: new ReadKind(host),
    write: new WriteKind(host),
    multi: new MultiKind(host),
    permit: new PermitKind(host),
  };
}
