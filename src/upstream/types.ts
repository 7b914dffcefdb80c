/**
 * Payloads of the Business-Signals service (spec section 2), as the gateway receives them.
 * The spec does not say which fields may be null, so every field but `id` is typed nullable.
 */

export interface CountryRecord {
  code: string | null;
  name: string | null;
}

export interface CompanyRecord {
  id: string;
  name: string | null;
  domain: string | null;
  description: string | null;
  linkedinHandle: string | null;
  linkedinUrl: string | null;
  linkedinGeoId: string | null;
  linkedinIndustryId: string | null;
  hqCity: string | null;
  hqCountry: CountryRecord | null;
  industryGroup: string | null;
  industrySubTags: (string | null)[] | null;
  employeeCountBucket: string | null;
  foundedYear: number | null;
  businessModel: string | null;
  createdAt: string | null;
  updatedAt: string | null;
}

export interface PersonRecord {
  id: string;
  name: string | null;
  linkedinHandle: string | null;
  linkedinUrl: string | null;
}

export interface InvestorRecord {
  id: string;
  name: string | null;
  type: string | null;
  hqCountry: CountryRecord | null;
  domain: string | null;
  firstSeenAt: string | null;
  lastSeenAt: string | null;
  createdAt: string | null;
  updatedAt: string | null;
}

/** The `{ id, name }` reference a funding event carries for each investor. */
export interface InvestorRef {
  id: string;
  name: string | null;
}

export interface SourceRecord {
  url: string | null;
  extractedAt: string | null;
}

export interface ExecMoveRecord {
  id: string;
  person: PersonRecord | null;
  company: CompanyRecord | null;
  fromCompany: CompanyRecord | null;
  role: string | null;
  roleSeniority: string | null;
  moveType: string | null;
  announcedAt: string | null;
  effectiveDate: string | null;
  discoveredAt: string | null;
  sources: (SourceRecord | null)[] | null;
}

export interface AcquisitionRecord {
  id: string;
  acquirer: CompanyRecord | null;
  target: CompanyRecord | null;
  dealAmountUsdCents: number | null;
  dealAmountUsd: number | null;
  dealAmountOriginalCurrency: string | null;
  dealAmountOriginalCents: number | null;
  paymentType: string | null;
  isMerger: boolean | null;
  announcedAt: string | null;
  closingAt: string | null;
  discoveredAt: string | null;
  sources: (SourceRecord | null)[] | null;
}

export interface FundingEventRecord {
  id: string;
  company: CompanyRecord | null;
  round: string | null;
  amountUsdCents: number | null;
  amountUsd: number | null;
  amountOriginalCurrency: string | null;
  amountOriginalCents: number | null;
  investors: (InvestorRef | null)[] | null;
  announcedAt: string | null;
  discoveredAt: string | null;
  sources: (SourceRecord | null)[] | null;
}

/** The success envelope of every list endpoint (spec 2.1). */
export interface ListEnvelope<T> {
  success: true;
  /** The spec does not promise that items are records: read them through {@link isRecord}. */
  data: (T | null)[];
  pagination: { hasMore: boolean; nextCursor: string | null };
  meta: { endpoint: string; creditsUsed: number; creditsRemaining: number };
}

/** Any record one of the five endpoints lists. */
export type UpstreamRecord =
  ExecMoveRecord | AcquisitionRecord | FundingEventRecord | CompanyRecord | InvestorRecord;

/**
 * True for an item that carries a record: an object with a string `id`. A null (or otherwise
 * malformed) item in a page carries nothing and is skipped, keeping the positions of the others.
 */
export function isRecord<T extends { id: string }>(item: T | null | undefined): item is T {
  return typeof item === 'object' && item !== null && typeof item.id === 'string';
}
