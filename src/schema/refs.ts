import type {
  AcquisitionRecord,
  CompanyRecord,
  CountryRecord,
  ExecMoveRecord,
  FundingEventRecord,
  InvestorRecord,
  InvestorRef,
  PersonRecord,
  SourceRecord,
} from '../upstream/types.js';
import { builder } from './builder.js';

/**
 * An investor as a funding event names it: `{ id, name }` only. Fields beyond those load the
 * full record on demand (see investor.ts).
 */
export interface InvestorStub extends InvestorRef {
  readonly stub: true;
}

/**
 * Refs for every object type, declared apart from their implementations so that type files can
 * point at each other (a company's funding events, a funding event's company) without cycles.
 */
export const CountryRef = builder.objectRef<CountryRecord>('Country');
export const SourceRef = builder.objectRef<SourceRecord>('Source');
export const CompanyRef = builder.objectRef<CompanyRecord>('Company');
export const InvestorRefType = builder.objectRef<InvestorRecord | InvestorStub>('Investor');
export const PersonRef = builder.objectRef<PersonRecord>('Person');
export const ExecMoveRef = builder.objectRef<ExecMoveRecord>('ExecMove');
export const AcquisitionRef = builder.objectRef<AcquisitionRecord>('Acquisition');
export const FundingEventRef = builder.objectRef<FundingEventRecord>('FundingEvent');

/** One connection type per node type, shared by the top-level list and the nested edges. */
export const CompanyConnection = builder.connectionObject(
  { type: CompanyRef, name: 'CompanyConnection' },
  { name: 'CompanyEdge' },
);
export const InvestorConnection = builder.connectionObject(
  { type: InvestorRefType, name: 'InvestorConnection' },
  { name: 'InvestorEdge' },
);
export const ExecMoveConnection = builder.connectionObject(
  { type: ExecMoveRef, name: 'ExecMoveConnection' },
  { name: 'ExecMoveEdge' },
);
export const AcquisitionConnection = builder.connectionObject(
  { type: AcquisitionRef, name: 'AcquisitionConnection' },
  { name: 'AcquisitionEdge' },
);
export const FundingEventConnection = builder.connectionObject(
  { type: FundingEventRef, name: 'FundingEventConnection' },
  { name: 'FundingEventEdge' },
);
