export { startSandbox } from './start-sandbox.js';
export type { Sandbox, SandboxKeys, SandboxOptions, Trickle } from './start-sandbox.js';
export type { LiveEvent } from './event-feed.js';
export type {
  EventKind,
  NewAcquisition,
  NewEvent,
  NewExecMove,
  NewFundingEvent,
} from './parse-new-events.js';
export type { RequestLogEntry, Counters, FaultKind } from './request-log.js';
export type { FaultShares, Latency, ScriptedFault } from './faults.js';
export type { WorkspaceSpec } from './workspaces.js';
export { DEFAULT_SIZES, generateDataset } from './dataset/generate-dataset.js';
export type { DatasetSizes } from './dataset/generate-dataset.js';
export type {
  Acquisition,
  Company,
  Country,
  Dataset,
  ExecMove,
  FundingEvent,
  Investor,
  InvestorRef,
  Person,
  Source,
} from './dataset/records.js';
