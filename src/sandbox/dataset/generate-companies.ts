import type { Company } from './records.js';
import type { Prng } from './prng.js';
import { slugify } from './slugify.js';
import {
  BUSINESS_MODELS,
  DE_SURNAMES,
  EMPLOYEE_BUCKETS,
  EN_PREFIXES,
  EN_SUFFIXES,
  ES_ACTIVITIES,
  ES_WORDS,
  FR_ACTIVITIES,
  FR_WORDS,
  INDUSTRIES,
  IT_WORDS,
  JA_COMPANY_STEMS,
  NL_WORDS,
  NORDIC_WORDS,
  PL_WORDS,
  PT_WORDS,
  type CountryVocab,
  type Flavor,
  type IndustryVocab,
} from './vocab.js';
import {
  SPAN,
  type Frame,
  flat,
  iso,
  newId,
  uniqueSlug,
  COUNTRY_WEIGHTS,
  countryOf,
  countryByCode,
  industryByGroup,
} from './generation-kit.js';

const EN_NAMED_SUFFIXES = EN_SUFFIXES.filter(Boolean);
const LEGAL_FORMS: Readonly<Record<string, string>> = {
  SE: 'AB',
  DK: 'ApS',
  NO: 'AS',
  FI: 'Oy',
  EE: 'OÜ',
  DE: 'GmbH',
  AT: 'GmbH',
  CH: 'AG',
};

/** Companies that always exist, so that even tiny datasets hold non-ASCII names. */
const SHOWCASE_COMPANIES: readonly {
  name: string;
  slug: string;
  country: string;
  group: string;
}[] = [
  { name: 'Müller Robotik GmbH', slug: 'mueller-robotik', country: 'DE', group: 'Industrial' },
  { name: '株式会社サクラテック', slug: 'sakuratech', country: 'JP', group: 'Enterprise Software' },
  {
    name: 'Société Lumière Analytique',
    slug: 'lumiere-analytique',
    country: 'FR',
    group: 'Artificial Intelligence',
  },
  { name: 'Ångström Labs AB', slug: 'angstromlabs', country: 'SE', group: 'Climate & Energy' },
  { name: 'Nuvem Ação Pagamentos Ltda.', slug: 'nuvemacao', country: 'BR', group: 'Fintech' },
  {
    name: 'Zürich Quantum AG',
    slug: 'zurich-quantum',
    country: 'CH',
    group: 'Artificial Intelligence',
  },
];

function companyName(
  prng: Prng,
  country: CountryVocab,
  industry: IndustryVocab,
): { name: string; slug: string } {
  const word = prng.pick(industry.words);
  const prefix = prng.pick(EN_PREFIXES);
  const flavor: Flavor = country.flavor;
  switch (flavor) {
    case 'de': {
      if (prng.chance(0.5)) {
        const surname = prng.pick(DE_SURNAMES);
        const branch = prng.pick(industry.germanWords);
        return {
          name: `${surname} ${branch} ${LEGAL_FORMS[country.code] ?? 'GmbH'}`,
          slug: slugify(`${surname} ${branch}`),
        };
      }
      const core = `${prefix}${word.toLowerCase()}`;
      return { name: `${core} ${prng.chance(0.7) ? 'GmbH' : 'AG'}`, slug: slugify(core) };
    }
    case 'fr': {
      const w = prng.pick(FR_WORDS);
      const activity = prng.pick(FR_ACTIVITIES);
      if (prng.chance(0.4))
        return { name: `Société ${w} ${activity}`, slug: slugify(`${w} ${activity}`) };
      return { name: `${w} ${activity} SAS`, slug: slugify(`${w}-${activity}`) };
    }
    case 'es': {
      const w = prng.pick(ES_WORDS);
      if (prng.chance(0.5)) {
        const activity = prng.pick(ES_ACTIVITIES);
        return { name: `${activity} ${w} S.A.`, slug: slugify(`${activity} ${w}`) };
      }
      return { name: `${w}${word.toLowerCase()} S.L.`, slug: slugify(`${w}${word}`, '') };
    }
    case 'pt': {
      const w = prng.pick(PT_WORDS);
      return { name: `${w} ${word} Ltda.`, slug: slugify(`${w} ${word}`, '') };
    }
    case 'nordic': {
      const w = prng.pick(NORDIC_WORDS);
      return {
        name: `${w} ${word} ${LEGAL_FORMS[country.code] ?? 'AB'}`,
        slug: slugify(`${w} ${word}`, ''),
      };
    }
    case 'pl': {
      const w = prng.pick(PL_WORDS);
      return { name: `${w} ${word} sp. z o.o.`, slug: slugify(`${w} ${word}`, '') };
    }
    case 'it': {
      const w = prng.pick(IT_WORDS);
      return { name: `${w} ${word} S.r.l.`, slug: slugify(`${w} ${word}`, '') };
    }
    case 'nl': {
      const w = prng.pick(NL_WORDS);
      return { name: `${w}${word.toLowerCase()} B.V.`, slug: slugify(`${w}${word}`, '') };
    }
    case 'ja': {
      if (prng.chance(0.6)) {
        const [written, romaji] = prng.pick(JA_COMPANY_STEMS);
        return { name: `株式会社${written}`, slug: romaji };
      }
      const core = `${prefix} ${word}`;
      return { name: `${core} K.K.`, slug: slugify(core, '') };
    }
    case 'en': {
      const style = prng.next();
      let core: string;
      if (style < 0.35) core = `${prefix}${word.toLowerCase()}`;
      else if (style < 0.7) core = `${prefix} ${word}`;
      else core = `${prefix}${prng.pick(EN_NAMED_SUFFIXES)}`;
      const suffix = style < 0.7 && prng.chance(0.3) ? prng.pick(EN_SUFFIXES) : '';
      return { name: `${core}${suffix}`, slug: slugify(core, '') };
    }
  }
}

