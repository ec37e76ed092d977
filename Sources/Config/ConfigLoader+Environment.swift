#if canImport(Glibc)
    import Glibc
#endif

extension ConfigLoader {
    /// The whole file at `path` as text, or `nil` when it cannot be read.
    static func readFile(_ path: String) -> String? {
        readBytes(path, limit: .max).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The bytes of the file at `path`, or `nil` when it cannot be opened or holds more than
    /// `limit` bytes.
    static func readBytes(_ path: String, limit: Int) -> [UInt8]? {
        guard let file = fopen(path, "rb") else { return nil }
        defer { fclose(file) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = fread(&chunk, 1, chunk.count, file)
            if count <= 0 { break }
            bytes.append(contentsOf: chunk[..<count])
            if bytes.count > limit { return nil }
        }
        return ferror(file) == 0 ? bytes : nil
    }

    /// The process environment as a dictionary.
    public static func processEnvironment() -> [String: String] {
        var result: [String: String] = [:]
        var pointer = environ
        while let entry = pointer.pointee {
            let text = String(cString: entry)
            if let equals = text.firstIndex(of: "=") {
                result[String(text[..<equals])] = String(text[text.index(after: equals)...])
            }
            pointer += 1
        }
        return result
    }
}
