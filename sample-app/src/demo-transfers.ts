import { count, get, ms, ok, post, statusLine, timed, type Check } from './demo-http';
import type { Wallet } from './wallets.repository';
import type { TransferReceipt } from './wallets.service';

const EACH_WAY = 20;
const A_TO_B = 7;
const B_TO_A = 5;
const OPENING_BALANCE = 1000;

/**
 * Demo part 4, the multi-lock `['wallet:funds:<from>', 'wallet:funds:<to>']`: 20 transfers
 * A→B and 20 B→A, interleaved and fired at once. Locking one wallet then the other would
 * deadlock here (A→B holds A and waits for B, B→A holds B and waits for A); the multi-lock takes
 * both or none. Every transfer must succeed, alone on its wallets, and the total must not change.
 */
export async function transferBothWays(base: string, check: Check): Promise<string> {
  const [a, b] = await Promise.all([openWallet(base), openWallet(base)]);
  const burst = await timed(() =>
    Promise.all(
      Array.from({ length: EACH_WAY * 2 }, (_, i) =>
        post<TransferReceipt>(
          `${base}/wallets/transfer`,
          i % 2 === 0
            ? { from: a.id, to: b.id, amount: A_TO_B }
            : { from: b.id, to: a.id, amount: B_TO_A },
        ),
      ),
    ),
  );
  const replies = burst.result;
  const [finalA, finalB] = await Promise.all([
    get<Wallet>(`${base}/wallets/${a.id}`),
    get<Wallet>(`${base}/wallets/${b.id}`),
  ]);
  const expectedA = OPENING_BALANCE - EACH_WAY * A_TO_B + EACH_WAY * B_TO_A;
  const expectedB = OPENING_BALANCE + EACH_WAY * A_TO_B - EACH_WAY * B_TO_A;
  const total = finalA.body.balance + finalB.body.balance;
  const mostAtOnce = Math.max(0, ...ok(replies).map((receipt) => receipt.transfersAtOnce));

  console.log(
    `4) ${EACH_WAY} POST /wallets/transfer ${a.id}→${b.id} (${A_TO_B} each) and ${EACH_WAY} ` +
      `${b.id}→${a.id} (${B_TO_A} each), interleaved, all at once (multi-lock on both wallets)`,
  );
  console.log(
    `   ${statusLine(replies)} in ${ms(burst.ms)}` +
      (count(replies, 200) === replies.length ? ' (all went through: no deadlock)' : '') +
      `; at most ${mostAtOnce} at once on a wallet`,
  );
  console.log(
    `   wallet ${a.id}: ${OPENING_BALANCE} -> ${finalA.body.balance} (expected ${expectedA}), ` +
      `wallet ${b.id}: ${OPENING_BALANCE} -> ${finalB.body.balance} (expected ${expectedB}), ` +
      `total ${OPENING_BALANCE * 2} -> ${total}`,
  );

  check(
    count(replies, 200) === EACH_WAY * 2,
    `wallets ${a.id}/${b.id}: expected ${EACH_WAY * 2} x 200, got ${statusLine(replies)}`,
  );
  check(mostAtOnce === 1, `wallets ${a.id}/${b.id}: up to ${mostAtOnce} transfers at once`);
  check(
    finalA.body.balance === expectedA && finalB.body.balance === expectedB,
    `wallets ${a.id}/${b.id}: balances ${finalA.body.balance}/${finalB.body.balance}, expected ${expectedA}/${expectedB}`,
  );
  check(total === OPENING_BALANCE * 2, `wallets ${a.id}/${b.id}: total ${total} is not conserved`);
  return `${EACH_WAY * 2} transfers both ways, total conserved`;
}

async function openWallet(base: string): Promise<Wallet> {
  const opened = await post<Wallet>(`${base}/wallets`, { balance: OPENING_BALANCE });
  if (opened.status !== 201) throw new Error(`POST /wallets answered ${opened.status}`);
  return opened.body;
}
