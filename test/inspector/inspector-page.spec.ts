/**
 * The inspector page (RedisLockInspectorModule), end to end: a Nest application on Express serves
 * it, headless Chromium (playwright-core) drives it, and the locks are held by other processes
 * (holder-process.ts). Needs Chromium (CHROMIUM_BIN, default /usr/bin/chromium): without it the
 * suite is skipped with a note, unless REQUIRE_BROWSER=1 (CI), which makes that an error.
 * INSPECTOR_PAGE_SCREENSHOT=<file.png> saves the page with a few locks held (docs/inspector-page.png).
 */
import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import {
  Injectable,
  type CanActivate,
  type ExecutionContext,
  type INestApplication,
} from '@nestjs/common';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  LockInspector,
  LockService,
  RedisLockInspectorModule,
  type RedisLockInspectorOptions,
} from '../../lib';
import { killChildren } from '../support/child-processes';
import { holderProcess, removeHolderBuild, type HolderProcess } from '../support/holder-process';
import { lockModule } from '../support/lock-app';
import { suiteRedis } from '../support/suite-redis';
import { sleep } from '../../tools/time';

const CHROMIUM = process.env.CHROMIUM_BIN ?? '/usr/bin/chromium';
const hasBrowser = existsSync(CHROMIUM);
if (!hasBrowser && process.env.REQUIRE_BROWSER === '1') {
  throw new Error(`REQUIRE_BROWSER=1 but Chromium is not at ${CHROMIUM}: install chromium.`);
}
if (!hasBrowser) {
  process.stderr.write(
    `Note: Chromium not found at ${CHROMIUM} (CHROMIUM_BIN): the inspector page suite is skipped.\n`,
  );
}
const describeWithBrowser = hasBrowser ? describe : describe.skip;

/** A Redisson client's owner field, written directly: an unregistered ("unknown") client. */
const JAVA_CLIENT = '6f1c6a1e-2222-4000-8000-00000000beef';
/** A key that would run script if the page put it into HTML unescaped. */
const HOSTILE_KEY = `<img src=x onerror="window.__pwned=1">&"'`;

/** One row of the page's locks table, as shown. */
interface Row {
  kind: string;
  holders: string[];
  ttl: string;
  waiting: string;
  queue: string;
  permits: string;
  unlock: boolean;
}

/** Reads the locks table in the page (a string: the test's TypeScript has no DOM types). */
const READ_ROWS = `(() => {
  const rows = {};
  for (const tr of document.querySelectorAll('#locks tbody tr[data-key]')) {
    const text = (name) => tr.querySelector('td.' + name).textContent;
    rows[tr.getAttribute('data-key')] = {
      kind: text('kind-cell'),
      holders: Array.from(tr.querySelectorAll('.holder'), (line) => line.textContent),
      ttl: text('ttl'),
      waiting: text('waiting'),
      queue: text('queue'),
      permits: text('permits'),
      unlock: tr.querySelector('button.unlock') !== null,
    };
  }
  return rows;
})()`;

function readRows(page: Page): Promise<Record<string, Row>> {
  return page.evaluate<Record<string, Row>>(READ_ROWS);
}

/** Polls the page's table until `done` holds of it (10 s), and returns it. */
async function rowsUntil(
  page: Page,
  done: (rows: Record<string, Row>) => boolean,
  what: string,
): Promise<Record<string, Row>> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const rows = await readRows(page);
    if (done(rows)) return rows;
    if (Date.now() > deadline) {
      throw new Error(`the page never showed ${what}: ${JSON.stringify(rows)}`);
    }
    await sleep(100);
  }
}

/** A TTL cell's text as ms ("41.3 s"). */
function ttlMs(text: string): number {
  const match = /^(\d+(?:\.\d+)?) s$/.exec(text);
  if (!match) throw new Error(`not a TTL in seconds: ${JSON.stringify(text)}`);
  return Number(match[1]) * 1000;
}

/** Lets a request through only with `x-pass: yes`. */
@Injectable()
class HeaderGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<{ headers: Record<string, unknown> }>();
    return request.headers['x-pass'] === 'yes';
  }
}

