const SPECIAL: Readonly<Record<string, string>> = {
  ß: 'ss',
  ø: 'o',
  Ø: 'o',
  æ: 'ae',
  Æ: 'ae',
  ł: 'l',
  Ł: 'l',
  đ: 'd',
  œ: 'oe',
  Œ: 'oe',
};

/**
 * Folds a name to lower-case ASCII letters and digits joined by `separator`
 * ("Müller Robotik GmbH" → "muller-robotik-gmbh"). Characters with no ASCII
 * form (e.g. Japanese) are dropped, so the result may be empty.
 */
export function slugify(text: string, separator = '-'): string {
  return text
    .replace(/[ßøØæÆłŁđœŒ]/g, (c) => SPECIAL[c] ?? '')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, separator)
    .split(separator)
    .filter(Boolean)
    .join(separator);
}
