//! `rules/lexicon.yaml` and the text analysis it drives: tokens, stems, synonyms, technical
//! tokens and the role (asserted, negated, before-, after-clause) of every content word.

use std::collections::BTreeMap;

use super::fx::{FxMap as HashMap, FxSet as HashSet};

use serde::Deserialize;
use unicode_segmentation::UnicodeSegmentation;

/// Marker that `instead of`, `rather than`, … map to.
const INSTEAD: &str = "~instead";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default = "default_measure")]
    measure: String,
    threshold: f64,
    #[serde(default = "default_substitution")]
    max_substitution: usize,
    #[serde(default = "default_cap")]
    postings_cap: usize,
    #[serde(default = "default_compares")]
    max_compares: usize,
    #[serde(default)]
    stop_words: Vec<String>,
    #[serde(default)]
    articles: Vec<String>,
    #[serde(default)]
    negators: Vec<String>,
    #[serde(default)]
    clause_breaks: Vec<String>,
    #[serde(default)]
    phrases: BTreeMap<String, String>,
    #[serde(default)]
    synonyms: Vec<Vec<String>>,
    #[serde(default)]
    antonyms: Vec<Vec<String>>,
    #[serde(default)]
    commands: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    technical_terms: Vec<String>,
    #[serde(default)]
    abbreviations: Vec<String>,
    #[serde(default)]
    inflection: InflectionFile,
}

fn default_measure() -> String {
    "dice".into()
}
fn default_substitution() -> usize {
    1
}
fn default_cap() -> usize {
    64
}
fn default_compares() -> usize {
    16
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct InflectionFile {
    #[serde(default)]
    min_length: usize,
    #[serde(default)]
    exceptions: BTreeMap<String, String>,
    #[serde(default)]
    stages: Vec<Vec<SuffixRule>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct SuffixRule {
    suffix: String,
    #[serde(default)]
    replace: String,
    #[serde(default = "one")]
    min_stem: usize,
    #[serde(default)]
    keep: Vec<String>,
    #[serde(default)]
    undouble: bool,
}

fn one() -> usize {
    1
}

/// How content overlap is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Measure {
    /// 2|A∩B| / (|A|+|B|)
    Dice,
    /// |A∩B| / |A∪B|
    Jaccard,
    /// |A∩B| / min(|A|,|B|)
    Overlap,
}

/// `rules/lexicon.yaml`: stop words, inflections, synonyms, antonyms, technical-token rules
/// and the similarity threshold.
#[derive(Clone, Debug)]
pub struct Lexicon {
    pub(crate) measure: Measure,
    pub(crate) threshold: f64,
    pub(crate) max_substitution: usize,
    pub(crate) postings_cap: usize,
    pub(crate) max_compares: usize,
    stop: HashSet<String>,
    articles: HashSet<String>,
    negators: HashSet<String>,
    breaks: HashSet<String>,
    /// Stemmed word sequences → replacement, longest first.
    phrases: Vec<(Vec<String>, String)>,
    /// First words of the phrases: most tokens start none, so they skip the phrase scan.
    phrase_starts: HashSet<String>,
    synonyms: HashMap<String, String>,
    pub(crate) antonyms: Vec<(String, String)>,
    commands: HashMap<String, HashSet<String>>,
    terms: HashSet<String>,
    abbreviations: HashSet<String>,
    min_length: usize,
    exceptions: HashMap<String, String>,
    stages: Vec<Vec<SuffixRule>>,
    /// Stems of the words that steer roles.
    mk: Markers,
}

#[derive(Clone, Debug, Default)]
struct Markers {
    not: String,
    before: String,
    after: String,
    replace: String,
    with: String,
    by: String,
    over: String,
    than: String,
    prefer: Vec<String>,
}

impl Default for Lexicon {
    fn default() -> Lexicon {
        Lexicon::from_yaml("threshold: 0.5").expect("minimal lexicon")
    }
}

/// What a content word does in its sentence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Role {
    Asserted,
    /// Negated ("never X", "avoid X") or dispreferred ("instead of X", "replace X with").
    Negated,
    /// In a "before …" clause.
    Before,
    /// In an "after …" clause.
    After,
}

/// One content token of an analysed text.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Token {
    pub text: String,
    pub technical: bool,
    /// `None` when the word plays more than one role in the text.
    pub role: Option<Role>,
}

