/// What clamd's own configuration (`clamd.conf`) lets it scan, compared with a scanner's
/// `max_bytes` by `formgate check`. clamd refuses a stream longer than `StreamMaxLength`
/// (`INSTREAM size limit exceeded`), and does not scan a file over `MaxFileSize` or past
/// `MaxScanSize` — answering `OK` for it unless `AlertExceedsMax yes` makes it say
/// `Heuristics.Limits.Exceeded` (which FormGate treats as a failure, never as clean).
public struct ClamdConfigCheck: Sendable, Equatable {
    /// `StreamMaxLength`, `MaxFileSize`, `MaxScanSize` in bytes (clamd 1.x defaults when the
    /// file does not set them; 0 means no limit).
    public var streamMaxLength: Int64 = 100 << 20
    public var maxFileSize: Int64 = 100 << 20
    public var maxScanSize: Int64 = 400 << 20
    /// `AlertExceedsMax` (default no).
    public var alertExceedsMax = false

    /// Reads the settings that matter from `clamd.conf` text (`Key value` lines, `#` comments;
    /// sizes with an optional `K` or `M` suffix, as clamd reads them).
    public init(configuration text: String) {
        for line in text.split(whereSeparator: { $0 == "\n" || $0 == "\r" }) {
            let words = line.split(whereSeparator: { $0 == " " || $0 == "\t" })
            guard words.count >= 2, !words[0].hasPrefix("#") else { continue }
            let value = String(words[1])
            switch words[0].lowercased() {
            case "streammaxlength": streamMaxLength = Self.size(value) ?? streamMaxLength
            case "maxfilesize": maxFileSize = Self.size(value) ?? maxFileSize
            case "maxscansize": maxScanSize = Self.size(value) ?? maxScanSize
            case "alertexceedsmax": alertExceedsMax = ["yes", "true", "1"].contains(value.lowercased())
            default: break
            }
        }
    }

    /// Why a file of up to `maxBytes` may not be wholly scanned by this clamd (empty: it will be).
    public func problems(maxBytes: Int64) -> [String] {
        var problems: [String] = []
        for (name, limit) in [
            ("StreamMaxLength", streamMaxLength), ("MaxFileSize", maxFileSize), ("MaxScanSize", maxScanSize),
        ] where limit > 0 && limit < maxBytes {
            problems.append(
                "max_bytes (\(maxBytes)) is more than clamd's \(name) (\(limit)): files between them are not scanned (refused as scanner failures)"
            )
        }
        if !alertExceedsMax {
            problems.append(
                "clamd has AlertExceedsMax no: a file over its limits is answered OK without being scanned (set AlertExceedsMax yes)"
            )
        }
        return problems
    }

    /// A clamd size: digits with an optional `K`/`k` or `M`/`m` suffix.
    static func size(_ text: String) -> Int64? {
        var digits = Substring(text)
        var unit: Int64 = 1
        switch digits.last {
        case "K", "k":
            unit = 1 << 10
            digits = digits.dropLast()
        case "M", "m":
            unit = 1 << 20
            digits = digits.dropLast()
        case "G", "g":
            unit = 1 << 30
            digits = digits.dropLast()
        default: break
        }
        guard let value = Int64(digits), value >= 0, value <= Int64.max / unit else { return nil }
        return value * unit
    }
}
