import {
  BadRequestException,
  Injectable,
  NotFoundException,
  UnprocessableEntityException,
} from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Locked } from 'nestjs-redis-lock';
import { Overlaps } from './overlap';
import { WalletsRepository, type Wallet } from './wallets.repository';

/** How long a transfer takes between reading and writing the balances (a pretend check), ms. */
export const TRANSFER_MS = 10;

/** What `POST /wallets/transfer` answers. */
export interface TransferReceipt {
  from: number;
  to: number;
  amount: number;
  /** Both wallets after the transfer. */
  balances: Wallet[];
  /** The most transfers touching either wallet in progress at once, this one included: 1. */
  transfersAtOnce: number;
}

/**
 * Transfers between wallets under a multi-lock on both wallets: `wallet:funds:<from>` and
 * `wallet:funds:<to>`, taken all or none. Transfers A→B and B→A at the same time cannot
 * deadlock (neither ever holds one wallet while waiting for the other); transfers between
 * other wallets run in parallel.
 */
@Injectable()
export class WalletsService {
  private readonly busy = new Overlaps();

  constructor(private readonly wallets: WalletsRepository) {}

  create(balance: number): Promise<Wallet> {
    return this.wallets.create(balance);
  }

  find(id: number): Promise<Wallet> {
    return this.existing(id);
  }

  /** Moves `amount` from one wallet to another: 422 when the source has too little. */
  @Locked(['wallet:funds:<0>', 'wallet:funds:<1>'])
  async transfer(from: number, to: number, amount: number): Promise<TransferReceipt> {
    if (from === to) throw new BadRequestException('from and to must be different wallets');
    const first = this.busy.of(from);
    const second = this.busy.of(to);
    return first.run(() =>
      second.run(async () => {
        const transfersAtOnce = Math.max(first.now, second.now);
        const [source, target] = await Promise.all([this.existing(from), this.existing(to)]);
        if (source.balance < amount) {
          throw new UnprocessableEntityException(`Wallet ${from} holds less than ${amount}`);
        }
        await sleep(TRANSFER_MS);
        const balances = [
          { id: from, balance: source.balance - amount },
          { id: to, balance: target.balance + amount },
        ];
        await this.wallets.setBalances(balances);
        return { from, to, amount, balances, transfersAtOnce };
      }),
    );
  }

  private async existing(id: number): Promise<Wallet> {
    const wallet = await this.wallets.find(id);
    if (!wallet) throw new NotFoundException(`Wallet ${id} does not exist`);
    return wallet;
  }
}
