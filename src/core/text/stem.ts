/**
 * The one English stemmer of KnowHub: irregular forms to their base word, then the Porter
 * stemmer (npm `stemmer`). Full-text search, the hashed embedder and the pack resolver all
 * stem with {@link stemWord}, so `went` meets `go` everywhere or nowhere.
 *
 * The irregular-forms table: common irregular verbs (past tense and past participle) and
 * nouns (plurals), written `base form form…`. The Porter stemmer cannot join these
 * (`went`/`go`, `bought`/`buy`, `children`/`child`). A form is left out when another
 * common meaning of the same word would be joined wrongly:
 * `bit` (a bit; bite), `bound` (a bound; bind), `bore` (bear), `left` (the left side;
 * leave), `led` (LED; lead), `lit` (light), `rose` (the flower; rise), `lay` (lie: `lay`
 * is kept as a base word, of `laid`). Forms equal to their base (`cut`, `put`) need no entry.
 *
 * Changing the table changes stored search terms and embedder vectors: bump
 * `SEARCH_DOC_VERSION` (knowledge/search/document.ts) and `HASHED_VERSION` (embed/hashed.ts).
 */
import { stemmer } from 'stemmer'

const IRREGULAR_GROUPS =
  'arise arose arisen|awake awoke awoken|bear borne|beat beaten|become became|begin began begun|bend bent|' +
  'bite bitten|bleed bled|blow blew blown|break broke broken|breed bred|bring brought|build built|burn burnt|' +
  'buy bought|catch caught|choose chose chosen|cling clung|come came|creep crept|deal dealt|dig dug|draw drew drawn|' +
  'dream dreamt|drink drank drunk|drive drove driven|eat ate eaten|fall fell fallen|feed fed|feel felt|fight fought|' +
  'find found|flee fled|fling flung|fly flew flown|forbid forbade forbidden|forget forgot forgotten|forgive forgave forgiven|' +
  'freeze froze frozen|get got gotten|give gave given|go went gone|grow grew grown|hang hung|hear heard|hide hid hidden|' +
  'hold held|keep kept|kneel knelt|know knew known|lay laid|lean leant|leap leapt|learn learnt|' +
  'lend lent|lie lain|lose lost|make made|mean meant|meet met|mistake mistook mistaken|overcome overcame|' +
  'pay paid|prove proven|ride rode ridden|ring rang rung|rise risen|run ran|say said|see saw seen|seek sought|' +
  'sell sold|send sent|shake shook shaken|shine shone|shoot shot|show shown|shrink shrank shrunk|sing sang sung|' +
  'sink sank sunk|sit sat|sleep slept|slide slid|speak spoke spoken|speed sped|spend spent|spin spun|spring sprang sprung|' +
  'stand stood|steal stole stolen|stick stuck|sting stung|stink stank stunk|strike struck stricken|strive strove striven|' +
  'swear swore sworn|sweep swept|swim swam swum|swing swung|take took taken|teach taught|tear tore torn|tell told|' +
  'think thought|throw threw thrown|understand understood|undertake undertook undertaken|wake woke woken|wear wore worn|' +
  'weave wove woven|weep wept|win won|withdraw withdrew withdrawn|write wrote written|' +
  'child children|man men|woman women|person people|mouse mice|foot feet|tooth teeth|goose geese'

/**
 * Irregular English forms and their base word (see the module comment for what is left out).
 * @example
 * IRREGULAR_FORMS.get('went') // 'go'
 */
export const IRREGULAR_FORMS: ReadonlyMap<string, string> = new Map(
  IRREGULAR_GROUPS.split('|').flatMap((group) => {
    const [base, ...forms] = group.split(' ')
    return forms.map((form) => [form, base!] as [string, string])
  }),
)

const STEM_CACHE_LIMIT = 100_000
const stemCache = new Map<string, string>()
const ASCII_WORD = /^[a-z]+$/

/**
 * The stem of one lower-cased word (as `latinWords` gives it): an irregular form becomes
 * its base word, then plain ASCII words longer than two letters get their Porter stem;
 * other words stay as they are.
 * @example
 * stemWord('went') // 'go'
 * stemWord('painting') // 'paint'
 */
export function stemWord(word: string): string {
  const base = IRREGULAR_FORMS.get(word) ?? word
  if (base.length <= 2 || !ASCII_WORD.test(base)) return base
  let stemmed = stemCache.get(base)
  if (stemmed === undefined) {
    stemmed = stemmer(base)
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear()
    stemCache.set(base, stemmed)
  }
  return stemmed
}
