// grammar.js - sentences of a small English grammar over the everyday
// lexicon (lexicon.js), each carrying its structure, so that a masked word's
// form can only be told from a word elsewhere (a determiner from its noun's
// number, a verb from its subject's) and a head's attention can be scored
// against the true partner (scores.js).
//
//   sentence := subject verb-phrase [ending] ['.']
//   subject  := noun-phrase | pronoun | name
//   noun-phrase := determiner adjective{0..3} noun [modifier]
//   modifier := preposition noun-phrase          "the cat near the dogs"
//             | 'that' verb-phrase               "the dog that chases the cats"
//             | 'that' subject verb              "the dog that the cats chase"
//   verb-phrase := verb [object] | be (adjective | preposition noun-phrase)
//   ending   := preposition noun-phrase | adverb  "sat on the mat", "sat there"
// Noun phrases inside a modifier take no modifier themselves. Present-tense
// verbs agree with their subject (sits / sit, is / are, has / have), so do
// this / these and that / those with their noun; past tense agrees only in
// was / were.
//
// A sentence is { words, det, adj, subj, obj, prep, agree }, every relation
// a list of { from, to, ... } word indices:
//   det   determiner -> its noun; adjectives: how many stand between
//   adj   adjective -> its noun
//   subj  verb -> its subject's head word; between: 'phrase' | 'clause' | null,
//         what stands between them (a prepositional phrase, a relative clause)
//   obj   verb -> its object's head word (not the gap of an object relative)
//   prep  preposition -> its object's head word
//   agree { at, right, wrong, kind: 'verb' | 'det', attractor }: the word at
//         `at` is `right` and would be `wrong` with the other number;
//         attractor: a noun of the other number stands between it and its partner

import { NumpyRandom } from '../../core/numpy-random.js';
import {
  ADJECTIVES, ADVERBS_LIST, BE, DETERMINERS, HAVE, NAMES, NOUNS, PREPOSITIONS_LIST, PRONOUNS, VERBS, isFood,
} from './lexicon.js';

const ANIMATE = NOUNS.filter((n) => n.animate);
const FOODS = NOUNS.filter(isFood);
const LOCATIVE = NOUNS.filter((n) => n.kind === 'thing' || n.kind === 'place');
const VERB_PREPOSITIONS = PREPOSITIONS_LIST.filter((p) => p !== 'of' && p !== 'between');
const THING_PRONOUNS = PRONOUNS.filter((p) => p.word === 'it' || p.word === 'they');
const COPULA_PREPOSITIONS = ['on', 'in', 'under', 'near', 'behind', 'beside', 'by', 'above', 'below', 'inside', 'outside', 'with', 'at'];
const SEEING = VERBS.filter((v) => v.object === 'animate');
const NUMBER_PAIRS = { this: 'these', these: 'this', that: 'those', those: 'that' };

/** How often each choice is made; the grammar's only knobs. */
export const GRAMMAR_DEFAULTS = Object.freeze({
  // Subject kinds: a noun phrase, else a pronoun or a name.
  pronoun: 0.1,
  name: 0.08,
  // A noun phrase's determiner: one marked for number (this, these, a, many ...), else neutral (the, my ...).
  markedDeterminer: 0.55,
  // Adjectives before the noun: probability of 0, 1, 2, 3.
  adjectives: [0.4, 0.3, 0.18, 0.12],
  // A subject's modifier: a prepositional phrase, a subject relative, an object relative.
  subjectPhrase: 0.2,
  subjectRelative: 0.1,
  objectRelative: 0.12,
  // An object's modifier: a prepositional phrase.
  objectPhrase: 0.15,
  present: 0.6,
  copula: 0.12,
  have: 0.05,
  endingPhrase: 0.3,
  endingAdverb: 0.25,
  period: 0.7,
});

