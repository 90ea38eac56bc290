//! RFC 3339 timestamps to and from UTC milliseconds, without a date crate.

use crate::model::Millis;

const MS_PER_DAY: i64 = 86_400_000;

/// The instants an RFC 3339 timestamp can write, 0000-01-01T00:00:00Z through
/// 9999-12-31T23:59:59.999Z: a time outside them could not be written back to the ledger.
const EARLIEST: Millis = -719_528 * MS_PER_DAY;
const LATEST: Millis = 253_402_300_799_999;

/// `ms` when an RFC 3339 timestamp can write it.
fn writable(ms: Millis) -> Option<Millis> {
    (EARLIEST..=LATEST).contains(&ms).then_some(ms)
}

/// Parses `YYYY-MM-DD[T ]HH:MM:SS[.frac][Z|±HH:MM]`; no offset means UTC (DESIGN §3.1).
/// A bare date (`YYYY-MM-DD`) is midnight UTC.
pub fn parse_rfc3339(s: &str) -> Option<Millis> {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
        return None;
    }
    let year: i64 = digits(&b[0..4])?;
    let month: i64 = digits(&b[5..7])?;
    let day: i64 = digits(&b[8..10])?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in_month(year, month) {
        return None;
    }
    let days = days_from_civil(year, month, day);
    if b.len() == 10 {
        return Some(days * MS_PER_DAY);
    }
    if !matches!(b[10], b'T' | b't' | b' ') || b.len() < 19 || b[13] != b':' || b[16] != b':' {
        return None;
    }
    let hour: i64 = digits(&b[11..13])?;
    let minute: i64 = digits(&b[14..16])?;
    let second: i64 = digits(&b[17..19])?;
    if hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut rest = &b[19..];
    let mut millis = 0i64;
    if let Some((b'.', frac)) = rest.split_first() {
        let n = frac.iter().take_while(|c| c.is_ascii_digit()).count();
        if n == 0 {
            return None;
        }
        let mut scale = 100;
        for &c in &frac[..n.min(3)] {
            millis += i64::from(c - b'0') * scale;
            scale /= 10;
        }
        rest = &frac[n..];
    }
    let offset_minutes = match rest {
        [] | [b'Z'] | [b'z'] => 0,
        [sign @ (b'+' | b'-'), h1, h2, b':', m1, m2] | [sign @ (b'+' | b'-'), h1, h2, m1, m2] => {
            let h: i64 = digits(&[*h1, *h2])?;
            let m: i64 = digits(&[*m1, *m2])?;
            if h > 23 || m > 59 {
                return None;
            }
            let v = h * 60 + m;
            if *sign == b'-' { -v } else { v }
        }
        _ => return None,
    };
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    writable(secs * 1000 + millis)
}

/// `2026-03-04T05:06:07Z` (milliseconds only when non-zero).
pub fn format_rfc3339(ms: Millis) -> String {
    let mut out = format_day(utc_day(ms));
    push_clock(&mut out, ms);
    out
}

/// Appends what follows the day in `format_rfc3339(ms)`: `T05:06:07Z`, or `T05:06:07.089Z`.
pub fn push_clock(out: &mut String, ms: Millis) {
    let mut clock = [0u8; 14];
    let n = clock_bytes(ms, &mut clock);
    out.push_str(std::str::from_utf8(&clock[..n]).expect("a clock is ASCII"));
}

/// Writes what follows the day in `format_rfc3339(ms)` into `out` and returns its length (10,
/// or 14 with milliseconds): the ledger writes about two million of them at a million
/// experiences, straight into its JSON, a character at a time cost ten times the bytes.
pub fn clock_bytes(ms: Millis, out: &mut [u8; 14]) -> usize {
    // Below a day's 86 400 000: unsigned 32-bit arithmetic is the cheapest.
    let rem = (ms - utc_day(ms) * MS_PER_DAY) as u32;
    let (h, m, s, frac) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
    *out = *b"T00:00:00.000Z";
    put_digits(&mut out[1..3], h);
    put_digits(&mut out[4..6], m);
    put_digits(&mut out[7..9], s);
    if frac == 0 {
        out[9] = b'Z';
        return 10;
    }
    put_digits(&mut out[10..13], frac);
    14
}

/// `n` (0 ≤ n < 10^out.len()) as zero-padded digits filling `out`; a ledger formats millions,
/// so no `format!`.
fn put_digits(out: &mut [u8], mut n: u32) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// The UTC day number (days since 1970-01-01) of a time.
pub fn utc_day(ms: Millis) -> i64 {
    ms.div_euclid(MS_PER_DAY)
}

/// `YYYY-MM-DD` of a UTC day number.
pub fn format_day(day: i64) -> String {
    let mut out = String::with_capacity(24);
    push_day(&mut out, day);
    out
}

/// Appends `format_day(day)` to `out` (an EVIDENCE.md writes one per history event).
pub fn push_day(out: &mut String, day: i64) {
    use std::fmt::Write as _;
    match day_bytes(day) {
        Some(text) => out.push_str(std::str::from_utf8(&text).expect("a day is ASCII")),
        None => {
            let (y, m, d) = civil_from_days(day);
            let _ = write!(out, "{y:04}-{m:02}-{d:02}");
        }
    }
}

