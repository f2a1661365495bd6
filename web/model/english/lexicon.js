// lexicon.js - the everyday words the English grammar (grammar.js) writes its
// sentences with, each with its part of speech, its forms and the little the
// grammar needs to know of its meaning (whether a noun is a person or animal,
// which verbs take an object). Written by the project; the lists are plain
// English and carry no licence beyond the project's own.
//
// Compact notation, expanded below:
//   nouns      'cat' (plural by rule: cats, boxes, babies), 'man:men' (irregular)
//   verbs      'walk' (3rd person and past by rule), 'sit/sat' (irregular past),
//              'stop/stopped' (spelling of the past written out)
//   adjectives 'big'

const PEOPLE = `man:men woman:women child:children boy girl baby person:people friend teacher student
  doctor nurse farmer baker cook driver pilot singer dancer player king queen prince princess
  mother father sister brother aunt uncle grandmother grandfather son daughter neighbour
  worker artist writer painter builder fisherman:fishermen sailor soldier police officer
  guard clerk waiter waitress lady:ladies gentleman:gentlemen kid visitor stranger guest
  shopkeeper hunter rider runner swimmer climber traveller reader cousin wife:wives husband
  wizard witch giant clown judge chief captain thief:thieves`;

const ANIMALS = `cat dog horse cow pig sheep:sheep goat duck chicken hen bird fish:fish mouse:mice rat
  rabbit fox:foxes wolf:wolves bear lion tiger elephant monkey donkey frog snake owl bee ant
  spider butterfly:butterflies deer:deer goose:geese puppy:puppies kitten lamb calf:calves
  whale shark dolphin turtle camel zebra giraffe parrot crow swan bat squirrel hamster pony:ponies
  penguin kangaroo seal crab worm fly:flies`;

const THINGS = `mat ball box:boxes book hat coat shoe sock bag cup plate bowl spoon fork knife:knives
  table chair bed sofa lamp door window wall floor roof key:keys clock watch:watches phone
  pen pencil letter card picture photo map toy doll kite drum bell rope stick stone rock
  leaf:leaves flower tree bush:bushes branch:branches apple orange banana cake bread:bread
  egg cookie sandwich:sandwiches pie carrot potato:potatoes tomato:tomatoes bottle glass:glasses
  jar basket bucket brush:brushes comb towel blanket pillow candle mirror shelf:shelves drawer
  car bus:buses bike train boat ship truck plane wheel ladder fence gate bench:benches
  umbrella ticket coin ring necklace button shirt dress:dresses skirt scarf:scarves glove
  boot jacket sweater wallet purse camera radio computer screen guitar piano violin flag
  tent nest bone carpet rug pot pan kettle jug tray envelope parcel newspaper magazine
  sweet cherry:cherries pear grape lemon peach:peaches onion bean nut`;

const PLACES = `house room kitchen garden park street road city:cities town village farm field
  forest hill mountain river lake sea beach:beaches island school shop market store library:libraries
  hospital station office church castle palace bridge tower yard barn cave pond hall
  museum zoo:zoos playground corner path valley desert`;

// Verbs whose subject is a person or an animal and which take no object.
const INTRANSITIVE = `sit/sat sleep/slept run/ran walk jump laugh cry smile dance sing/sang swim/swam
  wait play arrive stay rest hide/hid climb shout listen fly/flew fall/fell stand/stood
  work live die grow/grew travel/travelled kneel/knelt yawn sneeze cough bark/barked
  hurry shiver wave nod/nodded`;

// Verbs with an object (a thing unless noted); the subject is a person or an animal.
const TRANSITIVE_THING = `take/took hold/held find/found carry make/made drop/dropped break/broke
  buy/bought sell/sold bring/brought open close wash paint fix clean cut/cut push pull kick
  throw/threw catch/caught build/built move lift keep/kept lose/lost send/sent hit/hit fill
  drive/drove want need get/got give/gave show/showed use touch`;

const TRANSITIVE_ANIMATE = `see/saw like love hate chase help meet/met follow call watch
  feed/fed visit know/knew hear/heard tell/told thank hug/hugged greet kiss bite/bit
  teach/taught remember ask wake/woke`;

// Verbs that may take an object or not ("the cat ate", "the cat ate the fish").
const EITHER_FOOD = 'eat/ate cook bake drink/drank';
const EITHER_THING = 'read/read write/wrote draw/drew';

const ADJECTIVES_ANY = `big small little large tiny huge tall short long old new young red blue green yellow
  black white brown grey pink purple orange golden silver dark bright clean dirty wet dry hot
  cold warm cool soft hard heavy light round square flat thin thick fat wide narrow full empty
  heavy strong weak fast slow quiet loud noisy pretty ugly beautiful lovely nice fine good bad
  great strange odd funny famous rich poor lucky cheap expensive wooden plastic broken shiny
  fluffy furry smooth rough sharp sweet sour fresh lazy busy ordinary special favourite
  real fancy simple plain huge gentle wild friendly curious careful clever silly brave
  proud shy kind happy sad angry hungry thirsty tired sleepy sick calm fierce playful noble
  lonely cheerful grumpy nervous polite rude quick`;

const PREPOSITIONS = `on in under near behind beside by above below over inside outside around
  across along past with without from to into onto through toward between beyond underneath
  at of for`;

// Where a verb's phrase may end: "the cat sat there".
const ADVERBS = 'there here today now again away home outside inside together alone quietly slowly quickly happily loudly soon';