/// A text as the similarity measure sees it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Analysis {
    /// Content tokens, deduplicated, sorted by text.
    pub tokens: Vec<Token>,
    /// Every canonical word (stop words and markers included), sorted: for antonyms.
    pub words: Vec<String>,
    /// Content tokens in order of first appearance (text, technical).
    pub seq: Vec<(String, bool)>,
    /// Per antonym pair of the lexicon: 1 = only the first word occurs, 2 = only the second,
    /// 0 = neither or both.
    pub antonyms: Vec<u8>,
}

impl Analysis {
    pub fn contains_word(&self, w: &str) -> bool {
        self.words.binary_search_by(|x| x.as_str().cmp(w)).is_ok()
    }
}

#[derive(Clone, Debug)]
enum Item {
    Word { text: String, technical: bool },
    Break,
}

impl Lexicon {
    pub fn from_yaml(text: &str) -> Result<Lexicon, String> {
        let f: File = serde_yaml::from_str(text).map_err(|e| e.to_string())?;
        let measure = match f.measure.as_str() {
            "dice" => Measure::Dice,
            "jaccard" => Measure::Jaccard,
            "overlap" => Measure::Overlap,
            other => {
                return Err(format!("unknown measure `{other}` (dice, jaccard, overlap)"));
            }
        };
        if !(f.threshold > 0.0 && f.threshold <= 1.0) {
            return Err(format!("threshold {} is not in (0, 1]", f.threshold));
        }
        if f.postings_cap == 0 {
            return Err("postings_cap must be at least 1".into());
        }
        let mut lx = Lexicon {
            measure,
            threshold: f.threshold,
            max_substitution: f.max_substitution,
            postings_cap: f.postings_cap,
            max_compares: f.max_compares.max(1),
            stop: HashSet::default(),
            articles: HashSet::default(),
            negators: HashSet::default(),
            breaks: HashSet::default(),
            phrases: Vec::new(),
            phrase_starts: HashSet::default(),
            synonyms: HashMap::default(),
            antonyms: Vec::new(),
            commands: HashMap::default(),
            terms: HashSet::default(),
            abbreviations: f.abbreviations.iter().map(|s| s.to_lowercase()).collect(),
            min_length: f.inflection.min_length,
            exceptions: f
                .inflection
                .exceptions
                .iter()
                .map(|(k, v)| (k.to_lowercase(), v.to_lowercase()))
                .collect(),
            stages: f.inflection.stages.clone(),
            mk: Markers::default(),
        };
        // Everything below is matched on stems.
        let stem = |lx: &Lexicon, w: &str| lx.stem(&w.to_lowercase());
        lx.mk = Markers {
            not: stem(&lx, "not"),
            before: stem(&lx, "before"),
            after: stem(&lx, "after"),
            replace: stem(&lx, "replace"),
            with: stem(&lx, "with"),
            by: stem(&lx, "by"),
            over: stem(&lx, "over"),
            than: stem(&lx, "than"),
            prefer: vec![stem(&lx, "use"), stem(&lx, "prefer")],
        };
        lx.stop = f.stop_words.iter().map(|w| stem(&lx, w)).collect();
        lx.articles = f.articles.iter().map(|w| stem(&lx, w)).collect();
        lx.negators = f.negators.iter().map(|w| stem(&lx, w)).collect();
        lx.breaks = f.clause_breaks.iter().map(|w| stem(&lx, w)).collect();
        let mut synonyms = HashMap::default();
        for group in &f.synonyms {
            let Some(first) = group.first() else { continue };
            let canon = stem(&lx, first);
            for w in group {
                let s = stem(&lx, w);
                if let Some(prev) = synonyms.insert(s.clone(), canon.clone())
                    && prev != canon
                {
                    return Err(format!("`{w}` is in two synonym groups"));
                }
            }
        }
        lx.synonyms = synonyms;
        let mut phrases = Vec::new();
        for (k, v) in &f.phrases {
            let words: Vec<String> = k.split_whitespace().map(|w| stem(&lx, w)).collect();
            if words.len() < 2 {
                return Err(format!("phrase `{k}` needs two or more words"));
            }
            let v = if v.starts_with('~') {
                v.clone()
            } else {
                lx.canon(&stem(&lx, v))
            };
            phrases.push((words, v));
        }
        phrases.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        lx.phrase_starts = phrases.iter().filter_map(|(w, _)| w.first().cloned()).collect();
        lx.phrases = phrases;
        for pair in &f.antonyms {
            if pair.len() != 2 {
                return Err(format!("antonym group {pair:?} must have two words"));
            }
            let a = lx.canon(&stem(&lx, &pair[0]));
            let b = lx.canon(&stem(&lx, &pair[1]));
            lx.antonyms.push((a, b));
        }
        for (prog, subs) in &f.commands {
            let p = lx.canon(&stem(&lx, prog));
            let set = subs.iter().map(|s| lx.canon(&stem(&lx, s))).collect();
            lx.commands.insert(p, set);
        }
        lx.terms = f
            .technical_terms
            .iter()
            .map(|w| lx.canon(&stem(&lx, w)))
            .collect();
        Ok(lx)
    }