class Builder {
  constructor(rng, settings) {
    this.rng = rng;
    this.s = settings;
    this.words = [];
    this.nouns = []; // [index, plural] of every noun, for attractors
    this.det = [];
    this.adj = [];
    this.subj = [];
    this.obj = [];
    this.prep = [];
    this.agree = [];
  }

  chance(p) {
    return this.rng.random() < p;
  }

  pick(list) {
    return list[Math.floor(this.rng.random() * list.length)];
  }

  push(word) {
    this.words.push(word);
    return this.words.length - 1;
  }

  // A noun phrase without modifiers: determiner, adjectives, noun. Returns { head, plural }.
  simpleNoun(pool, plural = this.chance(0.45)) {
    const noun = this.pick(pool);
    const marked = this.chance(this.s.markedDeterminer);
    let det = this.pick(marked ? DETERMINERS[plural ? 'plural' : 'singular'] : DETERMINERS.either);
    const weights = this.s.adjectives;
    let count = 0;
    for (let u = this.rng.random(); count < weights.length - 1 && u >= weights[count]; count++) u -= weights[count];
    const adjectives = [];
    while (adjectives.length < count) {
      const a = this.pick(ADJECTIVES);
      if (!adjectives.includes(a)) adjectives.push(a);
    }
    const word = plural ? noun.plural : noun.singular;
    if (det === 'a' && /^[aeiou]/.test(adjectives[0] ?? word)) det = 'an';
    const at = this.push(det);
    const adjectiveAt = adjectives.map((a) => this.push(a));
    const head = this.push(word);
    this.nouns.push([head, plural]);
    this.det.push({ from: at, to: head, adjectives: count });
    for (const a of adjectiveAt) this.adj.push({ from: a, to: head });
    if (NUMBER_PAIRS[det]) this.agree.push({ at, right: det, wrong: NUMBER_PAIRS[det], kind: 'det', attractor: false });
    return { head, plural, person: 3 };
  }

  // A subject or object: a noun phrase, a pronoun or a name. Returns { head, plural, person }.
  argument(pool, role, modifiers, subject = null) {
    const people = pool === ANIMATE;
    if (this.chance(this.s.pronoun)) {
      let p = this.pick(people ? PRONOUNS : THING_PRONOUNS);
      // "i build me" reads wrong; the object pronoun differs from the subject's.
      if (subject?.pronoun === p.word) p = PRONOUNS[(PRONOUNS.indexOf(p) + 1) % PRONOUNS.length];
      const head = this.push(role === 'subject' ? p.word : p.object);
      this.nouns.push([head, p.plural]);
      return { head, plural: p.plural, person: p.person, pronoun: p.word };
    }
    if (people && this.chance(this.s.name)) {
      const head = this.push(this.pick(NAMES));
      this.nouns.push([head, false]);
      return { head, plural: false, person: 3 };
    }
    const np = this.simpleNoun(pool);
    np.between = null;
    if (!modifiers) return np;
    const { phrase, subjectRelative, objectRelative } = modifiers;
    const u = this.rng.random();
    if (u < phrase) {
      this.prepositionalPhrase(PREPOSITIONS_LIST);
      np.between = 'phrase';
    } else if (u < phrase + subjectRelative) {
      this.push('that');
      // "the dog that chases the cats": the relative verb's subject is the head noun.
      this.verbPhrase(np, { ending: false });
      np.between = 'clause';
    } else if (u < phrase + subjectRelative + objectRelative) {
      this.push('that');
      // "the dog that the cats chase": the head noun is the relative verb's (unwritten) object.
      const inner = this.argument(ANIMATE, 'subject', null);
      const verb = this.pick(SEEING);
      this.verb(verb, inner, this.chance(this.s.present) ? 'present' : 'past');
      np.between = 'clause';
    }
    return np;
  }

  prepositionalPhrase(prepositions) {
    const p = this.push(this.pick(prepositions));
    const object = this.simpleNoun(this.chance(0.8) ? LOCATIVE : NOUNS);
    this.prep.push({ from: p, to: object.head });
    return p;
  }

