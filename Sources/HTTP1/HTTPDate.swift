/// The `Date` field value of RFC 9110 §5.6.7 (IMF-fixdate, `Sun, 06 Nov 1994 08:49:37 GMT`),
/// formatted at most once per second: responses that lack a Date get this one (§6.6.1).
///
/// One per event loop (not shared between threads); `value(at:)` costs a comparison when the
/// second has not changed.
public struct HTTPDate: Sendable {
    private var second: Int64 = .min
    private var cached: [UInt8] = []

    /// Creates an empty cache.
    public init() {}

    /// The field value for Unix time `unixSeconds`.
    public mutating func value(at unixSeconds: Int64) -> [UInt8] {
        if unixSeconds != second {
            second = unixSeconds
            cached = Self.format(unixSeconds: unixSeconds)
        }
        return cached
    }

    static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]  // 1970-01-01 was a Thursday
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// IMF-fixdate of `unixSeconds` (UTC), for years 1970 to 9999.
    public static func format(unixSeconds: Int64) -> [UInt8] {
        let days = unixSeconds >= 0 ? unixSeconds / 86_400 : (unixSeconds - 86_399) / 86_400
        let secondOfDay = Int(unixSeconds - days * 86_400)
        let (year, month, day) = civilDate(daysSinceEpoch: days)
        var out: [UInt8] = []
        out.reserveCapacity(29)
        out.append(contentsOf: weekdays[Int(((days % 7) + 7) % 7)].utf8)
        out.append(contentsOf: ", ".utf8)
        appendDigits(day, count: 2, to: &out)
        out.append(0x20)
        out.append(contentsOf: months[month - 1].utf8)
        out.append(0x20)
        appendDigits(year, count: 4, to: &out)
        out.append(0x20)
        appendDigits(secondOfDay / 3600, count: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2, to: &out)
        out.append(contentsOf: " GMT".utf8)
        return out
    }

    /// The proleptic Gregorian date `days` after 1970-01-01, counted in 400-year eras of
    /// 146 097 days that start on 1 March (so the leap day ends a year).
    static func civilDate(daysSinceEpoch days: Int64) -> (year: Int, month: Int, day: Int) {
        let shifted = days + 719_468  // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
        let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    private static func appendDigits(_ value: Int, count: Int, to out: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<count { divisor *= 10 }
        while divisor > 0 {
            out.append(UInt8(48 + value / divisor % 10))
            divisor /= 10
        }
    }
}
