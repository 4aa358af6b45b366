import type { Account } from './accounts.repository';
import type { BalanceSnapshot, DepositReceipt } from './accounts.service';
import { count, get, ms, ok, post, statusLine, timed, type Check, type Reply } from './demo-http';

const READS = 30;
const DEPOSITS = 5;
const DEPOSIT = 10;
const OPENING_BALANCE = 100;

/**
 * Demo part 3, the read-write lock `account:balance:<id>`: 30 balance reads (`mode: 'read'`)
 * and 5 deposits (`mode: 'write'`) of one account, all fired at once. Readers overlap; a
 * deposit runs with no reader and no other deposit; no read sees the balance change under it;
 * no deposit is lost. Returns the summary for the final OK line.
 */
export async function readAndDeposit(base: string, check: Check): Promise<string> {
  const opened = await post<Account>(`${base}/accounts`, { balance: OPENING_BALANCE });
  if (opened.status !== 201) throw new Error(`POST /accounts answered ${opened.status}`);
  const id = opened.body.id;

  // Deposits spread among the reads, so readers arrive before, between and after writers.
  const reads: Promise<Reply<BalanceSnapshot>>[] = [];
  const deposits: Promise<Reply<DepositReceipt>>[] = [];
  const every = Math.floor((READS + DEPOSITS) / DEPOSITS);
  const burst = await timed(() => {
    for (let i = 0; i < READS + DEPOSITS; i++) {
      if (i % every === every - 1 && deposits.length < DEPOSITS) {
        deposits.push(post<DepositReceipt>(`${base}/accounts/${id}/deposit`, { amount: DEPOSIT }));
      } else {
        reads.push(get<BalanceSnapshot>(`${base}/accounts/${id}/balance`));
      }
    }
    return Promise.all([Promise.all(reads), Promise.all(deposits)]);
  });
  const [readReplies, depositReplies] = burst.result;
  const snapshots = ok(readReplies);
  const receipts = ok(depositReplies);
  const final = await get<BalanceSnapshot>(`${base}/accounts/${id}/balance`);
  const expected = OPENING_BALANCE + DEPOSITS * DEPOSIT;

  const mostReaders = Math.max(0, ...snapshots.map((snapshot) => snapshot.readersAtOnce));
  const unstable = snapshots.filter((snapshot) => !snapshot.stable).length;
  const sawWriter = snapshots.filter((snapshot) => snapshot.writersSeen > 0).length;
  const sawReader = receipts.filter((receipt) => receipt.readersSeen > 0).length;
  const mostWriters = Math.max(0, ...receipts.map((receipt) => receipt.writersAtOnce));
  const seen = [...new Set(snapshots.map((snapshot) => snapshot.balance))].sort((a, b) => a - b);

  console.log(
    `3) ${READS} GET /accounts/${id}/balance (mode: 'read') and ${DEPOSITS} POST ` +
      `/accounts/${id}/deposit (mode: 'write'), all at once, in ${ms(burst.ms)}`,
  );
  console.log(
    `   reads: ${statusLine(readReplies)}; up to ${mostReaders} readers at once; ` +
      `${snapshots.length - unstable} of ${snapshots.length} snapshots unchanged mid-read; ` +
      `${sawWriter} saw a deposit in progress; balances seen ${seen.join(', ')}`,
  );
  console.log(
    `   deposits: ${statusLine(depositReplies)}; ${sawReader} saw a reader; at most ` +
      `${mostWriters} at once; balance ${OPENING_BALANCE} -> ${final.body.balance} ` +
      `(${OPENING_BALANCE} + ${DEPOSITS} x ${DEPOSIT} = ${expected})`,
  );

  check(
    count(readReplies, 200) === READS && count(depositReplies, 200) === DEPOSITS,
    `account ${id}: expected ${READS} + ${DEPOSITS} x 200, got reads ${statusLine(readReplies)}, deposits ${statusLine(depositReplies)}`,
  );
  check(mostReaders > 1, `account ${id}: readers never overlapped (at most ${mostReaders})`);
  check(unstable === 0, `account ${id}: ${unstable} reads saw the balance change mid-read`);
  check(sawWriter === 0, `account ${id}: ${sawWriter} reads ran while a deposit was in progress`);
  check(sawReader === 0, `account ${id}: ${sawReader} deposits ran while a read was in progress`);
  check(mostWriters === 1, `account ${id}: up to ${mostWriters} deposits ran at once`);
  check(
    final.body.balance === expected,
    `account ${id}: balance ${final.body.balance}, expected ${expected}`,
  );
  return `account ${id}: ${READS} reads (up to ${mostReaders} at once), ${DEPOSITS} exclusive deposits`;
}