    /// The similarity threshold (for reports).
    pub fn threshold(&self) -> f64 {
        self.threshold
    }

    fn canon(&self, w: &str) -> String {
        self.synonyms.get(w).cloned().unwrap_or_else(|| w.to_string())
    }

    /// Inflection: exceptions, then the suffix stages.
    pub fn stem(&self, word: &str) -> String {
        if let Some(e) = self.exceptions.get(word) {
            return e.clone();
        }
        if word.chars().count() < self.min_length.max(1) || !word.chars().all(char::is_alphabetic) {
            return word.to_string();
        }
        let mut w = word.to_string();
        for stage in &self.stages {
            for r in stage {
                if !w.ends_with(&r.suffix) || r.keep.iter().any(|k| w.ends_with(k.as_str())) {
                    continue;
                }
                let base = &w[..w.len() - r.suffix.len()];
                let stem_len = base.chars().count() + r.replace.chars().count();
                let has_vowel = base.chars().any(|c| "aeiouy".contains(c));
                if stem_len < r.min_stem || !has_vowel {
                    continue;
                }
                let mut s = format!("{base}{}", r.replace);
                if r.undouble {
                    let cs: Vec<char> = s.chars().collect();
                    let n = cs.len();
                    if n >= 3
                        && cs[n - 1] == cs[n - 2]
                        && !"lsz".contains(cs[n - 1])
                        && !"aeiouy".contains(cs[n - 1])
                    {
                        s.pop();
                    }
                }
                w = s;
                break;
            }
        }
        w
    }

    /// Splits a text into words and clause breaks, keeping technical tokens whole.
    fn tokenize(&self, text: &str) -> Vec<Item> {
        let text = text.replace(['\u{2019}', '\u{2018}'], "'");
        let mut out = Vec::new();
        for chunk in text.split_whitespace() {
            self.chunk(chunk, &mut out);
        }
        out
    }

    fn chunk(&self, chunk: &str, out: &mut Vec<Item>) {
        const LEAD: &[char] = &['"', '\'', '`', '(', '[', '{', '<', '*', '“', '”'];
        const TRAIL: &[char] = &[
            '"', '\'', '`', ')', ']', '}', '>', '*', ',', ';', ':', '.', '!', '?', '“', '”',
        ];
        const BREAK: &[char] = &[',', ';', ':', '.', '!', '?'];
        if matches!(chunk, "-" | "—" | "–") {
            out.push(Item::Break);
            return;
        }
        let mut s = chunk.trim_start_matches(LEAD);
        let mut brk = false;
        let mut call = false;
        loop {
            if s.ends_with("()") {
                call = true;
                s = &s[..s.len() - 2];
                break;
            }
            match s.chars().last() {
                Some(c) if TRAIL.contains(&c) => {
                    brk |= BREAK.contains(&c);
                    s = &s[..s.len() - c.len_utf8()];
                }
                _ => break,
            }
        }
        // `f(x, y)`: the head is a call, the rest is more text.
        if let Some(i) = s.find('(')
            && i > 0
        {
            let (head, rest) = (&s[..i], &s[i + 1..]);
            self.word_or_technical(head, true, out);
            let rest = rest.replace(')', "");
            if !rest.is_empty() {
                self.chunk(&rest, out);
            }
        } else if !s.is_empty() {
            self.word_or_technical(s, call, out);
        }
        if brk {
            out.push(Item::Break);
        }
    }

    fn word_or_technical(&self, s: &str, call: bool, out: &mut Vec<Item>) {
        let lower = s.to_lowercase();
        if self.abbreviations.contains(lower.trim_end_matches('.')) {
            return;
        }
        if call || looks_technical(s) {
            let t: String = lower.chars().filter(|c| !"\"'`".contains(*c)).collect();
            let t = t.trim_end_matches("()").to_string();
            if t.chars().any(char::is_alphanumeric) {
                out.push(Item::Word {
                    text: t,
                    technical: true,
                });
            }
            return;
        }
        for w in s.unicode_words() {
            let mut w = w.to_lowercase();
            if let Some(b) = w.strip_suffix("'s") {
                w = b.to_string();
            }
            if w.ends_with("n't") {
                w = "not".into();
            }
            out.push(Item::Word {
                text: w,
                technical: false,
            });
        }
    }

