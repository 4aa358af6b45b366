import { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import {
  ioredisClient,
  IOREDIS_VERSION,
  missingInternals,
  UNBATCHED_WARNING,
} from '../../../../lib/stores/redis/client/ioredis';
import { isReplyError } from '../../../../lib/stores/redis/client';
import { LuaScript } from '../../../../lib/stores/redis/lua-script';
import { suiteRedis } from '../../../support/suite-redis';

type WriteBatching = typeof import('../../../../lib/stores/redis/client/ioredis/write-batching');

/** A fresh copy of the write batching (its warn-once state is per module). */
function freshBatching(): WriteBatching {
  let batching: WriteBatching | undefined;
  jest.isolateModules(() => {
    batching = jest.requireActual<WriteBatching>(
      '../../../../lib/stores/redis/client/ioredis/write-batching',
    );
  });
  return batching!;
}

/**
 * The write batching reads two fields ioredis does not document (`stream`, `commandQueue`).
 * This suite fails, naming the field, when the installed ioredis no longer has them (at run
 * time the library then warns once and sends every call on its own: also tested here), so an
 * ioredis upgrade cannot stop the batching silently. test/redis-scripts/write-batching.spec.ts
 * checks that the batching does batch.
 */
describe(`the ioredis internals the write batching reads (ioredis ${IOREDIS_VERSION})`, () => {
  const server = suiteRedis();
  afterEach(() => jest.restoreAllMocks());

  it('are there on a connected client: its socket, and its queue of commands in flight', async () => {
    const raw = server.raw;
    await raw.ping();
    expect(missingInternals(raw)).toEqual([]);
    const internals = raw as unknown as { stream: unknown; commandQueue: { length: number } };
    expect(internals.stream).toBeInstanceOf(Socket);
    // The queue holds what was written and not yet answered (what batching decides by).
    expect(internals.commandQueue.length).toBe(0);
    const pings = [raw.ping(), raw.ping()];
    expect(internals.commandQueue.length).toBe(2);
    await Promise.all(pings);
    expect(internals.commandQueue.length).toBe(0);
  });

  it('missing at run time: warns once, then every call goes out on its own, answered', async () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const { batchWrites } = freshBatching();
    const renamed = { status: 'ready', connection: {} } as unknown as Redis; // no stream
    batchWrites(renamed);
    batchWrites(renamed);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(
      /no `stream` \(its socket\) or `commandQueue`.*unbatched/,
    );
    expect(warn.mock.calls[0][1]).toEqual({ code: UNBATCHED_WARNING });
    // From then on it leaves every connection alone: a real one is never corked.
    const raw = server.raw;
    const cork = jest.spyOn(raw.stream, 'cork');
    const pending = [raw.ping(), raw.ping()];
    batchWrites(raw);
    expect(cork).not.toHaveBeenCalled();
    await Promise.all(pending);
    expect(warn).toHaveBeenCalledTimes(1);
  });

  it('a queue gone with the socket still there: warns too, names the queue', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const { batchWrites } = freshBatching();
    const socket = { writable: true, cork() {}, uncork() {} };
    batchWrites({ status: 'ready', stream: socket } as unknown as Redis);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/no `commandQueue`/);
  });

  it('a connection not connected yet is not a missing socket: no warning', () => {
    const warn = jest.spyOn(process, 'emitWarning').mockImplementation(() => undefined);
    const { batchWrites } = freshBatching();
    batchWrites({ status: 'connecting' } as unknown as Redis);
    batchWrites({ status: 'wait' } as unknown as Redis);
    expect(warn).not.toHaveBeenCalled();
  });

  it("recognises ioredis' error replies as refusals, and link failures as not", async () => {
    const script = new LuaScript("return redis.call('hget', KEYS[1], 'f')");
    const client = ioredisClient(server.raw);
    await server.raw.set('internals:string', 'x');
    const refused = await script
      .run(client, 1, 'internals:string')
      .catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toMatch(/WRONGTYPE/);
    expect(isReplyError(refused)).toBe(true);
    expect(isReplyError(new Error('Connection is closed.'))).toBe(false);
  });
});
