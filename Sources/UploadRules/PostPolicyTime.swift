import HTTPCore

/// The UTC time stamps object-store POST policies carry, from Unix seconds (no C library,
/// no locale): the policy's `expiration` and the V4-style signing date and date-time.
public enum PostPolicyTime {
    /// ISO 8601 with milliseconds, as the stores' documents write a policy's `expiration`:
    /// `2013-12-01T12:00:00.000Z`.
    public static func expiration(_ seconds: Int64) -> String {
        let (date, clock) = parts(seconds)
        return "\(date.year)-\(pad(date.month))-\(pad(date.day))T"
            + "\(pad(clock.hour)):\(pad(clock.minute)):\(pad(clock.second)).000Z"
    }

    /// The signing date, `yyyymmdd` (`20131201`).
    public static func date(_ seconds: Int64) -> String {
        let (date, _) = parts(seconds)
        return "\(date.year)\(pad(date.month))\(pad(date.day))"
    }

    /// The signing date-time, `yyyymmddThhmmssZ` (`20131201T120000Z`).
    public static func dateTime(_ seconds: Int64) -> String {
        let (_, clock) = parts(seconds)
        return date(seconds) + "T\(pad(clock.hour))\(pad(clock.minute))\(pad(clock.second))Z"
    }

    private static func parts(_ seconds: Int64) -> (CivilDate, (hour: Int, minute: Int, second: Int)) {
        let date = CivilDate(unixSeconds: seconds)
        let ofDay = Int(((seconds % 86_400) + 86_400) % 86_400)
        return (date, (ofDay / 3600, ofDay / 60 % 60, ofDay % 60))
    }

    private static func pad(_ value: Int) -> String { value < 10 ? "0\(value)" : "\(value)" }
}
