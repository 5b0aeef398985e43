import type { SeededRandom } from './seeded-random.ts';

/** A made-up cardholder, with values that fit the field dictionary (names ≤ 15, addresses ≤ 50 characters). */
export interface ScenarioCustomer {
  readonly ident: string;
  readonly firstName: string;
  readonly lastName: string;
  readonly email: string;
  readonly ip: string;
  readonly userAgent: string;
  readonly street: string;
  readonly postalCode: string;
  readonly city: string;
  readonly country: string;
}

const FIRST_NAMES = [
  'Camille',
  'Léa',
  'Hugo',
  'Lucas',
  'Chloé',
  'Inès',
  'Jules',
  'Manon',
  'Louis',
  'Sarah',
  'Noah',
  'Emma',
];
const LAST_NAMES = [
  'Martin',
  'Bernard',
  'Dubois',
  'Thomas',
  'Robert',
  'Petit',
  'Durand',
  'Leroy',
  'Moreau',
  'Simon',
  'Laurent',
  'Lefèvre',
];
const STREETS = [
  'rue de la Paix',
  'avenue Foch',
  'boulevard Voltaire',
  'rue des Lilas',
  'place du Marché',
  'rue Victor Hugo',
];
const CITIES = [
  { city: 'Paris', postalCode: '75011', country: 'FR' },
  { city: 'Lyon', postalCode: '69003', country: 'FR' },
  { city: 'Nantes', postalCode: '44000', country: 'FR' },
  { city: 'Lille', postalCode: '59000', country: 'FR' },
  { city: 'Bruxelles', postalCode: '1000', country: 'BE' },
  { city: 'Genève', postalCode: '1201', country: 'CH' },
] as const;
const USER_AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
];
// Documentation address blocks (RFC 5737): plausible, and never anyone's real address.
const IP_PREFIXES = ['192.0.2', '198.51.100', '203.0.113'];

export function drawCustomer(random: SeededRandom, index: number): ScenarioCustomer {
  const firstName = random.pick(FIRST_NAMES);
  const lastName = random.pick(LAST_NAMES);
  const place = random.pick(CITIES);
  return {
    ident: `CUST-${String(random.int(1, 99_999)).padStart(5, '0')}`,
    firstName,
    lastName,
    email: `${ascii(firstName)}.${ascii(lastName)}${index}@example.org`,
    ip: `${random.pick(IP_PREFIXES)}.${random.int(1, 254)}`,
    userAgent: random.pick(USER_AGENTS),
    street: `${random.int(1, 120)} ${random.pick(STREETS)}`,
    postalCode: place.postalCode,
    city: place.city,
    country: place.country,
  };
}

/** 'Lefèvre' → 'lefevre', for an e-mail local part. */
function ascii(name: string): string {
  return name
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase();
}
