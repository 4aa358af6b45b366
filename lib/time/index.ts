/** Time's front door: the monotonic clock, timers and time limits shared by the core and the stores. */
export { now } from './clock';
export { checkedOnRead } from './deadline-signal';
export {
  DeadlineTimer,
  MAX_TIMER_DELAY,
  resolvesWithin,
  sleep,
  TIMED_OUT,
  within,
} from './time-limit';
