import { ApolloServer, type ApolloServerOptions, type BaseContext } from '@apollo/server';
import { ApolloDriver, type ApolloDriverConfig } from '@nestjs/apollo';
import type { INestApplication } from '@nestjs/common';
import { Args, GraphQLModule, Int, Mutation, Query, Resolver } from '@nestjs/graphql';
import { LockRedisError, LockService, Locked } from '../../lib';
import { suiteRedis } from '../support/suite-redis';
import { httpApp, type CapturingLogger, type ModuleOptions } from './nest-kit';

@Resolver()
class OrdersResolver {
  @Query(() => String)
  hello() {
    return 'hello';
  }

  @Mutation(() => Int)
  @Locked('order:<0>', { waitTime: 50 })
  async pay(@Args('id', { type: () => Int }) id: number) {
    return Promise.resolve(id);
  }

  @Mutation(() => String)
  @Locked({ key: (note: string) => (note === 'bad' ? '' : `note:${note}`), waitTime: 50 })
  async note(@Args('note') note: string) {
    return Promise.resolve(note);
  }

  @Mutation(() => String)
  async redisDown(): Promise<string> {
    const refused = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    return Promise.reject(new LockRedisError('order:3', 'acquire', refused));
  }

  @Mutation(() => String)
  async fail(): Promise<string> {
    return Promise.reject(new Error('resolver failure'));
  }
}

/**
 * The Apollo driver with its server started but not mounted on HTTP: the HTTP integration
 * packages (@as-integrations/express5, /fastify) are not installed here. Queries run through
 * `executeOperation`, which resolves and formats errors as the HTTP path does.
 */
class InProcessApolloDriver extends ApolloDriver {
  override async registerServer(options: ApolloDriverConfig): Promise<void> {
    const server = new ApolloServer(options as ApolloServerOptions<BaseContext>);
    await server.start();
    this.apolloServer = server;
  }

  get server(): ApolloServer {
    return this.apolloServer;
  }
}

interface GraphQLAnswer {
  errors?: { message: string; extensions: Record<string, unknown> }[];
}

describe('error mapping on GraphQL (Apollo, code first)', () => {
  const server = suiteRedis();
  let app: INestApplication | undefined;
  let logger: CapturingLogger;
  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  async function start(options: ModuleOptions = {}) {
    ({ app, logger } = await httpApp('express', server.redis, options, {
      imports: [
        GraphQLModule.forRoot<ApolloDriverConfig>({
          driver: InProcessApolloDriver,
          autoSchemaFile: true,
          includeStacktraceInErrorResponses: true, // as in development: stacks would show
        }),
      ],
      providers: [OrdersResolver],
    }));
    return app.get(LockService);
  }

  async function post(query: string): Promise<GraphQLAnswer> {
    const graphql = app!.get<GraphQLModule<InProcessApolloDriver>>(GraphQLModule);
    const response = await graphql.graphQlAdapter.server.executeOperation({ query });
    if (response.body.kind !== 'single') throw new Error('expected a single result');
    return response.body.singleResult as GraphQLAnswer;
  }

  /** The answer to paying order `id` while another caller holds it for 10 s. */
  async function payWhileHeld(locks: LockService, id: number): Promise<GraphQLAnswer> {
    const held = await locks.acquire(`order:${id}`, { leaseTime: 10_000 });
    const answer = await post(`mutation { pay(id: ${id}) }`);
    await held.release();
    return answer;
  }

  /**
   * The one error of `errors`, expected to carry `message`, `code` and `retryAfter`, and a stack
   * trace of its message alone (no frames).
   */
  function mappedError(
    errors: GraphQLAnswer['errors'],
    message: string,
    code: string,
    retryAfter: number,
  ) {
    expect(errors).toHaveLength(1);
    const [error] = errors!;
    expect(error.message).toBe(message);
    expect(error.extensions.code).toBe(code);
    expect(error.extensions.retryAfter).toBe(retryAfter);
    expect(error.extensions.stacktrace).toEqual([`Error: ${error.message}`]);
    return error;
  }

  it('answers a busy lock with extensions.code CONFLICT, no stack frames, no advice', async () => {
    const { errors } = await payWhileHeld(await start(), 1);
    const message = 'The resource is locked by another operation.';
    const error = mappedError(errors, message, 'CONFLICT', 10);
    expect(JSON.stringify(error)).not.toMatch(/order:1|waitTime|tryAcquire|lock-engine/);
    expect(logger.at('error')).toEqual([]);
  });

  it('uses LOCKED for busyStatus 423 and BAD_USER_INPUT for a bad key', async () => {
    const busy = await payWhileHeld(await start({ busyStatus: 423 }), 2);
    expect(busy.errors?.[0].extensions.code).toBe('LOCKED');

    const bad = await post('mutation { note(note: "bad") }');
    expect(bad.errors?.[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(bad.errors?.[0].message).toBe('Invalid lock key argument.');
    expect(logger.at('error')).toEqual([]);
  });

  it('answers a Redis failure with SERVICE_UNAVAILABLE and retryAfter 1, no stack frames', async () => {
    await start();
    const { errors } = await post('mutation { redisDown }');
    const message = 'The lock service is unavailable.';
    const error = mappedError(errors, message, 'SERVICE_UNAVAILABLE', 1);
    expect(JSON.stringify(error)).not.toMatch(/order:3|ECONNREFUSED/);
    expect(logger.at('error')).toEqual([]);
  });

  it('leaves other errors to Nest and Apollo', async () => {
    await start();
    const { errors } = await post('mutation { fail }');
    expect(errors?.[0].message).toBe('resolver failure');
    expect(errors?.[0].extensions.code).toBe('INTERNAL_SERVER_ERROR');
    expect((errors?.[0].extensions.stacktrace as string[]).some((l) => /^\s*at /.test(l))).toBe(
      true,
    );
    expect(logger.at('error').join('\n')).toContain('resolver failure');
  });
});
