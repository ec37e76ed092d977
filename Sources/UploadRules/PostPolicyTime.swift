import HTTPCore

/// The UTC time stamps object-store POST policies carry (S3, OSS, COS), from Unix seconds (no
/// C library, no locale): a policy's `expiration` and the SigV4-style signing date and
/// date-time.
public enum PostPolicyTime {
    /// ISO 8601 extended with milliseconds, as the stores' documents write a policy's
    /// `expiration`: `2013-12-01T12:00:00.000Z`.
    public static func expiration(_ seconds: Int64) -> String {
        let (date, clock) = parts(seconds)
        return pad(date.year, 4) + "-" + pad(date.month, 2) + "-" + pad(date.day, 2) + "T"
            + pad(clock.hour, 2)
            + ":" + pad(clock.minute, 2) + ":" + pad(clock.second, 2) + ".000Z"
    }

    /// The signing date, `yyyymmdd` (`20131201`): a SigV4 scope's date.
    public static func date(_ seconds: Int64) -> String {
        let (date, _) = parts(seconds)
        return pad(date.year, 4) + pad(date.month, 2) + pad(date.day, 2)
    }

    /// The signing date-time, `yyyymmddThhmmssZ` (ISO 8601 basic: `x-amz-date`, `x-oss-date`).
    public static func dateTime(_ seconds: Int64) -> String {
        let (_, clock) = parts(seconds)
        return date(seconds) + "T" + pad(clock.hour, 2) + pad(clock.minute, 2) + pad(clock.second, 2) + "Z"
    }

    private static func parts(_ seconds: Int64) -> (CivilDate, (hour: Int, minute: Int, second: Int)) {
        let date = CivilDate(unixSeconds: seconds)
        let ofDay = Int(((seconds % 86_400) + 86_400) % 86_400)
        return (date, (ofDay / 3600, ofDay / 60 % 60, ofDay % 60))
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }
}
