import {
  Catch,
  Inject,
  Logger,
  Optional,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { throwError, type Observable } from 'rxjs';
import { lockErrorAnswer, type BusyStatus, type LockErrorAnswer } from './lock-error-answer';
import { LockAcquireTimeoutError, LockKeyError, LockRedisError } from '../../errors';
import { redisErrorAnswer, type RedisErrorStatus } from './redis-error-answer';
import { LOGGER_CONTEXT } from '../redis-lock.constants';
import { RESOLVED_LOCK_OPTIONS } from '../lock-tokens';
import type { ResolvedModuleOptions } from '../options/redis-lock-options.validation';

/**
 * Answers a busy lock (LockAcquireTimeoutError) with `busyStatus` (409 by default), a bad key
 * argument (LockKeyError) with 400 and a Redis failure (LockRedisError) with `redisErrorStatus`
 * (503 by default, `Retry-After: 1`), on HTTP (Express or Fastify, with `Retry-After`), RPC (an
 * RpcException-shaped error) and GraphQL (`extensions.code`, no stack). Every other exception
 * is left to Nest's default handling. Registered globally by RedisLockModule unless
 * `mapErrors: false`; usable with `@UseFilters(LockExceptionFilter)` then.
 */
@Catch(LockAcquireTimeoutError, LockKeyError, LockRedisError)
export class LockExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger(LOGGER_CONTEXT);
  private readonly busyStatus: BusyStatus;
  private readonly redisErrorStatus: RedisErrorStatus;
  private readonly exposeKeys: boolean;

  constructor(
    @Inject(RESOLVED_LOCK_OPTIONS) options: ResolvedModuleOptions,
    @Optional() private readonly adapterHost?: HttpAdapterHost,
  ) {
    ({
      busyStatus: this.busyStatus,
      redisErrorStatus: this.redisErrorStatus,
      exposeKeys: this.exposeKeys,
    } = options);
  }

  /** Answers in the transport of `host`; returns what RPC and GraphQL expect back. */
  catch(
    exception: LockAcquireTimeoutError | LockKeyError | LockRedisError,
    host: ArgumentsHost,
  ): unknown {
    const answer =
      exception instanceof LockRedisError
        ? redisErrorAnswer(exception, this.redisErrorStatus, this.exposeKeys)
        : lockErrorAnswer(exception, this.busyStatus, this.exposeKeys);
    this.logger.debug(`Answered ${answer.statusCode}: ${exception.message}`);
    const type = host.getType<string>();
    if (type === 'http') return this.replyHttp(answer, host);
    if (type === 'graphql') return graphqlError(answer);
    if (type === 'ws') {
      host
        .switchToWs()
        .getClient<{ emit(event: string, data: unknown): void }>()
        .emit('exception', {
          status: 'error',
          ...body(answer),
        });
      return undefined;
    }
    return rpcError(answer);
  }

  private replyHttp(answer: LockErrorAnswer, host: ArgumentsHost): void {
    const adapter = this.adapterHost?.httpAdapter;
    const response: unknown = host.switchToHttp().getResponse();
    if (adapter === undefined) throw new Error('LockExceptionFilter: no HTTP adapter');
    if (adapter.isHeadersSent(response)) {
      adapter.end(response);
      return;
    }
    if (answer.retryAfter !== undefined) {
      adapter.setHeader(response, 'Retry-After', String(answer.retryAfter));
    }
    adapter.reply(response, body(answer), answer.statusCode);
  }
}

function body({ statusCode, message, error }: LockErrorAnswer) {
  return { statusCode, message, error };
}

/** What BaseRpcExceptionFilter sends for an RpcException with an object error. */
function rpcError(answer: LockErrorAnswer): Observable<never> {
  const error: Record<string, unknown> = { status: 'error', ...body(answer) };
  if (answer.retryAfter !== undefined) error.retryAfter = answer.retryAfter;
  return throwError(() => error);
}

/**
 * An error GraphQL reports with these `extensions` (graphql-js copies an original error's
 * extensions and stack); its stack is the message line only, so no frames reach the client.
 */
function graphqlError(answer: LockErrorAnswer): Error {
  const error = new Error(answer.message);
  const extensions: Record<string, unknown> = { code: answer.code };
  if (answer.retryAfter !== undefined) extensions.retryAfter = answer.retryAfter;
  Object.defineProperty(error, 'extensions', { value: extensions, enumerable: true });
  error.stack = `Error: ${answer.message}`;
  return error;
}
