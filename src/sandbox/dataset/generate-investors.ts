import type { Company, Investor } from './records.js';
import type { Prng } from './prng.js';
import { slugify } from './slugify.js';
import {
  ACCELERATOR_SUFFIXES,
  EN_PREFIXES,
  INVESTOR_TYPES,
  INVESTOR_WORDS,
  PE_SUFFIXES,
  PERSON_NAMES,
  VC_SUFFIXES,
  type CountryVocab,
} from './vocab.js';
import {
  SPAN,
  type Mutable,
  type Frame,
  iso,
  newId,
  uniqueSlug,
  COUNTRY_WEIGHTS,
  countryOf,
  countryByCode,
} from './generation-kit.js';
import { personName } from './generate-persons.js';

const SHOWCASE_INVESTORS: readonly {
  name: string;
  type: string;
  country: string;
  domain: string | null;
}[] = [
  {
    name: 'Société Générale Ventures',
    type: 'corporate_vc',
    country: 'FR',
    domain: 'sg-ventures.fr',
  },
  {
    name: 'Müller Family Office',
    type: 'family_office',
    country: 'DE',
    domain: 'mueller-family-office.de',
  },
  { name: 'Søren Østergaard', type: 'angel', country: 'DK', domain: null },
  { name: 'みらい創造ファンド', type: 'government', country: 'JP', domain: 'mirai-fund.go.jp' },
];

function investorName(
  prng: Prng,
  type: string,
  country: CountryVocab,
  companies: readonly Company[],
): string {
  const lastNames = PERSON_NAMES.en.last;
  switch (type) {
    case 'angel':
      return personName(prng, country.flavor).name;
    case 'corporate_vc': {
      const company = companies.length > 0 ? prng.pick(companies) : undefined;
      const base = company
        ? company.name.replace(/,? (Inc\.|Co\.|GmbH|AG|SAS|S\.A\.|S\.L\.|Ltda\.|AB|K\.K\.)$/, '')
        : prng.pick(EN_PREFIXES);
      return `${base} Ventures`;
    }
    case 'private_equity':
      return `${prng.chance(0.5) ? prng.pick(INVESTOR_WORDS) : prng.pick(lastNames)}${prng.pick(PE_SUFFIXES)}`;
    case 'accelerator':
      return `${prng.pick(EN_PREFIXES)}${prng.pick(ACCELERATOR_SUFFIXES)}`;
    case 'family_office':
      return `${personName(prng, country.flavor).name.split(' ').pop() ?? 'Hale'} Family Office`;
    case 'government':
      return prng.chance(0.5)
        ? `${country.name} Innovation Fund`
        : `${prng.pick(country.cities)} Development Agency`;
    default: {
      const r = prng.next();
      if (r < 0.4) return `${prng.pick(INVESTOR_WORDS)}${prng.pick(VC_SUFFIXES)}`;
      if (r < 0.7) return `${prng.pick(EN_PREFIXES)}${prng.pick(VC_SUFFIXES)}`;
      if (r < 0.85) return `${prng.pick(lastNames)}${prng.pick(VC_SUFFIXES)}`;
      return `${prng.pick(lastNames)} & ${prng.pick(lastNames)} Partners`;
    }
  }
}

/** Investors, still mutable: funding generation fills in firstSeenAt/lastSeenAt before they are frozen. */
export function generateInvestorDrafts(
  frame: Frame,
  count: number,
  companies: readonly Company[],
): Mutable<Investor>[] {
  const prng = frame.prngFor('investors');
  const domains = new Set<string>(companies.map((c) => c.domain));
  const investors: Mutable<Investor>[] = [];
  for (let i = 0; i < count; i++) {
    const showcase = SHOWCASE_INVESTORS[i];
    const type = showcase?.type ?? prng.weighted(INVESTOR_TYPES);
    const country = showcase ? countryByCode(showcase.country) : prng.weighted(COUNTRY_WEIGHTS);
    const name = showcase?.name ?? investorName(prng, type, country, companies);
    let domain: string | null = null;
    if (showcase) {
      domain = showcase.domain;
      if (domain !== null) domains.add(domain);
    } else if (!prng.chance(type === 'angel' ? 0.75 : 0.02)) {
      const slug = slugify(name, '') || `investor${i}`;
      const tld =
        type === 'government' ? `gov.${country.tld}` : prng.pick(['com', 'vc', 'com', country.tld]);
      domain = uniqueSlug(`${slug}.${tld}`, domains, prng, [
        `${slug}.com`,
        `${slug}.vc`,
        `${slug}-fund.com`,
      ]);
    }
    const createdAt = frame.epoch - Math.floor(prng.next() * SPAN);
    const updatedAt = createdAt + Math.floor(prng.next() * (frame.epoch - createdAt));
    investors.push({
      id: newId(prng),
      name,
      type,
      hqCountry: !showcase && prng.chance(0.03) ? null : countryOf(country),
      domain,
      firstSeenAt: iso(createdAt),
      lastSeenAt: iso(updatedAt),
      createdAt: iso(createdAt),
      updatedAt: iso(updatedAt),
    });
  }
  return investors;
}