function foundedYear(prng: Prng, epochYear: number): number {
  const r = prng.next();
  const age = r < 0.7 ? prng.int(1, 12) : r < 0.95 ? prng.int(12, 40) : prng.int(40, 130);
  return epochYear - age;
}

function description(
  prng: Prng,
  name: string,
  industry: IndustryVocab,
  subTags: readonly string[],
  city: string | null,
  year: number | null,
): string {
  let text = `${name} builds ${prng.pick(industry.products)} for ${prng.pick(industry.audiences)}.`;
  if (year !== null && city !== null && prng.chance(0.6)) {
    text += ` Founded in ${year}, the company is headquartered in ${city}.`;
  }
  if (subTags.length > 0) text += ` Focus areas: ${subTags.join(', ')}.`;
  return flat(text);
}

/** The company directory; the first few are fixed showcase companies with non-ASCII names. Domains are unique. */
export function generateCompanies(frame: Frame, count: number): Company[] {
  const prng = frame.prngFor('companies');
  const domains = new Set<string>();
  const handles = new Set<string>();
  const epochYear = new Date(frame.epoch).getUTCFullYear();
  const companies: Company[] = [];
  const slugs: string[] = [];
  for (let i = 0; i < count; i++) {
    const showcase = SHOWCASE_COMPANIES[i];
    const country = showcase ? countryByCode(showcase.country) : prng.weighted(COUNTRY_WEIGHTS);
    const industry = showcase ? industryByGroup(showcase.group) : prng.pick(INDUSTRIES);
    let { name, slug } = showcase ?? companyName(prng, country, industry);
    const earlierIndex = prng.int(0, Math.max(0, companies.length - 1));
    const earlier = companies[earlierIndex];
    if (!showcase && earlier && prng.chance(0.01)) {
      name = earlier.name;
      slug = slugs[earlierIndex] ?? slug;
    }
    if (slug === '') slug = `company${i}`;
    slugs.push(slug);
    const domainBase = `${slug}.${country.tld}`;
    const domain = uniqueSlug(domainBase, domains, prng, [
      `${slug}.com`,
      `${slug}.io`,
      `get${slug}.com`,
      `${slug}hq.com`,
      `${slug}-${country.code.toLowerCase()}.com`,
    ]);
    const hqCity = prng.chance(0.04) ? null : prng.pick(country.cities);
    const year = prng.chance(0.05) ? null : foundedYear(prng, epochYear);
    const tagCount = prng.chance(0.08) ? 0 : prng.int(1, 3);
    const subTags = new Set<string>();
    for (let t = 0; t < tagCount; t++) subTags.add(prng.pick(industry.subTags));
    const industrySubTags = Object.freeze([...subTags]);
    const hasLinkedin = !prng.chance(0.06);
    const handle = hasLinkedin
      ? uniqueSlug(slug.replace(/\./g, '-'), handles, prng, [
          `${slug}-hq`,
          `${slug}-${country.code.toLowerCase()}`,
        ])
      : null;
    const createdAt = frame.epoch - Math.floor(prng.next() * SPAN);
    const updatedAt = prng.chance(0.2)
      ? createdAt
      : createdAt + Math.floor(prng.next() * (frame.epoch - createdAt));
    companies.push(
      Object.freeze({
        id: newId(prng),
        name,
        domain,
        description: prng.chance(0.05)
          ? null
          : description(prng, name, industry, industrySubTags, hqCity, year),
        linkedinHandle: handle,
        linkedinUrl: handle === null ? null : `https://www.linkedin.com/company/${handle}`,
        linkedinGeoId: hasLinkedin ? country.geoId : null,
        linkedinIndustryId: hasLinkedin ? industry.linkedinIndustryId : null,
        hqCity,
        hqCountry: countryOf(country),
        industryGroup: industry.group,
        industrySubTags,
        employeeCountBucket: prng.weighted(EMPLOYEE_BUCKETS),
        foundedYear: year,
        businessModel: prng.chance(0.08) ? null : prng.weighted(BUSINESS_MODELS),
        createdAt: iso(createdAt),
        updatedAt: iso(updatedAt),
      }),
    );
  }
  return companies;
}