    /// The analysis the similarity measure compares.
    pub fn analyze(&self, text: &str) -> Analysis {
        // 1. stems
        let items: Vec<Item> = self
            .tokenize(text)
            .into_iter()
            .map(|it| match it {
                Item::Word {
                    text,
                    technical: false,
                } => Item::Word {
                    text: self.stem(&text),
                    technical: false,
                },
                other => other,
            })
            .collect();
        // 2. phrases, 3. synonyms
        let mut seq: Vec<Item> = Vec::with_capacity(items.len());
        let mut i = 0;
        'outer: while i < items.len() {
            let may_start = matches!(&items[i], Item::Word { text, technical: false } if self.phrase_starts.contains(text));
            for (words, repl) in self.phrases.iter().filter(|_| may_start) {
                let n = words.len();
                if i + n <= items.len()
                    && words
                        .iter()
                        .zip(&items[i..i + n])
                        .all(|(w, it)| matches!(it, Item::Word { text, technical: false } if text == w))
                {
                    seq.push(Item::Word {
                        text: repl.clone(),
                        technical: false,
                    });
                    i += n;
                    continue 'outer;
                }
            }
            seq.push(match &items[i] {
                Item::Word { text, technical } => {
                    let c = self.canon(text);
                    let technical = if c != *text {
                        *technical && !c.chars().all(char::is_alphabetic)
                    } else {
                        *technical
                    };
                    Item::Word {
                        technical: technical || self.terms.contains(&c),
                        text: c,
                    }
                }
                Item::Break => Item::Break,
            });
            i += 1;
        }
        // 4. commands: `program subcommand` becomes a technical token as well.
        let mut full: Vec<Item> = Vec::with_capacity(seq.len() + 4);
        for (k, it) in seq.iter().enumerate() {
            full.push(it.clone());
            if let (Item::Word { text: p, .. }, Some(Item::Word { text: sub, .. })) = (it, seq.get(k + 1))
                && self.commands.get(p).is_some_and(|s| s.contains(sub))
            {
                full.push(Item::Word {
                    text: format!("{p} {sub}"),
                    technical: true,
                });
            }
        }
        // 5. roles, 6. stop words.
        let mut words: Vec<String> = Vec::new();
        // Content tokens in order of first appearance, with their role.
        let mut roles: Vec<(String, bool, Option<Role>)> = Vec::new();
        let mut clause = Role::Asserted;
        let mut contrast = false;
        let mut replace = false;
        let mut prefer = false;
        for it in &full {
            let (text, technical) = match it {
                Item::Break => {
                    clause = Role::Asserted;
                    contrast = false;
                    replace = false;
                    prefer = false;
                    continue;
                }
                Item::Word { text, technical } => (text, *technical),
            };
            words.push(text.clone());
            if technical {
                let role = if contrast || replace {
                    Role::Negated
                } else {
                    clause
                };
                note(&mut roles, text, true, role);
                continue;
            }
            let t = text.as_str();
            if self.breaks.contains(t) {
                clause = Role::Asserted;
                contrast = false;
                replace = false;
                prefer = false;
                continue;
            }
            let mk = &self.mk;
            if self.negators.contains(t) || *t == mk.not {
                clause = Role::Negated;
                continue;
            }
            if t == INSTEAD || (prefer && (*t == mk.over || *t == mk.than)) {
                contrast = true;
                continue;
            }
            if *t == mk.replace {
                replace = true;
                continue;
            }
            if replace && (*t == mk.with || *t == mk.by) {
                replace = false;
                continue;
            }
            if *t == mk.before || *t == mk.after {
                if clause != Role::Negated {
                    clause = if *t == mk.before {
                        Role::Before
                    } else {
                        Role::After
                    };
                }
                continue;
            }
            if mk.prefer.iter().any(|p| p == t) {
                prefer = true;
            }
            if self.stop.contains(t) || t.starts_with('~') {
                if contrast && !self.articles.contains(t) {
                    contrast = false;
                }
                continue;
            }
            let role = if contrast || replace {
                Role::Negated
            } else {
                clause
            };
            note(&mut roles, text, false, role);
        }
        words.sort();
        words.dedup();
        let mut seq: Vec<(String, bool)> = roles.iter().map(|r| (r.0.clone(), r.1)).collect();
        seq.dedup_by(|a, b| a.0 == b.0);
        let mut tokens: Vec<Token> = roles
            .into_iter()
            .map(|(text, technical, role)| Token {
                text,
                technical,
                role,
            })
            .collect();
        // A word seen both as technical and plain counts once, as technical.
        tokens.sort_by(|a, b| a.text.cmp(&b.text).then(b.technical.cmp(&a.technical)));
        tokens.dedup_by(|a, b| a.text == b.text);
        let has = |w: &str| words.binary_search_by(|x| x.as_str().cmp(w)).is_ok();
        let antonyms = self
            .antonyms
            .iter()
            .map(|(x, y)| match (has(x), has(y)) {
                (true, false) => 1,
                (false, true) => 2,
                _ => 0,
            })
            .collect();
        Analysis {
            tokens,
            words,
            seq,
            antonyms,
        }
    }
}