describeWithBrowser('the inspector page (RedisLockInspectorModule)', () => {
  jest.setTimeout(60_000);
  const server = suiteRedis();
  const prefix = `ip:${randomUUID().slice(0, 8)}:`;
  let browser: Browser;
  let billing: HolderProcess;
  let payments: HolderProcess;
  let inspector: LockInspector;
  let readOnly: PageApp;
  let page: Page;

  /** A Nest application on Express with the page, listening on loopback. */
  interface PageApp {
    readonly app: INestApplication;
    readonly base: string;
  }

  async function pageApp(options: RedisLockInspectorOptions): Promise<PageApp> {
    const { moduleRef } = await lockModule(
      server.redis,
      { keyPrefix: prefix, appName: 'page-app' },
      { imports: [RedisLockInspectorModule.register(options)] },
    );
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    server.closing(app);
    const { port } = (app.getHttpServer() as { address(): AddressInfo }).address();
    return { app, base: `http://127.0.0.1:${port}` };
  }

  beforeAll(async () => {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
      ],
    });
    [billing, payments] = await Promise.all([
      holderProcess(server.redis.url, prefix, 'billing-worker'),
      holderProcess(server.redis.url, prefix, 'payments-api'),
    ]);
    inspector = server.closing(
      await LockInspector.connect({ redis: server.redis.url, keyPrefix: prefix }),
    );
    readOnly = await pageApp({});
  });
  beforeEach(async () => {
    page = await browser.newPage({ viewport: { width: 1180, height: 640 } });
  });
  afterEach(async () => {
    await page.close();
  });
  afterAll(async () => {
    await browser?.close();
    await killChildren();
    removeHolderBuild();
  });

  it("a lock held by another process shows its holder's app, host and pid, and a TTL that falls; it goes once released", async () => {
    await billing.send('lease order:1042 50000');
    await page.goto(`${readOnly.base}/locks`);
    const rows = await rowsUntil(page, (r) => 'order:1042' in r, 'order:1042');
    expect(rows['order:1042']).toMatchObject({
      kind: 'plain',
      holders: [`billing-worker on ${hostname()}, pid ${billing.pid}`],
      waiting: '0',
      queue: '',
      permits: '',
      unlock: false,
    });
    // The TTL counts down between refreshes (every 1.5 s) and across them (no watchdog here).
    const seen: number[] = [];
    for (let i = 0; i < 12; i++) {
      seen.push(ttlMs((await readRows(page))['order:1042'].ttl));
      await sleep(250);
    }
    expect(seen[0]).toBeLessThanOrEqual(50_000);
    expect(seen[seen.length - 1]).toBeLessThan(seen[0] - 2_000);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeLessThanOrEqual(seen[i - 1] + 300);

    await billing.send('release order:1042');
    await rowsUntil(page, (r) => !('order:1042' in r), 'order:1042 gone');
  });

  it('shows how many processes wait for a lock while someone waits', async () => {
    await billing.send('lock order:7');
    await page.goto(`${readOnly.base}/locks`);
    await rowsUntil(page, (r) => r['order:7']?.waiting === '0', 'order:7, nobody waiting');
    const waiting = readOnly.app
      .get(LockService)
      .acquire('order:7', { waitTime: 20_000 })
      .then((handle) => handle.release());
    await rowsUntil(page, (r) => r['order:7']?.waiting === '1', 'order:7 with one waiter');
    await billing.send('release order:7');
    await waiting;
    await rowsUntil(page, (r) => !('order:7' in r), 'order:7 gone');
  });

  it('every kind: read-write holders, a fair queue, semaphore permits, an unknown client; the filter; keys shown as text', async () => {
    await billing.send('read account:7');
    await payments.send('read account:7');
    await billing.send('fair payout:batch');
    await payments.send('fairwait payout:batch');
    await payments.send('permit export:slots 3');
    await billing.send('lock order:1043');
    await server.raw.hset(`${prefix}invoice:88`, `${JAVA_CLIENT}:57`, 1);
    await server.raw.pexpire(`${prefix}invoice:88`, 30_000);
    await server.raw.hset(`${prefix}${HOSTILE_KEY}`, `${JAVA_CLIENT}:58`, 1);
    await server.raw.pexpire(`${prefix}${HOSTILE_KEY}`, 30_000);

    await page.goto(`${readOnly.base}/locks`);
    const rows = await rowsUntil(
      page,
      (r) => r['payout:batch']?.queue === '1' && HOSTILE_KEY in r && 'export:slots' in r,
      'every kind',
    );
    expect(rows['account:7'].kind).toBe('read-write');
    expect([...rows['account:7'].holders].sort()).toEqual([
      `billing-worker on ${hostname()}, pid ${billing.pid}read`,
      `payments-api on ${hostname()}, pid ${payments.pid}read`,
    ]);
    expect(rows['payout:batch']).toMatchObject({ kind: 'fair', queue: '1' });
    expect(rows['export:slots']).toMatchObject({
      kind: 'semaphore',
      permits: '1 used / 2 free',
      holders: [`payments-api on ${hostname()}, pid ${payments.pid}`],
    });
    expect(rows['invoice:88'].holders).toEqual(['unknown client 6f1c6a1e']);
    // The hostile key is text in its cell: no element was made of it, no script ran.
    expect(rows[HOSTILE_KEY].kind).toBe('plain');
    expect(await page.locator('#locks td.key', { hasText: HOSTILE_KEY }).count()).toBe(1);
    expect(await page.locator('#locks img').count()).toBe(0);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    // The clients table names both holder processes.
    await page.waitForFunction(
      `document.querySelector('#clients tbody').textContent.includes('payments-api')`,
    );
    expect(await page.locator('#clients tbody').textContent()).toContain('billing-worker');

    const screenshot = process.env.INSPECTOR_PAGE_SCREENSHOT;
    if (screenshot) {
      await server.raw.del(`${prefix}${HOSTILE_KEY}`);
      await rowsUntil(page, (r) => !(HOSTILE_KEY in r), 'the hostile key gone');
      await page.screenshot({ path: screenshot, fullPage: true });
    }

    // The filter: text is matched as a part of the key, and lands in the page's address.
    await page.fill('#match', 'account');
    await rowsUntil(page, (r) => Object.keys(r).join() === 'account:7', 'only account:7');
    expect(new URL(page.url()).searchParams.get('match')).toBe('account');
    await page.fill('#match', 'order:*');
    await rowsUntil(page, (r) => Object.keys(r).join() === 'order:1043', 'only order:1043');
  });

  it('the JSON API: describe a key (one with a slash too), list, clients', async () => {
    await billing.send('lock files/a.txt');
    const described = (await (
      await fetch(`${readOnly.base}/locks/api/locks/${encodeURIComponent('files/a.txt')}`)
    ).json()) as { key: string; kind: string; holders: { client: { pid: number } }[] };
    expect(described).toMatchObject({ key: 'files/a.txt', kind: 'plain' });
    expect(described.holders[0].client.pid).toBe(billing.pid);
    const listed = await fetch(`${readOnly.base}/locks/api/locks?match=files/*&limit=5`);
    expect(listed.status).toBe(200);
    expect(await listed.json()).toMatchObject({
      match: 'files/*',
      allowUnlock: false,
      locks: [{ key: 'files/a.txt', waiting: 0 }],
    });
    const clients = (await (await fetch(`${readOnly.base}/locks/api/clients`)).json()) as {
      clients: { client?: { app: string } }[];
    };
    expect(clients.clients.map((c) => c.client?.app)).toEqual(
      expect.arrayContaining(['billing-worker', 'payments-api', 'page-app']),
    );
    expect((await fetch(`${readOnly.base}/locks/api/locks?limit=x`)).status).toBe(400);
  });

  it('without allowUnlock: no unlock button, and the API refuses to unlock (403)', async () => {
    await billing.send('lock kept:1');
    await page.goto(`${readOnly.base}/locks`);
    const rows = await rowsUntil(page, (r) => 'kept:1' in r, 'kept:1');
    expect(rows['kept:1'].unlock).toBe(false);
    expect(await page.locator('button').count()).toBe(0);
    for (const method of ['DELETE', 'POST']) {
      const answer = await fetch(`${readOnly.base}/locks/api/locks/kept%3A1`, {
        method,
        headers: { 'x-lock-inspector': 'unlock' },
      });
      expect(answer.status).toBe(403);
    }
    expect((await inspector.describe('kept:1')).kind).toBe('plain');
  });

  it('with allowUnlock: the row’s button frees the lock (the API wants its header)', async () => {
    const admin = await pageApp({ path: '/admin/locks/', allowUnlock: true });
    await billing.send('lock stuck:1');
    const bare = await fetch(`${admin.base}/admin/locks/api/locks/stuck%3A1`, { method: 'DELETE' });
    expect(bare.status).toBe(403);
    await page.goto(`${admin.base}/admin/locks`);
    const rows = await rowsUntil(page, (r) => 'stuck:1' in r, 'stuck:1');
    expect(rows['stuck:1'].unlock).toBe(true);
    page.once('dialog', (dialog) => void dialog.accept());
    await page.locator('#locks tr[data-key="stuck:1"] button.unlock').click();
    await rowsUntil(page, (r) => !('stuck:1' in r), 'stuck:1 gone');
    expect((await inspector.describe('stuck:1')).kind).toBe('free');
    expect(await page.locator('#status').textContent()).toMatch(/held|Unlocked stuck:1/);
  });

  it('the guard guards the page and every API route (403 when it denies)', async () => {
    const guarded = await pageApp({ path: 'guarded', guard: HeaderGuard, allowUnlock: true });
    for (const path of [
      '/guarded',
      '/guarded/api/locks',
      '/guarded/api/locks/a',
      '/guarded/api/clients',
    ]) {
      expect((await fetch(`${guarded.base}${path}`)).status).toBe(403);
    }
    const denied = await fetch(`${guarded.base}/guarded/api/locks/a`, {
      method: 'DELETE',
      headers: { 'x-lock-inspector': 'unlock' },
    });
    expect(denied.status).toBe(403);
    const allowed = await fetch(`${guarded.base}/guarded/api/locks`, {
      headers: { 'x-pass': 'yes' },
    });
    expect(allowed.status).toBe(200);
    const html = await fetch(`${guarded.base}/guarded`, { headers: { 'x-pass': 'yes' } });
    expect(html.status).toBe(200);
    expect(html.headers.get('content-type')).toMatch(/^text\/html/);
    expect(html.headers.get('content-security-policy')).toMatch(/script-src 'sha256-/);
    // In the browser (no x-pass header), the page itself is refused.
    const answer = await page.goto(`${guarded.base}/guarded`);
    expect(answer?.status()).toBe(403);
  });
});
