import { recogniseReplyErrors } from '../reply-errors';
import type { CommandOptions } from './node-redis-types';

/**
 * node-redis' codes of the RESP types the store reads (its RESP_TYPES: each the type's first
 * byte), named here to load nothing of node-redis.
 */
const RESP = {
  SIMPLE_STRING: 43, // +
  BLOB_STRING: 36, // $
  VERBATIM_STRING: 61, // =
  BIG_NUMBER: 40, // (
  DOUBLE: 44, // ,
  SET: 126, // ~
  MAP: 37, // %
} as const;

/**
 * The options of every command the adapter sends: replies as RESP2 gives them (what the store
 * reads, as ioredis has them), whatever protocol and type mapping the user's client has (node-redis
 * 6 speaks RESP3 by default): strings as strings, maps (PUBSUB NUMSUB, ...) and sets as flat
 * arrays, verbatim strings (INFO) without their format, big numbers and doubles as strings.
 * Booleans are left to resp2Reply.
 */
export const RESP2_REPLIES: CommandOptions = {
  typeMapping: {
    [RESP.SIMPLE_STRING]: String,
    [RESP.BLOB_STRING]: String,
    [RESP.VERBATIM_STRING]: String,
    [RESP.BIG_NUMBER]: String,
    [RESP.DOUBLE]: String,
    [RESP.SET]: Array,
    [RESP.MAP]: Array,
  },
};

/**
 * A reply as RESP2 would give it: on a RESP3 connection Redis answers a Lua `true` with a boolean
 * where RESP2 gives 1, and a Lua `false` with a boolean where RESP2 gives nil (null), also inside
 * arrays. Any other reply is returned as it is.
 */
export function resp2Reply(reply: unknown): unknown {
  if (typeof reply === 'boolean') return reply ? 1 : null;
  if (Array.isArray(reply)) {
    for (let i = 0; i < reply.length; i++) {
      const item: unknown = reply[i];
      if (typeof item === 'boolean' || Array.isArray(item)) reply[i] = resp2Reply(item);
    }
  }
  return reply;
}

/**
 * The reply of command `name` with `args` as the store reads it, which is as ioredis gives it:
 * RESP2's (resp2Reply), a sorted set's members WITHSCORES as one flat array (RESP3 gives
 * [member, score] pairs), and HGETALL's fields as an object (ioredis' one reply transformer).
 */
export function resp2CommandReply(name: string, args: readonly unknown[], reply: unknown): unknown {
  if (name === 'hgetall' && Array.isArray(reply)) {
    const fields: Record<string, unknown> = {};
    for (let i = 0; i + 1 < reply.length; i += 2) fields[String(reply[i])] = reply[i + 1];
    return fields;
  }
  if (
    name.startsWith('z') &&
    Array.isArray(reply) &&
    Array.isArray(reply[0]) &&
    args.some((arg) => String(arg).toUpperCase() === 'WITHSCORES')
  ) {
    return (reply as unknown[][]).flat();
  }
  return resp2Reply(reply);
}

/**
 * Whether `error` is a node-redis ErrorReply (or a subclass: SimpleError, BlobError): found by
 * its class's name along the prototype chain, so that recognising one loads nothing of
 * node-redis (whose class the user's copy of the package defines).
 */
export function isNodeRedisReplyError(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  for (
    let proto: object | null = Object.getPrototypeOf(error) as object | null;
    proto !== null && proto !== Error.prototype;
    proto = Object.getPrototypeOf(proto) as object | null
  ) {
    if ((proto as { constructor?: { name?: unknown } }).constructor?.name === 'ErrorReply') {
      return true;
    }
  }
  return false;
}

recogniseReplyErrors(isNodeRedisReplyError);
