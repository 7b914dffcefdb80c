import type { Person } from './records.js';
import type { Prng } from './prng.js';
import { slugify } from './slugify.js';
import { JA_PERSON_NAMES, PERSON_NAMES, type Flavor } from './vocab.js';
import { type Frame, newId, uniqueSlug, COUNTRY_WEIGHTS } from './generation-kit.js';

const SHOWCASE_PERSONS: readonly { name: string; slug: string }[] = [
  { name: 'Zoë Ångström', slug: 'zoe-angstrom' },
  { name: '山田 太郎', slug: 'taro-yamada' },
  { name: 'François Lefèvre', slug: 'francois-lefevre' },
  { name: 'Łukasz Wiśniewski', slug: 'lukasz-wisniewski' },
];

/** A person name of the naming culture, with an ASCII slug for handles. */
export function personName(prng: Prng, flavor: Flavor): { name: string; slug: string } {
  if (flavor === 'ja') {
    const [last, lastRomaji] = prng.pick(JA_PERSON_NAMES.last);
    const [first, firstRomaji] = prng.pick(JA_PERSON_NAMES.first);
    return { name: `${last} ${first}`, slug: `${firstRomaji}-${lastRomaji}` };
  }
  const parts = PERSON_NAMES[flavor];
  const name = `${prng.pick(parts.first)} ${prng.pick(parts.last)}`;
  return { name, slug: slugify(name) };
}

/** The persons of executive moves; the first few are fixed showcase names. */
export function generatePersons(frame: Frame, count: number): Person[] {
  const prng = frame.prngFor('persons');
  const handles = new Set<string>();
  const persons: Person[] = [];
  for (let i = 0; i < count; i++) {
    const { name, slug } =
      SHOWCASE_PERSONS[i] ?? personName(prng, prng.weighted(COUNTRY_WEIGHTS).flavor);
    const suffix = (prng.uint32() % 0xffffff).toString(16).padStart(6, '0');
    const handle = uniqueSlug(`${slug}-${suffix}`, handles, prng, []);
    persons.push(
      Object.freeze({
        id: newId(prng),
        name,
        linkedinHandle: handle,
        linkedinUrl: `https://www.linkedin.com/in/${handle}`,
      }),
    );
  }
  return persons;
}
