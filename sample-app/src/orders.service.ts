import {
  BadRequestException,
  ConflictException,
  Injectable,
  Logger,
  NotFoundException,
} from '@nestjs/common';
import { LockService, Locked } from 'nestjs-redis-lock';
import { OrdersRepository, type Order } from './orders.repository';
import { PaymentGateway } from './payment-gateway';

/** What `POST /orders/:id/pay` answers. */
export interface PaymentReceipt {
  orderId: number;
  status: 'paid';
  paymentId: string;
  amount: number;
  /** The order's charge count after this payment: 1 unless something went wrong. */
  paidCount: number;
  /** How deep this call chain held `order:pay:<id>` inside pay(): 2 when called by the controller. */
  holdCount: number;
  /** The lock's fencing token, also stored with the payment. */
  fencingToken: number | undefined;
}

@Injectable()
export class OrdersService {
  private readonly logger = new Logger(OrdersService.name);

  constructor(
    private readonly orders: OrdersRepository,
    private readonly gateway: PaymentGateway,
    private readonly locks: LockService,
  ) {}

  async create(amount: unknown): Promise<Order> {
    if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) {
      throw new BadRequestException('amount must be a positive number');
    }
    return this.orders.create(amount);
  }

  async find(id: number): Promise<Order> {
    const order = await this.orders.find(id);
    if (!order) throw new NotFoundException(`Order ${id} does not exist`);
    return order;
  }

  /**
   * Charges an order once. Check-then-act (read the status, call the gateway, record the
   * payment) is only safe while nobody else pays the same order: the lock `order:pay:<id>`
   * makes that so across requests and processes. Called from OrdersController.pay, which holds
   * the same lock already, this re-enters it at once (holdCount 2) instead of deadlocking;
   * called from anywhere else it takes the lock itself.
   */
  @Locked('order:pay:<0>', { fencing: true }) // the token goes with the payment record
  async pay(id: number): Promise<PaymentReceipt> {
    const key = `order:pay:${id}`;
    const holdCount = this.locks.holdCount(key);
    const fencingToken = this.locks.current(key)?.fencingToken;

    const order = await this.find(id);
    if (order.status === 'paid') throw new ConflictException(`Order ${id} is already paid`);

    const charge = await this.gateway.charge(order.amount);
    const paidCount = await this.orders.recordPayment(id, { ...charge, fencingToken });
    this.logger.log(
      `Order ${id} paid by ${charge.paymentId} (lock ${key} held at depth ${holdCount}, fencing token ${fencingToken})`,
    );
    return { orderId: id, status: 'paid', ...charge, paidCount, holdCount, fencingToken };
  }
}
