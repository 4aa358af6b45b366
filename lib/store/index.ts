/** The seam's front door: the LockStore interface, its capability ports, request and reply types, refusals. */
export * from './lock-store';
export * from './ports';
export * from './store-refusals';
