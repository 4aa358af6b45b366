import { Injectable, type CallHandler, type NestInterceptor } from '@nestjs/common';
import type { Observable } from 'rxjs';
import { ChainHandles } from '../core';

/**
 * Runs each handled call (HTTP, RPC, GraphQL, WebSocket) in a scope of its own that records the
 * handles it takes with `acquire()`: a `@Locked` call of the same request on such a handle's
 * key then fails at once with LockSelfDeadlockError instead of waiting for itself. Registered
 * globally by RedisLockModule.
 */
@Injectable()
export class ChainScopeInterceptor implements NestInterceptor {
  intercept(_context: unknown, next: CallHandler): Observable<unknown> {
    // Nest binds the rest of the call (later interceptors, the handler) to the context in which
    // handle() is called.
    return ChainHandles.inScope(() => next.handle());
  }
}
