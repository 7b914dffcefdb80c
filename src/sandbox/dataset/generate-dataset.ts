import type { Dataset, Investor } from './records.js';
import { createPrng } from './prng.js';
import { DAY, type Frame, iso } from './generation-kit.js';
import { generateCompanies } from './generate-companies.js';
import { generatePersons } from './generate-persons.js';
import { generateInvestorDrafts } from './generate-investors.js';
import { generateFunding, generateAcquisitions, generateExecMoves } from './generate-events.js';

/** How many records of each kind to generate. */
export interface DatasetSizes {
  companies: number;
  investors: number;
  persons: number;
  fundingEvents: number;
  acquisitions: number;
  execMoves: number;
}

/** The default sizes: large enough to feel like the real service. */
export const DEFAULT_SIZES: Readonly<DatasetSizes> = Object.freeze({
  companies: 20_000,
  investors: 5_000,
  persons: 20_000,
  fundingEvents: 50_000,
  acquisitions: 10_000,
  execMoves: 30_000,
});

function checkSizes(sizes: DatasetSizes): void {
  for (const [name, value] of Object.entries(sizes)) {
    if (!Number.isInteger(value) || value < 0) {
      throw new RangeError(`sizes.${name} must be a non-negative integer (got ${String(value)})`);
    }
  }
  if (sizes.companies < 2 && sizes.fundingEvents + sizes.acquisitions + sizes.execMoves > 0) {
    throw new RangeError('sizes.companies must be at least 2 when there are events');
  }
  if (sizes.persons < 1 && sizes.execMoves > 0) {
    throw new RangeError('sizes.persons must be at least 1 when there are executive moves');
  }
}

/**
 * Generates the whole dataset from a seed. Pure and deterministic: the same seed
 * and sizes give the same records, field for field, on every run; each kind of
 * record has its own random stream, so changing one size leaves the other
 * directories unchanged. Timestamps are relative to a fixed epoch derived from
 * the seed (mid-2025), never to the wall clock.
 *
 * @throws RangeError when a size is negative, fractional, or too small for the events asked for.
 */
export function generateDataset(seed: number, sizes: DatasetSizes = DEFAULT_SIZES): Dataset {
  checkSizes(sizes);
  const epoch = Date.UTC(2025, 5, 30) + (createPrng(seed, 'epoch').uint32() % DAY);
  const frame: Frame = { epoch, prngFor: (stream) => createPrng(seed, stream) };
  const companies = generateCompanies(frame, sizes.companies);
  const persons = generatePersons(frame, sizes.persons);
  const investorDrafts = generateInvestorDrafts(frame, sizes.investors, companies);
  const fundingEvents = generateFunding(frame, sizes.fundingEvents, companies, investorDrafts);
  const investors = investorDrafts.map((draft) => Object.freeze(draft) as Investor);
  const acquisitions = generateAcquisitions(frame, sizes.acquisitions, companies);
  const execMoves = generateExecMoves(frame, sizes.execMoves, companies, persons);
  return Object.freeze({
    seed,
    epoch: iso(epoch),
    companies: Object.freeze(companies),
    investors: Object.freeze(investors),
    persons: Object.freeze(persons),
    fundingEvents: Object.freeze(fundingEvents),
    acquisitions: Object.freeze(acquisitions),
    execMoves: Object.freeze(execMoves),
  });
}