fn note(roles: &mut Vec<(String, bool, Option<Role>)>, text: &str, technical: bool, role: Role) {
    match roles.iter_mut().find(|r| r.1 == technical && r.0 == text) {
        Some(r) => {
            if r.2 != Some(role) {
                r.2 = None
            }
        }
        None => roles.push((text.to_string(), technical, Some(role))),
    }
}

/// Flags, paths, dotted identifiers, snake_case, `k=v`, words with digits, camelCase.
fn looks_technical(s: &str) -> bool {
    let cs: Vec<char> = s.chars().collect();
    if cs.is_empty() || !cs.iter().any(|c| c.is_alphanumeric()) {
        return false;
    }
    if cs[0] == '-' && cs.len() > 1 && (cs[1].is_alphanumeric() || cs[1] == '-') {
        return true;
    }
    if cs[0] == '.' && cs.len() > 1 && cs[1].is_alphabetic() {
        return true;
    }
    if s.contains('/') || s.contains('_') || s.contains('=') || s.contains("::") {
        return true;
    }
    if cs.iter().any(|c| c.is_ascii_digit()) {
        return true;
    }
    for w in cs.windows(3) {
        if w[1] == '.' && w[0].is_alphanumeric() && w[2].is_alphanumeric() {
            return true;
        }
    }
    // camelCase: lower case first, an upper-case letter later.
    cs[0].is_lowercase() && cs.iter().skip(1).any(|c| c.is_uppercase())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lx() -> Lexicon {
        Lexicon::from_yaml(include_str!("../../rules/lexicon.yaml")).unwrap()
    }

    fn texts(a: &Analysis) -> Vec<String> {
        a.tokens.iter().map(|t| t.text.clone()).collect()
    }

    #[test]
    fn stems() {
        let l = lx();
        for (a, b) in [
            ("runs", "run"),
            ("running", "run"),
            ("ran", "run"),
            ("repositories", "repository"),
            ("caching", "cache"),
            ("pinned", "pin"),
            ("strings", "string"),
            ("using", "use"),
            ("indexes", "index"),
        ] {
            assert_eq!(l.stem(a), l.stem(b), "{a} vs {b}");
        }
    }

    #[test]
    fn technical_tokens_stay_whole() {
        let l = lx();
        let a = l.analyze(
            "Use `os.makedirs(path, exist_ok=True)` with --locked in src/app.py, call foo() on v1.2.3",
        );
        let t = texts(&a);
        for want in [
            "os.makedirs",
            "exist_ok=true",
            "--locked",
            "src/app.py",
            "foo",
            "v1.2.3",
        ] {
            assert!(t.contains(&want.to_string()), "{want} missing from {t:?}");
        }
        assert!(a.tokens.iter().find(|x| x.text == "--locked").unwrap().technical);
    }

    #[test]
    fn synonyms_and_roles() {
        let l = lx();
        let a = l.analyze("Never commit the repo's deps");
        let b = l.analyze("don't commit repository dependencies");
        assert_eq!(a.tokens, b.tokens);
        assert!(a.tokens.iter().all(|t| t.role == Some(Role::Negated)));
        let c = l.analyze("Use npm ci instead of npm install");
        let ci = c.tokens.iter().find(|t| t.text == "npm ci").unwrap();
        let inst = c.tokens.iter().find(|t| t.text == "npm install").unwrap();
        assert_eq!(ci.role, Some(Role::Asserted));
        assert_eq!(inst.role, Some(Role::Negated));
    }
}