/** Subject pronouns with their grammatical number and person. */
export const PRONOUNS = Object.freeze([
  { word: 'i', plural: false, person: 1, object: 'me' },
  { word: 'you', plural: true, person: 2, object: 'you' },
  { word: 'he', plural: false, person: 3, object: 'him' },
  { word: 'she', plural: false, person: 3, object: 'her' },
  { word: 'it', plural: false, person: 3, object: 'it' },
  { word: 'we', plural: true, person: 1, object: 'us' },
  { word: 'they', plural: true, person: 3, object: 'them' },
]);

/** Given names, singular, people. */
export const NAMES = Object.freeze(`anna tom mary john sam lucy ben emma jack lily max sara alex kate leo mia noah ella oliver grace`.split(' '));

/**
 * Determiners by the number of the noun they need: singular, plural, or
 * either. 'a' becomes 'an' before a vowel (grammar.js decides).
 */
export const DETERMINERS = Object.freeze({
  singular: Object.freeze(['this', 'that', 'a', 'every', 'each', 'one']),
  plural: Object.freeze(['these', 'those', 'many', 'some', 'two', 'three', 'few', 'several', 'all']),
  either: Object.freeze(['the', 'my', 'your', 'his', 'her', 'our', 'their', 'no']),
});

/** Determiner pairs that differ only in number, for the agreement test. */
export const DETERMINER_PAIRS = Object.freeze([['this', 'these'], ['that', 'those']]);

/** Punctuation tokens the tokenizer knows. */
export const PUNCTUATION = Object.freeze(['.', ',', '?', '!', ';', ':', "'", '"', '(', ')', '-']);

function words(text) {
  return text.split(/\s+/).filter(Boolean);
}

function pluralOf(w) {
  if (/(s|sh|ch|x|z)$/.test(w)) return `${w}es`;
  if (/[^aeiou]y$/.test(w)) return `${w.slice(0, -1)}ies`;
  return `${w}s`;
}

function thirdPerson(w) {
  if (w === 'have') return 'has';
  if (/(s|sh|ch|x|z|o)$/.test(w)) return `${w}es`;
  if (/[^aeiou]y$/.test(w)) return `${w.slice(0, -1)}ies`;
  return `${w}s`;
}

function pastOf(w) {
  if (w.endsWith('e')) return `${w}d`;
  if (/[^aeiou]y$/.test(w)) return `${w.slice(0, -1)}ied`;
  return `${w}ed`;
}

function nouns(text, kind) {
  return words(text).map((entry) => {
    const [singular, plural = pluralOf(singular)] = entry.split(':');
    return Object.freeze({ singular, plural, kind, animate: kind === 'person' || kind === 'animal' });
  });
}

function verbs(text, takes) {
  return words(text).map((entry) => {
    const [base, past = pastOf(base)] = entry.split('/');
    return Object.freeze({ base, third: thirdPerson(base), past, ...takes });
  });
}

/** Nouns: { singular, plural, kind: 'person' | 'animal' | 'thing' | 'place', animate }. */
export const NOUNS = Object.freeze([
  ...nouns(PEOPLE, 'person'),
  ...nouns(ANIMALS, 'animal'),
  ...nouns(THINGS, 'thing'),
  ...nouns(PLACES, 'place'),
]);

/**
 * Verbs: { base, third, past, object: null | 'thing' | 'animate' | 'food',
 * optional: whether the object may be left out }. Every subject is a person
 * or an animal (a name, a pronoun or a noun of those kinds).
 */
export const VERBS = Object.freeze([
  ...verbs(INTRANSITIVE, { object: null, optional: false }),
  ...verbs(TRANSITIVE_THING, { object: 'thing', optional: false }),
  ...verbs(TRANSITIVE_ANIMATE, { object: 'animate', optional: false }),
  ...verbs(EITHER_FOOD, { object: 'food', optional: true }),
  ...verbs(EITHER_THING, { object: 'thing', optional: true }),
]);

// Things one eats or drinks: the objects of EITHER_FOOD verbs.
const FOOD = new Set(words(`apple orange banana cake bread egg cookie sandwich pie carrot potato tomato sweet cherry
  pear grape lemon peach onion bean nut fish chicken`));

/** Whether a noun can be eaten (the object of eat, cook, bake, drink). */
export function isFood(noun) {
  return FOOD.has(noun.singular);
}

/** Adjectives (any noun). */
export const ADJECTIVES = Object.freeze([...new Set(words(ADJECTIVES_ANY))]);

export const PREPOSITIONS_LIST = Object.freeze(words(PREPOSITIONS));

export const ADVERBS_LIST = Object.freeze(words(ADVERBS));

/** The verb 'be' by tense and number: present is / are (am with i), past was / were. */
export const BE = Object.freeze({ present: { singular: 'is', plural: 'are', first: 'am' }, past: { singular: 'was', plural: 'were' } });

/** The verb 'have': has / have, had. */
export const HAVE = Object.freeze({ base: 'have', third: 'has', past: 'had', object: 'thing', optional: false });

/** Every word form the lexicon holds, in a fixed order, without repeats. */
export function allForms() {
  const forms = [];
  const add = (w) => forms.push(w);
  for (const n of NOUNS) { add(n.singular); add(n.plural); }
  for (const v of [...VERBS, HAVE]) { add(v.base); add(v.third); add(v.past); }
  for (const w of ['is', 'are', 'am', 'was', 'were', 'that', 'who', 'and']) add(w);
  ADJECTIVES.forEach(add);
  PREPOSITIONS_LIST.forEach(add);
  ADVERBS_LIST.forEach(add);
  for (const p of PRONOUNS) { add(p.word); add(p.object); }
  NAMES.forEach(add);
  for (const list of Object.values(DETERMINERS)) list.forEach(add);
  add('an');
  return [...new Set(forms)];
}
