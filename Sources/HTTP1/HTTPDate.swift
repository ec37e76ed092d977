import HTTPCore

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
        let date = CivilDate(daysSinceEpoch: days)
        var out: [UInt8] = []
        out.reserveCapacity(29)
        out.append(contentsOf: weekdays[Int(((days % 7) + 7) % 7)].utf8)
        out.append(contentsOf: ", ".utf8)
        appendDigits(date.day, count: 2, to: &out)
        out.append(0x20)
        out.append(contentsOf: months[date.month - 1].utf8)
        out.append(0x20)
        appendDigits(date.year, count: 4, to: &out)
        out.append(0x20)
        appendDigits(secondOfDay / 3600, count: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay / 60 % 60, count: 2, to: &out)
        out.append(UInt8(ascii: ":"))
        appendDigits(secondOfDay % 60, count: 2, to: &out)
        out.append(contentsOf: " GMT".utf8)
        return out
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
