/**
 * The record shapes of the Business-Signals service (spec section 2), field for
 * field. Timestamps are ISO-8601 UTC strings with milliseconds; ids are UUIDs.
 * `null` marks an optional value the service did not know.
 */

/** Spec 2.3: an ISO 3166-1 alpha-2 code and the country's English name. */
export interface Country {
  readonly code: string;
  readonly name: string;
}

/** Spec 2.2. `domain` is always present and unique across companies. */
export interface Company {
  readonly id: string;
  readonly name: string;
  readonly domain: string;
  readonly description: string | null;
  readonly linkedinHandle: string | null;
  readonly linkedinUrl: string | null;
  readonly linkedinGeoId: string | null;
  readonly linkedinIndustryId: string | null;
  readonly hqCity: string | null;
  readonly hqCountry: Country;
  readonly industryGroup: string;
  readonly industrySubTags: readonly string[];
  readonly employeeCountBucket: string;
  readonly foundedYear: number | null;
  readonly businessModel: string | null;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Spec 2.4. */
export interface Person {
  readonly id: string;
  readonly name: string;
  readonly linkedinHandle: string;
  readonly linkedinUrl: string;
}

/** Spec 2.5. `domain` is unique when present. */
export interface Investor {
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly hqCountry: Country | null;
  readonly domain: string | null;
  readonly firstSeenAt: string | null;
  readonly lastSeenAt: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** Spec 2.6. */
export interface Source {
  readonly url: string;
  readonly extractedAt: string;
}

/** Spec 2.7. `company` and `fromCompany` are the directory's own objects. */
export interface ExecMove {
  readonly id: string;
  readonly person: Person;
  readonly company: Company;
  readonly fromCompany: Company | null;
  readonly role: string;
  readonly roleSeniority: string;
  readonly moveType: string;
  readonly announcedAt: string | null;
  readonly effectiveDate: string | null;
  readonly discoveredAt: string;
  readonly sources: readonly Source[];
}

/** Spec 2.8. The four amount fields are either all present or all null. */
export interface Acquisition {
  readonly id: string;
  readonly acquirer: Company;
  readonly target: Company;
  readonly dealAmountUsdCents: number | null;
  readonly dealAmountUsd: number | null;
  readonly dealAmountOriginalCurrency: string | null;
  readonly dealAmountOriginalCents: number | null;
  readonly paymentType: string | null;
  readonly isMerger: boolean;
  readonly announcedAt: string;
  readonly closingAt: string | null;
  readonly discoveredAt: string;
  readonly sources: readonly Source[];
}

/** An investor as embedded in a funding event. */
export interface InvestorRef {
  readonly id: string;
  readonly name: string;
}

/** Spec 2.9. The four amount fields are either all present or all null. */
export interface FundingEvent {
  readonly id: string;
  readonly company: Company;
  readonly round: string;
  readonly amountUsdCents: number | null;
  readonly amountUsd: number | null;
  readonly amountOriginalCurrency: string | null;
  readonly amountOriginalCents: number | null;
  readonly investors: readonly InvestorRef[];
  readonly announcedAt: string;
  readonly discoveredAt: string;
  readonly sources: readonly Source[];
}

/**
 * Every record the sandbox serves, in generation order (not in list order).
 * Frozen: read it, never mutate it.
 */
export interface Dataset {
  readonly seed: number;
  /** The fixed "now" of the data: every timestamp lies in the ~3 years before it (a few announcements slightly after). */
  readonly epoch: string;
  readonly companies: readonly Company[];
  readonly investors: readonly Investor[];
  readonly persons: readonly Person[];
  readonly fundingEvents: readonly FundingEvent[];
  readonly acquisitions: readonly Acquisition[];
  readonly execMoves: readonly ExecMove[];
}
