/** The inspector's front door: who holds which lock, read from Redis (see docs/inspector.md). */
export type {
  ClientSummary,
  HolderView,
  LockDescription,
  LockKindFound,
  LockSummary,
  OwnerView,
  PermitCount,
  QueuedView,
} from './lock-description';
export {
  LockInspector,
  type InspectorConnectOptions,
  type ListOptions,
  type ListWaitingOptions,
} from './lock-inspector';
