//! The plain-data rules for snapshot text (section 2.5: "Labels and detail are plain data:
//! ANSI/control sequences, HTML, scripts, CSS, and frontend layout coordinates are
//! rejected or rendered as text"). This host rejects.
//!
//! *Compact* text (every id, label, kind, title, summary, provenance, secondary line,
//! command and reference of a snapshot) is one line of at most
//! [`MAX_PRESENTATION_COMPACT_BYTES`] UTF-8 bytes and holds no control character at all:
//! no C0 control (U+0000 to U+001F, so no tab, line feed or escape), no DEL (U+007F), no C1
//! control (U+0080 to U+009F, so no single-character CSI) and no Unicode line or paragraph
//! separator (U+2028, U+2029). Ids must also be non-empty; labels may be empty.
//!
//! The detail *body* is at most [`MAX_PRESENTATION_BODY_BYTES`] and may hold line feeds
//! (U+000A) and tabs (U+0009); every other character compact text refuses is refused
//! there too, carriage return included.
//!
//! *Markup*: in compact text and in the body, `<` directly followed by an ASCII letter, `/`,
//! `!` or `?` is refused. That is exactly how every HTML tag, end tag, comment, doctype and
//! processing instruction starts (`<script`, `</p`, `<!--`, `<?xml`), so no text accepted
//! here can open an element, a `<style>` sheet or a script in a frontend that mistakenly
//! renders it as HTML. A lone `<` (`a < b`, `<=`, `<-`, `<3`) is plain text and accepted.
//! The rule is deliberately syntactic: `Vec<String>` is refused too and must be written
//! with a space (`Vec< String >`) or another character.

use serde_json::Value;

use crate::limits::{MAX_PRESENTATION_BODY_BYTES, MAX_PRESENTATION_COMPACT_BYTES};
use crate::validate::path::Path;

use super::error::{PresentationError, PresentationErrorKind};
use super::field::{as_str, PresentationPath};

/// Which text rule applies.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum TextRule {
    /// A non-empty compact identifier.
    Id,
    /// A compact label, possibly empty.
    Label,
    /// The multi-line detail body.
    Body,
}

/// `value` as a compact, non-empty identifier.
pub(super) fn compact_id(value: &Value, path: &Path) -> Result<String, PresentationError> {
    text(value, path, TextRule::Id)
}

/// `value` as a compact label.
pub(super) fn compact_label(value: &Value, path: &Path) -> Result<String, PresentationError> {
    text(value, path, TextRule::Label)
}

/// `value` as a detail body.
pub(super) fn body(value: &Value, path: &Path) -> Result<String, PresentationError> {
    text(value, path, TextRule::Body)
}

fn text(value: &Value, path: &Path, rule: TextRule) -> Result<String, PresentationError> {
    let text = as_str(value, path)?;
    check(text, rule).map_err(|kind| path.error(kind))?;
    Ok(text.to_owned())
}

/// Checks `text` against `rule`.
fn check(text: &str, rule: TextRule) -> Result<(), PresentationErrorKind> {
    let max = match rule {
        TextRule::Id | TextRule::Label => MAX_PRESENTATION_COMPACT_BYTES,
        TextRule::Body => MAX_PRESENTATION_BODY_BYTES,
    };
    if text.len() > max {
        return Err(PresentationErrorKind::TooLong {
            bytes: text.len(),
            max,
        });
    }
    if rule == TextRule::Id && text.is_empty() {
        return Err(PresentationErrorKind::Empty);
    }
    let mut chars = text.char_indices().peekable();
    while let Some((offset, c)) = chars.next() {
        if is_refused_control(c, rule) {
            return Err(PresentationErrorKind::ControlCharacter {
                code_point: u32::from(c),
                offset,
            });
        }
        if c == '<' {
            if let Some(&(_, next)) = chars.peek() {
                if next.is_ascii_alphabetic() || matches!(next, '/' | '!' | '?') {
                    return Err(PresentationErrorKind::Markup { offset });
                }
            }
        }
    }
    Ok(())
}

