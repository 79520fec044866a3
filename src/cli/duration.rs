//! Durations on the command line: `30s`, `500ms`, `2m`, `1h`; a plain number is
//! milliseconds, as it always was.

use std::time::Duration;

/// Parses a duration for clap: digits, then an optional unit (`ms`, `s`, `m`, `h`).
pub(crate) fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (digits, unit) = text.split_at(split);
    let value: u64 = digits.parse().map_err(|_| {
        format!("`{text}` is not a duration: write a whole number with an optional unit (500ms, 30s, 2m, 1h)")
    })?;
    let millis_per_unit: u64 = match unit {
        "" | "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        other => {
            return Err(format!(
                "`{other}` is not a unit of duration: use ms, s, m or h"
            ))
        }
    };
    value
        .checked_mul(millis_per_unit)
        .map(Duration::from_millis)
        .ok_or_else(|| format!("`{text}` is too long a duration"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_plain_milliseconds() {
        assert_eq!(parse("1500"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse("1h"), Ok(Duration::from_secs(3600)));
        assert!(parse("1.5s").is_err());
        assert!(parse("5d").unwrap_err().contains("ms, s, m or h"));
        assert!(parse("s").is_err());
        assert!(parse("").is_err());
    }
}
