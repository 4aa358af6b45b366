/** The seam's front door: the LockStore interface, its request and reply types, its refusals. */
export * from './lock-store';
export * from './store-refusals';
