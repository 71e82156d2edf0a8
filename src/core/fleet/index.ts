/** The face of src/core/fleet: what the rest of the product uses of it. */
export {
  LEASE_KEY_TTL_MS,
  chunkSize,
  connectionShare,
  currentLease,
  fleetBudget,
  leaseKey,
  leaseLeft,
  nextGrant,
  spend,
  windowsToTopUp,
} from './budget-lease.js';
export type { AccountLeases } from './budget-lease.js';
export { createChangeTap } from './change-tap.js';
export type { ClaimIndex, ClaimRecord } from './claim-ledger.js';
export { REWRITE_EVENTS, adoptionCandidates, leaseAbandoned, replayPlan } from './cluster-spool.js';
export type { AdoptionLease, SpoolRecord, SpoolRecordIndex, SpoolRegistration, SpoolRows } from './cluster-spool.js';
export { configKeyName, suppressionKeys } from './config-replica.js';
export type { ConfigBucket, ConfigEntry, ConfigKey, ConfigRows, ConfigValue } from './config-replica.js';
export { adoptedDueAt, drainTargets, peersInTurn, phaseAfterPass } from './drain.js';
export type {
  AdoptAnswer,
  DrainPhase,
  DrainProgress,
  MessageTransfer,
  PersonalTransfer,
  SealedTransfer,
  MessageTransferStore,
  StoredTransfer,
} from './drain.js';
export type { FleetLimitGate, GatedAccount } from './limit-gate.js';
export { fleetView, nodeIdClaim } from './membership.js';
export type { FleetView, NodeBeat, NodeSighting } from './membership.js';
export { fleetQueues } from './queues.js';
export type { FleetQueues, NodeQueue } from './queues.js';
export { conflict, createReplicatedWrites, replicateMethods, unavailable } from './replicated-writes.js';
export type { ReplicatedWrites } from './replicated-writes.js';
export { createSpoolLedger } from './spool-ledger.js';
export type { SpoolLedger } from './spool-ledger.js';
export { erasureParams, localMessages, mergeCommandOutcomes, mergePages, pageRequest } from './view.js';
export type { FleetCommandName, FleetCursor, FleetMessages, LocalMessages, NodePage, NodePosition } from './view.js';
