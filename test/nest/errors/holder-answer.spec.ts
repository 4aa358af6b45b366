import { LockAcquireTimeoutError } from '../../../lib';
import { lockErrorAnswer } from '../../../lib/nest/errors/lock-error-answer';

// What a busy answer (HTTP, RPC and GraphQL share it) says of the holder's process.
describe('busy answers and LockAcquireTimeoutError.holder', () => {
  const holder = { app: 'billing', host: 'web-1', pid: 4242 };
  const error = new LockAcquireTimeoutError('order:7', 100, false, 1_000, holder);

  it('names the holder with exposeKeys: true', () => {
    expect(lockErrorAnswer(error, 409, true).message).toBe(
      'Lock "order:7" is held by another operation (app billing on host web-1, pid 4242).',
    );
  });

  it('names neither key nor holder by default', () => {
    const { message } = lockErrorAnswer(error, 409, false);
    expect(message).toBe('The resource is locked by another operation.');
    expect(message).not.toContain('billing');
  });

  it('without a known holder, says what it said before', () => {
    const plain = new LockAcquireTimeoutError('order:7', 100);
    expect(lockErrorAnswer(plain, 423, true).message).toBe(
      'Lock "order:7" is held by another operation.',
    );
  });
});
