//! Redis's glob matcher (`stringmatchlen` in util.c, 7.0.15), used by KEYS, SCAN MATCH and
//! PSUBSCRIBE.
//!
//! Redis parses the pattern independently of the subject string, so the pattern is compiled
//! once into single-byte tokens and stars, reproducing every quirk of Redis's parser (signed
//! `char` ranges, `[a-]` reading past the `]`, an unterminated class ending at the pattern's
//! end, a trailing backslash matching itself). Matching then uses the classic iterative
//! two-pointer algorithm, which is O(pattern × string) instead of exponential and needs no
//! recursion, so hostile patterns can neither hang nor overflow the stack.
//!
//! Two Redis behaviours are kept on purpose:
//! * the empty string matches only the empty pattern (Redis never enters its loop);
//! * Redis gives up past 1000 nested `*` recursions, so a pattern with more than 1000 star
//!   groups that are followed by a non-star token never matches.

/// Redis stops matching when its star recursion nests deeper than this.
const MAX_NESTING: usize = 1000;

#[derive(Clone, Debug)]
enum ClassItem {
    /// `\x` inside a class: compared exactly, even when matching case-insensitively.
    Escaped(u8),
    /// `a-z`; bounds and subject are compared as C's signed `char`.
    Range(i32, i32),
    Literal(u8),
}

#[derive(Clone, Debug)]
enum Token {
    Star,
    Any,
    Byte(u8),
    Class { negate: bool, items: Vec<ClassItem> },
}

/// A compiled pattern; compile once and match many subjects (KEYS, SCAN).
#[derive(Clone, Debug)]
pub struct Glob {
    tokens: Vec<Token>,
    nocase: bool,
    empty: bool,
    /// Star groups followed by a non-star token: the nesting Redis needs to match.
    nesting: usize,
}

/// C's `(int)(char)b` on x86: bytes >= 0x80 are negative.
fn signed(b: u8) -> i32 {
    b as i8 as i32
}

/// C's `tolower` in the "C" locale (Redis never sets LC_CTYPE), on a signed char value.
fn lower(c: i32) -> i32 {
    if (b'A' as i32..=b'Z' as i32).contains(&c) {
        c + 32
    } else {
        c
    }
}

impl Glob {
    pub fn new(pattern: &[u8], nocase: bool) -> Glob {
        let len = pattern.len();
        // Redis reads one byte past the end (the sds terminator, 0) in a few places.
        let at = |i: usize| -> u8 { pattern.get(i).copied().unwrap_or(0) };
        let mut tokens = Vec::new();
        let mut p = 0usize;
        while p < len {
            match pattern[p] {
                b'*' => {
                    while p + 1 < len && pattern[p + 1] == b'*' {
                        p += 1;
                    }
                    tokens.push(Token::Star);
                }
                b'?' => tokens.push(Token::Any),
                b'[' => {
                    p += 1;
                    let negate = at(p) == b'^';
                    if negate {
                        p += 1;
                    }
                    let mut items = Vec::new();
                    loop {
                        let rem = len.saturating_sub(p);
                        if at(p) == b'\\' && rem >= 2 {
                            p += 1;
                            items.push(ClassItem::Escaped(pattern[p]));
                        } else if at(p) == b']' && rem > 0 {
                            break;
                        } else if rem == 0 {
                            // Unterminated class: Redis steps back so the outer advance lands
                            // exactly on the end.
                            p -= 1;
                            break;
                        } else if rem >= 3 && pattern[p + 1] == b'-' {
                            let (mut start, mut end) = (signed(pattern[p]), signed(pattern[p + 2]));
                            if start > end {
                                std::mem::swap(&mut start, &mut end);
                            }
                            items.push(ClassItem::Range(start, end));
                            p += 2;
                        } else {
                            items.push(ClassItem::Literal(pattern[p]));
                        }
                        p += 1;
                    }
                    tokens.push(Token::Class { negate, items });
                }
                b'\\' if len - p >= 2 => {
                    p += 1;
                    tokens.push(Token::Byte(pattern[p]));
                }
                b => tokens.push(Token::Byte(b)),
            }
            p += 1;
        }
        let mut nesting = 0;
        for w in tokens.windows(2) {
            if matches!(w[0], Token::Star) && !matches!(w[1], Token::Star) {
                nesting += 1;
            }
        }
        Glob {
            tokens,
            nocase,
            empty: len == 0,
            nesting,
        }
    }

    fn token_matches(&self, t: &Token, c: u8) -> bool {
        match t {
            Token::Star => false,
            Token::Any => true,
            Token::Byte(b) => {
                if self.nocase {
                    b.eq_ignore_ascii_case(&c)
                } else {
                    *b == c
                }
            }
            Token::Class { negate, items } => {
                let sc = signed(c);
                let mut hit = false;
                for it in items {
                    hit |= match *it {
                        ClassItem::Escaped(b) => b == c,
                        ClassItem::Range(start, end) => {
                            if self.nocase {
                                let l = lower(sc);
                                l >= lower(start) && l <= lower(end)
                            } else {
                                sc >= start && sc <= end
                            }
                        }
                        ClassItem::Literal(b) => {
                            if self.nocase {
                                b.eq_ignore_ascii_case(&c)
                            } else {
                                b == c
                            }
                        }
                    };
                }
                hit != *negate
            }
        }
    }

