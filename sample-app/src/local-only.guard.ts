import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';

const LOOPBACK = new Set(['127.0.0.1', '::1', '::ffff:127.0.0.1']);

/**
 * Lets only requests from this machine through (the inspector page's guard here; put your own
 * authentication there). Reads the socket's address, so it works on Express and Fastify.
 */
@Injectable()
export class LocalOnlyGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ socket?: { remoteAddress?: string } }>();
    return LOOPBACK.has(request.socket?.remoteAddress ?? '');
  }
}
