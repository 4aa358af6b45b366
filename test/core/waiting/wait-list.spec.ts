import { WaitList } from '../../../lib/core/waiting/wait-list';

describe('WaitList', () => {
  afterEach(() => {
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('grants turns in FIFO order, each to the waiter it names', async () => {
    const list = new WaitList<string, number>();
    const a = list.add(1, Infinity);
    const b = list.add(2, Infinity);
    const c = list.add(3, Infinity);
    expect(list.length).toBe(3);
    const order: number[] = [];
    while (list.head()) {
      const head = list.head()!;
      order.push(head.data);
      expect(list.grant(head, `turn ${head.data}`)).toBe(true);
      expect(head.done).toBe(true);
    }
    expect(order).toEqual([1, 2, 3]);
    await expect(Promise.all([a, b, c])).resolves.toEqual(['turn 1', 'turn 2', 'turn 3']);
    expect(list.length).toBe(0);
  });

  it('resolves null when the wait time passes, and removes the waiter', async () => {
    jest.useFakeTimers();
    const list = new WaitList<string, string>();
    const short = list.add('short', 100);
    const long = list.add('long', 300);
    jest.advanceTimersByTime(99);
    expect(list.length).toBe(2);
    jest.advanceTimersByTime(1);
    await expect(short).resolves.toBeNull();
    expect(list.length).toBe(1);
    expect(list.head()?.data).toBe('long');
    jest.advanceTimersByTime(200);
    await expect(long).resolves.toBeNull();
    expect(list.length).toBe(0);
  });

  it('never times out with an infinite wait', () => {
    jest.useFakeTimers();
    const list = new WaitList<string, string>();
    void list.add('patient', Infinity);
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1e9);
    expect(list.length).toBe(1);
  });

  it('rejects with the signal’s reason on abort and removes only that waiter', async () => {
    const list = new WaitList<string, string>();
    const controller = new AbortController();
    const first = list.add('first', Infinity);
    const aborted = list.add('aborted', Infinity, controller.signal);
    const reason = new Error('caller gave up');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
    expect(list.length).toBe(1);
    expect(list.head()?.data).toBe('first');
    list.grant(list.head()!, 'ok');
    await expect(first).resolves.toBe('ok');
  });

  it('rejects at once for a signal aborted before the call, without queueing', async () => {
    const onLeave = jest.fn();
    const list = new WaitList<string, string>(onLeave);
    const reason = new Error('already');
    await expect(list.add('x', 100, AbortSignal.abort(reason))).rejects.toBe(reason);
    expect(list.length).toBe(0);
    expect(onLeave).not.toHaveBeenCalled();
  });

  it('stops listening to the signal once the waiter left', async () => {
    const list = new WaitList<string, string>();
    const controller = new AbortController();
    const remove = jest.spyOn(controller.signal, 'removeEventListener');
    const waiting = list.add('x', Infinity, controller.signal);
    list.grant(list.head()!, 'ok');
    await expect(waiting).resolves.toBe('ok');
    expect(remove).toHaveBeenCalledWith('abort', expect.any(Function));
    controller.abort(new Error('too late'));
    expect(list.length).toBe(0);
  });

  it('returns false for a grant or fail to a waiter that already left', async () => {
    jest.useFakeTimers();
    const list = new WaitList<string, string>();
    const waiting = list.add('gone', 10);
    const ticket = list.head()!;
    jest.advanceTimersByTime(10);
    await expect(waiting).resolves.toBeNull();
    expect(ticket.done).toBe(true);
    expect(list.grant(ticket, 'late')).toBe(false);
    expect(list.fail(ticket, new Error('late'))).toBe(false);
    await expect(waiting).resolves.toBeNull();
  });

  it('fail rejects one waiter; failAll rejects every waiter with the reason', async () => {
    const list = new WaitList<string, number>();
    const one = list.add(1, Infinity);
    const two = list.add(2, 1000);
    const three = list.add(3, Infinity, new AbortController().signal);
    const first = new Error('first');
    expect(list.fail(list.head()!, first)).toBe(true);
    await expect(one).rejects.toBe(first);
    const all = new Error('shutdown');
    list.failAll(all);
    await expect(two).rejects.toBe(all);
    await expect(three).rejects.toBe(all);
    expect(list.length).toBe(0);
    expect(list.head()).toBeUndefined();
  });

  it('calls onLeave after each departure, once the waiter is out of the list', async () => {
    jest.useFakeTimers();
    const lengths: number[] = [];
    const list: WaitList<string, string> = new WaitList(() => lengths.push(list.length));
    const controller = new AbortController();
    const granted = list.add('granted', Infinity);
    const timedOut = list.add('timed out', 50);
    const aborted = list.add('aborted', Infinity, controller.signal);
    const failed = list.add('failed', Infinity);
    list.grant(list.head()!, 'ok');
    expect(lengths).toEqual([3]);
    jest.advanceTimersByTime(50);
    expect(lengths).toEqual([3, 2]);
    controller.abort(new Error('abort'));
    expect(lengths).toEqual([3, 2, 1]);
    list.failAll(new Error('fail'));
    expect(lengths).toEqual([3, 2, 1, 0]);
    await Promise.allSettled([granted, timedOut, aborted, failed]);
    list.grant({ data: 'x', done: true }, 'nothing');
    expect(lengths).toHaveLength(4);
  });

  it('unrefs its timers: a waiting list does not keep the process alive', async () => {
    const spy = jest.spyOn(global, 'setTimeout');
    const list = new WaitList<string, string>();
    const waiting = list.add('x', 60_000);
    expect(spy).toHaveBeenCalledTimes(1);
    const timer = spy.mock.results[0].value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    list.failAll(new Error('done'));
    await expect(waiting).rejects.toThrow('done');
  });
});
