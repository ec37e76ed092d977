public import Inspection

#if canImport(Glibc)
    import Glibc
#endif

extension ConfigLoader {
    /// What `formgate check` says of a scanner whose clamd may not scan every file up to its
    /// `max_bytes` (`ClamdConfigCheck`): it reads clamd's configuration (`config:`, or
    /// Debian's `/etc/clamav/clamd.conf` for a Unix socket).
    public static func scannerWarnings(_ scanner: ClamdSettings) -> [String] {
        var path = scanner.configFile
        if path == nil, case .unix = scanner.address, access("/etc/clamav/clamd.conf", R_OK) == 0 {
            path = "/etc/clamav/clamd.conf"
        }
        guard let path else {
            return [
                "clamd's configuration is not known (set config: to its clamd.conf): check that its StreamMaxLength, MaxFileSize and MaxScanSize are at least max_bytes (\(scanner.maxBytes)) and that AlertExceedsMax is yes"
            ]
        }
        guard let text = readFile(path) else { return ["cannot read clamd's configuration \(path)"] }
        return ClamdConfigCheck(configuration: text).problems(maxBytes: scanner.maxBytes).map {
            "\(path): \($0)"
        }
    }
}
