import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module';
import { startMetrics } from './telemetry';
import { startTracing } from './tracing';

/**
 * Starts the orders app: REDIS_URL (default redis://127.0.0.1:6379), PORT (default 3000),
 * HOST (default 127.0.0.1; 0.0.0.0 to accept outside connections), KEY_PREFIX (default
 * `sample-app:`), METRICS=console (print the lock metrics, see telemetry.ts), TRACES=console
 * (print the lock spans, see tracing.ts). SIGTERM/SIGINT
 * close it gracefully (locks released, connections closed).
 *
 *   curl -X POST localhost:3000/orders -H 'content-type: application/json' -d '{"amount":42}'
 *   curl -X POST localhost:3000/orders/1/pay
 *   curl -X POST localhost:3000/accounts -H 'content-type: application/json' -d '{"balance":100}'
 *   curl localhost:3000/accounts/1/balance
 *   curl -X POST localhost:3000/accounts/1/deposit -H 'content-type: application/json' -d '{"amount":10}'
 *   curl -X POST localhost:3000/wallets/transfer -H 'content-type: application/json' \
 *     -d '{"from":1,"to":2,"amount":7}'
 *   curl -X POST localhost:3000/exports/orders
 */
async function bootstrap(): Promise<void> {
  startMetrics();
  const tracing =
    process.env.TRACES === 'console' ? startTracing({ console: true }) !== undefined : false;
  const app = await NestFactory.create(
    AppModule.forRoot({
      redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      keyPrefix: process.env.KEY_PREFIX ?? 'sample-app:',
      tracing,
    }),
  );
  app.enableShutdownHooks();
  const port = Number(process.env.PORT ?? 3000);
  await app.listen(port, process.env.HOST ?? '127.0.0.1');
  new Logger('Main').log(`Orders app listening on ${await app.getUrl()}`);
}

bootstrap().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