fn is_refused_control(c: char, rule: TextRule) -> bool {
    if rule == TextRule::Body && matches!(c, '\n' | '\t') {
        return false;
    }
    matches!(c, '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn control(code_point: u32, offset: usize) -> Result<(), PresentationErrorKind> {
        Err(PresentationErrorKind::ControlCharacter { code_point, offset })
    }

    #[test]
    fn compact_text_refuses_every_control() {
        assert_eq!(check("plain text · ok", TextRule::Label), Ok(()));
        assert_eq!(check("", TextRule::Label), Ok(()));
        assert_eq!(check("", TextRule::Id), Err(PresentationErrorKind::Empty));
        assert_eq!(check("a\tb", TextRule::Label), control(9, 1));
        assert_eq!(check("a\nb", TextRule::Label), control(10, 1));
        assert_eq!(check("\u{1b}[31mred", TextRule::Label), control(0x1b, 0));
        assert_eq!(check("x\u{7f}", TextRule::Id), control(0x7f, 1));
        assert_eq!(check("é\u{9b}31m", TextRule::Label), control(0x9b, 2));
        assert_eq!(check("a\u{2028}b", TextRule::Label), control(0x2028, 1));
        assert_eq!(check("\u{0}", TextRule::Label), control(0, 0));
        // U+00A0 (no-break space) is the first character past C1 and is text.
        assert_eq!(check("a\u{a0}b", TextRule::Label), Ok(()));
    }

    #[test]
    fn body_admits_newlines_and_tabs_only() {
        assert_eq!(check("line 1\n\tline 2\n", TextRule::Body), Ok(()));
        assert_eq!(check("a\r\nb", TextRule::Body), control(13, 1));
        assert_eq!(check("\u{1b}]8;;x\u{7}", TextRule::Body), control(0x1b, 0));
        assert_eq!(check("a\u{85}", TextRule::Body), control(0x85, 1));
    }

    #[test]
    fn markup_is_a_less_than_sign_before_a_letter_slash_bang_or_question_mark() {
        for refused in [
            "<script>alert(1)</script>",
            "x</p>",
            "<!-- c -->",
            "<?xml",
            "a <b>bold</b>",
            "<style>body{}</style>",
            "Vec<String>",
            "<IMG src=x>",
        ] {
            assert!(
                matches!(
                    check(refused, TextRule::Label),
                    Err(PresentationErrorKind::Markup { .. })
                ),
                "{refused}"
            );
            assert!(
                matches!(
                    check(refused, TextRule::Body),
                    Err(PresentationErrorKind::Markup { .. })
                ),
                "{refused}"
            );
        }
        assert_eq!(
            check("ab<i>", TextRule::Label),
            Err(PresentationErrorKind::Markup { offset: 2 })
        );
        for accepted in [
            "a < b",
            "x <= 3",
            "<-",
            "<3",
            "<",
            "trailing <",
            "<<>>",
            "< b",
        ] {
            assert_eq!(check(accepted, TextRule::Label), Ok(()), "{accepted}");
        }
    }

    #[test]
    fn bounds_are_inclusive() {
        let at = "a".repeat(MAX_PRESENTATION_COMPACT_BYTES);
        assert_eq!(check(&at, TextRule::Id), Ok(()));
        let over = "a".repeat(MAX_PRESENTATION_COMPACT_BYTES + 1);
        assert_eq!(
            check(&over, TextRule::Label),
            Err(PresentationErrorKind::TooLong {
                bytes: MAX_PRESENTATION_COMPACT_BYTES + 1,
                max: MAX_PRESENTATION_COMPACT_BYTES
            })
        );
        let body_at = "a".repeat(MAX_PRESENTATION_BODY_BYTES);
        assert_eq!(check(&body_at, TextRule::Body), Ok(()));
        let body_over = "a".repeat(MAX_PRESENTATION_BODY_BYTES + 1);
        assert!(matches!(
            check(&body_over, TextRule::Body),
            Err(PresentationErrorKind::TooLong { .. })
        ));
    }
}
