import {
  BadRequestException,
  Controller,
  Delete,
  ForbiddenException,
  Get,
  Header,
  Headers,
  HttpCode,
  HttpException,
  HttpStatus,
  Inject,
  Param,
  Post,
  Query,
  ServiceUnavailableException,
  UseGuards,
  type Type,
} from '@nestjs/common';
import { LockError, LockKeyError, LockOptionsError, LockRedisError } from '../errors';
import { LockService } from '../nest/lock.service';
import { LockInspector } from '../inspector';
import { PAGE_CSP, pageHtml } from './page-html';
import type { ResolvedInspectorPageOptions } from './inspector-page.options';

/** The header a force unlock must carry: a cross-site form or link cannot send it. */
export const UNLOCK_HEADER = 'x-lock-inspector';

/** `value` made JSON-safe: Infinity (a lease without end) as the string "Infinity". */
function json<T>(value: T): unknown {
  return JSON.parse(
    JSON.stringify(value, (_key, v: unknown) => (v === Infinity ? 'Infinity' : v)),
  ) as unknown;
}

/** A query parameter given once, as a string (Express and Fastify turn `?a=1&a=2` into a list). */
function single(value: unknown, name: string): string | undefined {
  if (value === undefined || typeof value === 'string') return value;
  throw new BadRequestException(`Query parameter "${name}" must be given once.`);
}

/** The library's errors as HTTP answers: bad input 400, Redis 503, no Redis at all 501. */
async function answering<T>(read: () => Promise<T>): Promise<T> {
  try {
    return await read();
  } catch (error) {
    if (error instanceof LockOptionsError || error instanceof LockKeyError) {
      throw new BadRequestException(error.message);
    }
    if (error instanceof LockRedisError) throw new ServiceUnavailableException(error.message);
    if (error instanceof LockError) {
      throw new HttpException(error.message, HttpStatus.NOT_IMPLEMENTED);
    }
    throw error;
  }
}

/**
 * The page's controller, made for one `register()`: the page at `path`, its JSON API under
 * `path/api`, every route behind `guard` when there is one. Only the types of @nestjs/common:
 * it runs on Express and Fastify alike.
 */
export function inspectorPageController(options: ResolvedInspectorPageOptions): Type<unknown> {
  const html = pageHtml(options.allowUnlock);

  @Controller(options.path)
  class LockInspectorPageController {
    constructor(
      @Inject(LockInspector) private readonly inspector: LockInspector,
      @Inject(LockService) private readonly locks: LockService,
    ) {}

    /** The page: a self-contained HTML document. */
    @Get()
    @Header('Content-Type', 'text/html; charset=utf-8')
    @Header('Content-Security-Policy', PAGE_CSP)
    @Header('Cache-Control', 'no-store')
    @Header('X-Content-Type-Options', 'nosniff')
    @Header('Referrer-Policy', 'no-referrer')
    page(): string {
      return html;
    }

    /** The held locks matching `match`, at most `limit`, each with its waiting processes. */
    @Get('api/locks')
    @Header('Cache-Control', 'no-store')
    async list(@Query('match') match?: unknown, @Query('limit') limit?: unknown) {
      const pattern = single(match, 'match') || '*';
      const most = single(limit, 'limit');
      const count = most === undefined || most === '' ? undefined : Number(most);
      if (count !== undefined && !/^\d+$/.test(most!)) {
        throw new BadRequestException('Query parameter "limit" must be a whole number.');
      }
      const locks = await answering(() =>
        this.inspector.list({ match: pattern, limit: count, waiting: true }),
      );
      return json({ match: pattern, allowUnlock: options.allowUnlock, locks });
    }

    /** What lives under `key` (LockInspector.describe). */
    @Get('api/locks/:key')
    @Header('Cache-Control', 'no-store')
    async describe(@Param('key') key: string) {
      return json(await answering(() => this.inspector.describe(key)));
    }

    /** The registered clients, each with how many locks it holds. */
    @Get('api/clients')
    @Header('Cache-Control', 'no-store')
    async clients() {
      return json({ clients: await answering(() => this.inspector.clients()) });
    }

    /** Force unlock (allowUnlock only): LockService.forceUnlock(key). */
    @Delete('api/locks/:key')
    @Header('Cache-Control', 'no-store')
    unlock(@Param('key') key: string, @Headers(UNLOCK_HEADER) marker?: string) {
      return this.forceUnlock(key, marker);
    }

    /** The same as DELETE, for clients that cannot send it. */
    @Post('api/locks/:key')
    @HttpCode(200)
    @Header('Cache-Control', 'no-store')
    unlockByPost(@Param('key') key: string, @Headers(UNLOCK_HEADER) marker?: string) {
      return this.forceUnlock(key, marker);
    }

    private async forceUnlock(key: string, marker: string | undefined) {
      if (!options.allowUnlock) {
        throw new ForbiddenException(
          'Unlocking is off: RedisLockInspectorModule.register({ allowUnlock: true }) turns it on.',
        );
      }
      if (marker === undefined || marker === '') {
        throw new ForbiddenException(`A force unlock needs the header ${UNLOCK_HEADER}.`);
      }
      const unlocked = await answering(() => this.locks.forceUnlock(key));
      return { key, unlocked };
    }
  }

  if (options.guard) UseGuards(options.guard)(LockInspectorPageController);
  return LockInspectorPageController;
}