/// `format_day(day)` as bytes, for a year of four digits (0000–9999: every day an RFC 3339
/// timestamp can write); `None` otherwise.
pub fn day_bytes(day: i64) -> Option<[u8; 10]> {
    let (y, m, d) = civil_from_days(day);
    if !(0..=9999).contains(&y) {
        return None;
    }
    let mut out = *b"0000-00-00";
    // All three are in range: 0–9999, 1–12, 1–31.
    put_digits(&mut out[0..4], y as u32);
    put_digits(&mut out[5..7], m as u32);
    put_digits(&mut out[8..10], d as u32);
    Some(out)
}

/// Unix seconds (as OmniMem stores them) to milliseconds, when an RFC 3339 timestamp can
/// write them.
pub fn from_unix_seconds(secs: f64) -> Option<Millis> {
    from_unix_millis(secs * 1000.0)
}

/// Unix milliseconds, when an RFC 3339 timestamp can write them. A float beyond `i64`
/// saturates when cast, which `writable` then refuses; NaN would cast to 0.
pub fn from_unix_millis(ms: f64) -> Option<Millis> {
    if ms.is_nan() {
        return None;
    }
    writable(ms.round() as Millis)
}

fn digits(b: &[u8]) -> Option<i64> {
    let mut v = 0i64;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + i64::from(c - b'0');
    }
    Some(v)
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: i64) -> i64 {
    match m {
        2 if is_leap(y) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

// Howard Hinnant's civil-date algorithms.
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// (year, month, day) of a day number since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The byte writers write what the formatting machinery writes: every day's date,
    /// the first and last writable days and the years beyond them, clocks with and without
    /// milliseconds, before and after 1970.
    #[test]
    fn dates_and_clocks_are_written_as_format_writes_them() {
        let edges = [-719_528, -719_529, 2_932_896, 2_932_897, -1, 0, 20_100];
        for day in (-800_000..3_000_000).step_by(331).chain(edges) {
            let (y, m, d) = civil_from_days(day);
            assert_eq!(format_day(day), format!("{y:04}-{m:02}-{d:02}"), "day {day}");
        }
        let times = [
            0,
            1,
            999,
            1000,
            59_999,
            3_600_000,
            45_296_007,
            MS_PER_DAY - 1,
            -1,
            -MS_PER_DAY,
        ];
        for ms in times.into_iter().chain((0..MS_PER_DAY).step_by(3_600_007)) {
            let rem = ms.rem_euclid(MS_PER_DAY);
            let (h, m, s, f) = (rem / 3_600_000, rem / 60_000 % 60, rem / 1000 % 60, rem % 1000);
            let fraction = if f == 0 { String::new() } else { format!(".{f:03}") };
            let mut clock = String::new();
            push_clock(&mut clock, ms);
            assert_eq!(clock, format!("T{h:02}:{m:02}:{s:02}{fraction}Z"), "ms {ms}");
        }
    }

    #[test]
    fn offsets_are_honoured_and_missing_offset_is_utc() {
        let z = parse_rfc3339("2026-03-01T10:00:00Z").unwrap();
        assert_eq!(parse_rfc3339("2026-03-01T12:00:00+02:00"), Some(z));
        assert_eq!(parse_rfc3339("2026-03-01T10:00:00"), Some(z));
        assert_eq!(parse_rfc3339("2026-03-01T05:30:00-04:30"), Some(z));
        assert_eq!(format_rfc3339(z), "2026-03-01T10:00:00Z");
        assert_eq!(parse_rfc3339("2026-03-01T10:00:00.250Z"), Some(z + 250));
        assert_eq!(format_rfc3339(z + 250), "2026-03-01T10:00:00.250Z");
        assert_eq!(
            format_rfc3339(z + 9 * 3_600_000 + 59 * 60_000 + 7_005),
            "2026-03-01T19:59:07.005Z"
        );
    }

    #[test]
    fn rejects_impossible_dates() {
        assert_eq!(parse_rfc3339("2026-02-30T00:00:00Z"), None);
        assert_eq!(parse_rfc3339("yesterday"), None);
        assert_eq!(parse_rfc3339("2026-01-01T25:00:00Z"), None);
        // Offsets are hours 00–23 and minutes 00–59.
        assert_eq!(parse_rfc3339("2026-01-01T10:00:00+99:99"), None);
        assert_eq!(parse_rfc3339("2026-01-01T10:00:00-24:00"), None);
        assert_eq!(parse_rfc3339("2026-01-01T10:00:00+0560"), None);
        assert!(parse_rfc3339("2026-01-01T10:00:00+23:59").is_some());
    }

    #[test]
    fn only_times_a_timestamp_can_write_back_are_read() {
        for s in [
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:59.999Z",
            "1969-07-20T20:17:40Z",
        ] {
            let t = parse_rfc3339(s).unwrap();
            assert_eq!(parse_rfc3339(&format_rfc3339(t)), Some(t), "{s}");
        }
        // The offset would carry them past year 0000 or 9999.
        assert_eq!(parse_rfc3339("0000-01-01T00:00:00+00:01"), None);
        assert_eq!(parse_rfc3339("9999-12-31T23:59:59-00:01"), None);
        assert_eq!(from_unix_seconds(1e300), None);
        assert_eq!(from_unix_millis(-1e300), None);
        assert_eq!(from_unix_millis(f64::NAN), None);
        assert_eq!(
            from_unix_seconds(1_714_552_800.0),
            parse_rfc3339("2024-05-01T08:40:00Z")
        );
    }

    #[test]
    fn days_round_trip() {
        for day in [-1000, 0, 1, 19_000, 20_513, 60_000] {
            let s = format_day(day);
            assert_eq!(utc_day(parse_rfc3339(&s).unwrap()), day, "{s}");
        }
        assert_eq!(format_day(0), "1970-01-01");
    }
}
