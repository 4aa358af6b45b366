/**
 * Finds names by pattern with SCAN in bounded batches (COUNT SCAN_BATCH per call), on the one
 * server or on every master of a Cluster, one master after the other, stopping as soon as the
 * caller has what it wants.
 */
import type { RedisClient, ServerClient } from '../stores/redis';

/** How many keys one SCAN call looks at (its COUNT hint). */
export const SCAN_BATCH = 250;

/** The nodes that hold keys: the server, or each master of a Cluster. */
function keyNodes(client: RedisClient): ServerClient[] {
  return client.isCluster ? client.nodes('master') : [client];
}

/** `text` with SCAN's glob characters escaped, to match literally (a keyPrefix). */
export function globEscape(text: string): string {
  return text.replace(/[*?[\]\\]/g, '\\$&');
}

/**
 * Calls `batch` with each SCAN reply's names (and the node they live on) matching `pattern`,
 * until `batch` returns true (enough) or every node has been scanned.
 */
export async function scanNames(
  client: RedisClient,
  pattern: string,
  batch: (names: string[], node: ServerClient) => Promise<boolean>,
): Promise<void> {
  for (const node of keyNodes(client)) {
    let cursor = '0';
    do {
      const [next, names] = (await node.command('scan', [
        cursor,
        'MATCH',
        pattern,
        'COUNT',
        SCAN_BATCH,
      ])) as [string, string[]];
      cursor = next;
      if (names.length > 0 && (await batch(names, node))) return;
    } while (cursor !== '0');
  }
}