    /// True when the pattern matches all of `s`.
    pub fn matches(&self, s: &[u8]) -> bool {
        if s.is_empty() {
            return self.empty;
        }
        if self.nesting > MAX_NESTING {
            return false;
        }
        let t = &self.tokens;
        let (mut p, mut i) = (0usize, 0usize);
        // Position of the last star seen and the subject index it is currently stretched to.
        let mut star: Option<(usize, usize)> = None;
        while i < s.len() {
            if p < t.len() && !matches!(t[p], Token::Star) && self.token_matches(&t[p], s[i]) {
                p += 1;
                i += 1;
            } else if p < t.len() && matches!(t[p], Token::Star) {
                star = Some((p, i));
                p += 1;
            } else if let Some((sp, si)) = star {
                p = sp + 1;
                i = si + 1;
                star = Some((sp, si + 1));
            } else {
                return false;
            }
        }
        while p < t.len() && matches!(t[p], Token::Star) {
            p += 1;
        }
        p == t.len()
    }
}

/// Redis's `stringmatchlen(pattern, s, nocase)`; compile a [`Glob`] to match many strings.
pub fn glob_match(pattern: &[u8], s: &[u8], nocase: bool) -> bool {
    Glob::new(pattern, nocase).matches(s)
}

#[cfg(test)]
mod tests {
    use super::glob_match as m;

    #[test]
    fn stars_and_question_marks() {
        assert!(m(b"*", b"abc", false));
        assert!(m(b"a*c", b"abc", false));
        assert!(m(b"a*c", b"ac", false));
        assert!(!m(b"a*c", b"ab", false));
        assert!(m(b"a?c", b"abc", false));
        assert!(!m(b"a?c", b"ac", false));
        assert!(m(b"*b*", b"abc", false));
        assert!(m(b"a**", b"a", false));
        assert!(m(b"h*llo*", b"hello world", false));
        assert!(!m(b"abc", b"abcd", false));
        assert!(!m(b"", b"a", false));
    }

    #[test]
    fn empty_subject_matches_only_empty_pattern() {
        assert!(m(b"", b"", false));
        assert!(!m(b"*", b"", false));
        assert!(!m(b"**", b"", false));
    }

    #[test]
    fn classes_ranges_and_negation() {
        assert!(m(b"h[ae]llo", b"hallo", false));
        assert!(!m(b"h[ae]llo", b"hillo", false));
        assert!(m(b"h[^e]llo", b"hallo", false));
        assert!(!m(b"h[^e]llo", b"hello", false));
        assert!(m(b"h[a-b]llo", b"hbllo", false));
        assert!(m(b"h[b-a]llo", b"hallo", false), "reversed range");
        assert!(!m(b"h[a-b]llo", b"hcllo", false));
        assert!(m(b"[\\]]", b"]", false));
        assert!(!m(b"[", b"", false));
        assert!(!m(b"[", b"[", false));
        assert!(
            m(b"[^", b"x", false),
            "unterminated negated class matches any byte"
        );
        assert!(
            m(b"[abc", b"b", false),
            "unterminated class ends at pattern end"
        );
    }

    #[test]
    fn redis_quirks_kept() {
        // "[a-]" is the range 'a'..']' and then reads past the ']'.
        assert!(m(b"[a-]", b"_", false));
        assert!(!m(b"[a-]", b"b", false));
        // Ranges compare signed chars: 0xff is -1, so [a-\xff] is [\xff-a].
        assert!(m(b"[a-\xff]", b"\x00", false));
        assert!(m(b"[a-\xff]", b"Z", false));
        assert!(m(b"[a-\xff]", b"\xff", false));
        assert!(!m(b"[a-\xff]", b"b", false));
    }

    #[test]
    fn escapes() {
        assert!(m(b"a\\*b", b"a*b", false));
        assert!(!m(b"a\\*b", b"axb", false));
        assert!(
            m(b"a\\", b"a\\", false),
            "trailing backslash matches itself"
        );
        assert!(m(b"\\?", b"?", false));
        assert!(!m(b"\\?", b"x", false));
    }

    #[test]
    fn nocase() {
        assert!(m(b"HELLO", b"hello", true));
        assert!(!m(b"HELLO", b"hello", false));
        assert!(m(b"[A-C]x", b"bX", true));
        assert!(m(b"[AB]", b"b", true));
        assert!(
            !m(b"[\\A]", b"a", true),
            "escaped class byte stays case-sensitive"
        );
    }

    #[test]
    fn binary_safe() {
        assert!(m(b"a\x00*", b"a\x00\x01\x02", false));
        assert!(!m(b"a\x00", b"a\x01", false));
    }

    #[test]
    fn pathological_patterns_finish_fast() {
        let s = vec![b'a'; 100_000];
        let mut p = b"a*".repeat(500);
        p.push(b'b');
        let t = std::time::Instant::now();
        assert!(!m(&p, &s, false));
        assert!(t.elapsed().as_secs() < 5);
    }

    #[test]
    fn nesting_limit_as_redis() {
        let s = vec![b'a'; 1500];
        let mut p = b"a*".repeat(1000);
        p.push(b'a');
        assert!(m(&p, &s, false));
        let mut p = b"a*".repeat(1001);
        assert!(m(&p, &s, false), "last star does not recurse");
        p.push(b'a');
        assert!(!m(&p, &s, false));
    }
}
