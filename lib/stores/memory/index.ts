/** The memory store's front door. */
export { MemoryLockStore } from './memory-store';
