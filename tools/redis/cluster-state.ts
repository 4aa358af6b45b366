/**
 * Forming a Redis Cluster from bare nodes and reading and waiting on its state, for the test
 * spawner in cluster.ts. All through admin connections (see AdminPool).
 */
import { LOOPBACK } from './redis-process';
import { parseInfo, untilNodes, type AdminPool } from './topology-admin';

/** Number of hash slots in a Redis Cluster. */
export const SLOTS = 16384;

/** One line of CLUSTER NODES: a node as one node sees it. */
export interface ClusterNodeView {
  id: string;
  port: number;
  role: 'master' | 'replica';
  /** The id of its master (replicas only). */
  masterId?: string;
  /** Owned slot ranges, inclusive. */
  slots: [number, number][];
  /** The viewer itself. */
  myself: boolean;
  /** Flagged fail, fail?, handshake or noaddr, or its link is not connected. */
  unhealthy: boolean;
}

/** Parses a CLUSTER NODES reply. */
export function parseClusterNodes(text: string): ClusterNodeView[] {
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id, address, flagList, master, , , , link, ...slotFields] = line.trim().split(' ');
      const flags = flagList.split(',');
      const slots = slotFields
        .filter((field) => !field.startsWith('['))
        .map((field): [number, number] => {
          const [start, end = start] = field.split('-').map(Number);
          return [start, end];
        });
      return {
        id,
        port: Number(address.split('@')[0].split(':').pop()),
        role: flags.includes('slave') ? 'replica' : 'master',
        masterId: master === '-' ? undefined : master,
        slots,
        myself: flags.includes('myself'),
        unhealthy:
          ['fail', 'fail?', 'handshake', 'noaddr'].some((flag) => flags.includes(flag)) ||
          (!flags.includes('myself') && link !== 'connected'),
      };
    });
}

/** The cluster as the node on `port` sees it (CLUSTER NODES). */
export async function readView(admin: AdminPool, port: number): Promise<ClusterNodeView[]> {
  return parseClusterNodes(String(await admin.get(port).call('CLUSTER', 'NODES')));
}

/** The node of `view` that owns `slot`. */
export function ownerOf(slot: number, view: ClusterNodeView[]): ClusterNodeView {
  const owner = view.find((node) =>
    node.slots.some(([first, last]) => first <= slot && slot <= last),
  );
  if (!owner) throw new Error(`no node owns slot ${slot}`);
  return owner;
}

/**
 * Makes a cluster of fresh nodes, as `redis-cli --cluster create` does but without its sleeps:
 * config epochs, the slots split evenly over the first `masters` ports, MEET, then each other
 * port REPLICATEs master `i % masters`.
 */
export async function formCluster(
  admin: AdminPool,
  ports: readonly number[],
  masters: number,
): Promise<void> {
  const call = (port: number, ...args: (string | number)[]) =>
    admin.get(port).call('CLUSTER', ...args);
  await Promise.all(ports.map((port, i) => call(port, 'SET-CONFIG-EPOCH', i + 1)));
  await Promise.all(
    ports.slice(0, masters).map((port, i) => {
      const [first, next] = [i, i + 1].map((n) => Math.floor((n * SLOTS) / masters));
      return call(port, 'ADDSLOTSRANGE', first, next - 1);
    }),
  );
  await Promise.all(ports.slice(1).map((port) => call(ports[0], 'MEET', LOOPBACK, port)));
  const ids = await Promise.all(ports.map((port) => call(port, 'MYID')));
  await Promise.all(
    ports.slice(masters).map(async (port, i) => {
      const masterId = String(ids[i % masters]);
      await untilNodes(`${port} meets its master`, async () =>
        (await readView(admin, port)).some((node) => node.id === masterId),
      );
      await call(port, 'REPLICATE', masterId);
    }),
  );
}

/**
 * Resolves when every node on `live()` reports cluster_state:ok, all of them agree on each
 * live node's role, master and slots with none flagged failing, `check` holds for that view,
 * and (with `links`) every live replica's master_link_status is up.
 */
export async function settleCluster(
  admin: AdminPool,
  live: () => number[],
  what: string,
  links: boolean,
  check: (view: ClusterNodeView[]) => boolean,
): Promise<void> {
  await untilNodes(what, async () => {
    const ports = live();
    const states = await Promise.all(
      ports.map(async (port) => {
        const state = parseInfo(String(await admin.get(port).call('CLUSTER', 'INFO')));
        const view = (await readView(admin, port)).filter((node) => ports.includes(node.port));
        const portOf = (id?: string) => view.find((node) => node.id === id)?.port;
        const shape = view
          .map((node) => `${node.port} ${node.role} ${portOf(node.masterId)} ${node.slots.join()}`)
          .sort()
          .join('\n');
        const healthy = state.cluster_state === 'ok' && view.every((node) => !node.unhealthy);
        return { view, shape, healthy, self: view.find((node) => node.myself)! };
      }),
    );
    if (!states.every((s) => s.healthy && s.shape === states[0].shape)) return false;
    if (!check(states[0].view)) return false;
    if (!links) return true;
    const replicas = states.filter((s) => s.self.role === 'replica').map((s) => s.self.port);
    const infos = await Promise.all(replicas.map((port) => admin.get(port).info('replication')));
    return infos.every((info) => parseInfo(info).master_link_status === 'up');
  });
}
