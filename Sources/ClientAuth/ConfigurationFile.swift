#if canImport(Glibc)
    import Glibc
#endif

/// Reads the files ClientAuth loads (a JWKS, an API key file) with plain `read(2)`: at
/// configuration load and reload, never on the request path.
enum ConfigurationFile {
    /// The file's bytes, or `nil` if it cannot be read or is larger than `maximumBytes`.
    static func contents(of path: String, maximumBytes: Int) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { return bytes }
            bytes.append(contentsOf: chunk[0..<count])
            guard bytes.count <= maximumBytes else { return nil }
        }
    }
}
