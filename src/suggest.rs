//! "Did you mean ...?": the closest of some known names to one that is not known.

/// The candidate closest to `name` by edit distance, when it is close enough to be
/// what was meant: at most a third of the name's length, rounded up, edits away (a
/// swapped pair of letters counts as two).
pub(crate) fn closest<'a>(
    name: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let limit = name.chars().count().div_ceil(3).max(1);
    candidates
        .into_iter()
        .map(|candidate| (distance(name, candidate), candidate))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, candidate)| candidate)
}

/// The Levenshtein distance of `a` and `b`, by characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != *cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_what_is_close() {
        let names = ["echo", "sleep", "progress"];
        assert_eq!(closest("ecoh", names), Some("echo"));
        assert_eq!(closest("progres", names), Some("progress"));
        assert_eq!(closest("zzzz", names), None);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