  // The verb's form for the subject and tense; records the subject relation and any agreement.
  verb(verb, subject, tense, between = null) {
    let right, wrong = null;
    if (verb === 'be') {
      if (tense === 'past') {
        right = subject.plural ? BE.past.plural : BE.past.singular;
        wrong = subject.plural ? BE.past.singular : BE.past.plural;
      } else if (subject.pronoun === 'i') {
        right = BE.present.first;
      } else {
        right = subject.plural ? BE.present.plural : BE.present.singular;
        wrong = subject.plural ? BE.present.singular : BE.present.plural;
      }
    } else if (tense === 'past') {
      right = verb.past;
    } else {
      const third = !subject.plural && subject.person === 3;
      right = third ? verb.third : verb.base;
      if (subject.pronoun !== 'i') wrong = third ? verb.base : verb.third;
    }
    if (subject.pronoun === 'i' && tense === 'past' && verb === 'be') wrong = null;
    const at = this.push(right);
    this.subj.push({ from: at, to: subject.head, between });
    if (wrong !== null && wrong !== right) {
      const attractor = this.nouns.some(([i, plural]) => i > subject.head && i < at && plural !== subject.plural);
      this.agree.push({ at, right, wrong, kind: 'verb', attractor });
    }
    return at;
  }

  // A verb (or be / have) agreeing with the subject, then its object or complement.
  verbPhrase(subject, { ending = true, between = null } = {}) {
    const tense = this.chance(this.s.present) ? 'present' : 'past';
    const u = this.rng.random();
    if (u < this.s.copula) {
      this.verb('be', subject, tense, between);
      if (this.chance(0.6)) this.push(this.pick(ADJECTIVES));
      else this.prepositionalPhrase(COPULA_PREPOSITIONS);
      return;
    }
    const verb = u < this.s.copula + this.s.have ? HAVE : this.pick(VERBS);
    const at = this.verb(verb, subject, tense, between);
    if (verb.object && !(verb.optional && this.chance(0.4))) {
      const pool = verb.object === 'animate' ? ANIMATE : verb.object === 'food' ? FOODS : NOUNS.filter((n) => n.kind === 'thing');
      const modifiers = ending ? { phrase: this.s.objectPhrase, subjectRelative: 0, objectRelative: 0 } : null;
      const object = this.argument(pool, 'object', modifiers, subject);
      this.obj.push({ from: at, to: object.head });
    }
    if (!ending) return;
    const e = this.rng.random();
    if (e < this.s.endingPhrase) this.prepositionalPhrase(VERB_PREPOSITIONS);
    else if (e < this.s.endingPhrase + this.s.endingAdverb) this.push(this.pick(ADVERBS_LIST));
  }

  sentence() {
    const subject = this.argument(ANIMATE, 'subject', {
      phrase: this.s.subjectPhrase, subjectRelative: this.s.subjectRelative, objectRelative: this.s.objectRelative,
    });
    this.verbPhrase(subject, { between: subject.between ?? null });
    if (this.chance(this.s.period)) this.push('.');
    const { words, det, adj, subj, obj, prep, agree } = this;
    return { words, det, adj, subj, obj, prep, agree };
  }
}

/**
 * One sentence from rng (a NumpyRandom), of at most maxWords words (longer
 * draws are dropped and drawn again, so the stream stays deterministic).
 * @param {import('../../core/numpy-random.js').NumpyRandom} rng
 * @param {{ maxWords?: number, settings?: object }} [options]
 */
export function sentence(rng, { maxWords = 32, settings = GRAMMAR_DEFAULTS } = {}) {
  for (;;) {
    const s = new Builder(rng, settings).sentence();
    if (s.words.length <= maxWords) return s;
  }
}

/** count sentences from a fresh generator seeded with seed. */
export function sentences(seed, count, options) {
  const rng = new NumpyRandom(seed);
  return Array.from({ length: count }, () => sentence(rng, options));
}
