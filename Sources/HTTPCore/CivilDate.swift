/// A proleptic Gregorian calendar date, computed from days since 1970-01-01 without the C
/// library (no locale, no time zone, no lock): the HTTP `Date` field and the `{date}`
/// template both read it.
public struct CivilDate: Equatable, Sendable {
    public var year: Int
    public var month: Int
    public var day: Int

    /// The date `days` after 1970-01-01 (negative: before), counted in 400-year eras of
    /// 146 097 days that start on 1 March, so the leap day ends a year.
    public init(daysSinceEpoch days: Int64) {
        let shifted = days + 719_468  // days from 0000-03-01 to 1970-01-01
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthFromMarch = (5 * dayOfYear + 2) / 153
        day = Int(dayOfYear - (153 * monthFromMarch + 2) / 5 + 1)
        month = Int(monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9)
        year = Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0))
    }

    /// The UTC date of a Unix time in seconds.
    public init(unixSeconds seconds: Int64) {
        self.init(daysSinceEpoch: seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
    }
}
