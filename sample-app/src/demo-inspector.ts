import { get, type Check } from './demo-http';

interface Clients {
  clients: { clientId: string; client?: { app: string; pid: number }; locks: number }[];
}

/**
 * Demo part 5b, the inspector page (`RedisLockInspectorModule` at `/locks`): the page answers
 * with HTML and its API lists this app's client, registered in Redis with its pid.
 */
export async function openInspectorPage(base: string, check: Check): Promise<string> {
  const page = await fetch(`${base}/locks`);
  const type = page.headers.get('content-type') ?? '';
  await page.text();
  check(
    page.status === 200 && type.startsWith('text/html'),
    `GET /locks should answer 200 with HTML, got ${page.status} ${type}`,
  );
  const clients = (await get<Clients>(`${base}/locks/api/clients`)).body.clients;
  const self = clients.find((entry) => entry.client?.pid === process.pid);
  check(self !== undefined, `GET /locks/api/clients should list this process (pid ${process.pid})`);
  console.log(
    `Inspector page: GET /locks ${page.status} (${type.split(';')[0]}); GET /locks/api/clients: ` +
      `${clients.length} registered, this app as ${self?.client?.app ?? 'missing'} (pid ${process.pid})\n`,
  );
  return `inspector page served`;
}
