// words.js - the model's vocabulary: 255 common English words (the most
// frequent words of written English, less a few that read oddly on their own,
// plus a handful a learner's first sentence tends to use: cat, sat, mat, ...).
// Id 0 is '<unk>', which stands for any word not in the list, so a sentence
// a learner types mostly stays in the vocabulary. The order is the ids:
// changing it changes what every trained model means.

export const UNKNOWN = '<unk>';

export const WORDS = Object.freeze([
  UNKNOWN,
  'the', 'of', 'and', 'to', 'a', 'in', 'is', 'it', 'you', 'that', 'he', 'was',
  'for', 'on', 'are', 'with', 'as', 'i', 'his', 'they', 'be', 'at', 'one', 'have',
  'this', 'from', 'or', 'had', 'by', 'not', 'word', 'but', 'what', 'some', 'we', 'can',
  'out', 'other', 'were', 'all', 'there', 'when', 'up', 'use', 'your', 'how', 'said', 'an',
  'each', 'she', 'which', 'do', 'their', 'time', 'if', 'will', 'way', 'about', 'many', 'then',
  'them', 'write', 'would', 'like', 'so', 'these', 'her', 'long', 'make', 'thing', 'see', 'him',
  'two', 'has', 'look', 'more', 'day', 'could', 'go', 'come', 'did', 'number', 'sound', 'no',
  'most', 'people', 'my', 'over', 'know', 'water', 'than', 'call', 'first', 'who', 'may', 'down',
  'side', 'been', 'now', 'find', 'any', 'new', 'work', 'part', 'take', 'get', 'place', 'made',
  'live', 'where', 'after', 'back', 'little', 'only', 'man', 'year', 'came', 'show', 'every', 'good',
  'me', 'give', 'our', 'under', 'name', 'very', 'through', 'just', 'great', 'think', 'say', 'help',
  'line', 'much', 'before', 'move', 'right', 'boy', 'old', 'too', 'same', 'tell', 'does', 'set',
  'three', 'want', 'air', 'well', 'also', 'play', 'small', 'end', 'put', 'home', 'read', 'hand',
  'large', 'add', 'even', 'land', 'here', 'must', 'big', 'high', 'such', 'follow', 'why', 'ask',
  'men', 'change', 'went', 'light', 'kind', 'off', 'need', 'house', 'picture', 'try', 'us', 'again',
  'animal', 'point', 'mother', 'world', 'near', 'build', 'earth', 'father', 'head', 'stand', 'own', 'page',
  'should', 'country', 'found', 'answer', 'school', 'grow', 'study', 'still', 'learn', 'plant', 'food', 'sun',
  'four', 'between', 'keep', 'eye', 'never', 'last', 'let', 'thought', 'city', 'tree', 'cross', 'farm',
  'hard', 'start', 'might', 'story', 'saw', 'far', 'sea', 'draw', 'left', 'late', 'run', 'while',
  'close', 'night', 'cat', 'dog', 'sat', 'mat', 'sky', 'bed', 'ball', 'baby', 'king', 'queen',
  'apple', 'bread', 'milk', 'tea', 'cup', 'chair', 'window', 'garden', 'flower', 'happy', 'sad', 'red',
  'blue', 'girl', 'friend',
]);
