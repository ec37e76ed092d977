/// Finds the end of an HTTP head (the empty line) in bytes that arrive in pieces, without
/// keeping them: the I/O layer leaves the bytes in its buffer until the end is known.
///
/// Empty lines before the start line are skipped as RFC 9112 §2.2 allows. A head longer than
/// `limit` bytes (leading empty lines included) is refused with `.headTooLarge`; with
/// `requireCRLF` (request heads), a line ending in LF without CR is refused with
/// `.bareLineFeed` as soon as it is seen.
public struct HeadScanner: Sendable {
    /// The most bytes a head may take.
    public let limit: Int
    /// Whether every line must end in CRLF.
    public let requireCRLF: Bool
    /// Bytes scanned so far.
    public private(set) var scanned = 0
    /// Bytes of empty lines before the start line (to drop before parsing).
    public private(set) var leadingEmptyBytes = 0
    private var lineLength = 0
    private var lastWasCR = false
    private var sawStartLine = false

    /// Creates a scanner for heads of at most `limit` bytes.
    public init(limit: Int, requireCRLF: Bool = false) {
        self.limit = limit
        self.requireCRLF = requireCRLF
    }

    /// Scans `buffer`, the bytes that follow those already scanned.
    ///
    /// - Returns: the index in `buffer` just past the head's final LF, or `nil` when the head
    ///   continues beyond `buffer`.
    /// - Throws: `.headTooLarge` once more than `limit` bytes were scanned without an end;
    ///   `.bareLineFeed` (with `requireCRLF`) at a LF without CR.
    public mutating func scan(_ buffer: UnsafeRawBufferPointer) throws(HTTP1Error) -> Int? {
        for index in buffer.indices {
            let byte = buffer[index]
            scanned += 1
            guard scanned <= limit else { throw HTTP1Error(.headTooLarge, at: limit) }
            guard byte == 0x0A else {
                lineLength += 1
                lastWasCR = byte == 0x0D
                continue
            }
            if requireCRLF, !lastWasCR { throw HTTP1Error(.bareLineFeed, at: scanned - 1) }
            let empty = lineLength == 0 || (lineLength == 1 && lastWasCR)
            lineLength = 0
            lastWasCR = false
            if empty {
                if sawStartLine { return index + 1 }
                leadingEmptyBytes = scanned
            } else {
                sawStartLine = true
            }
        }
        return nil
    }

    /// Scans bytes from an array.
    public mutating func scan(_ bytes: [UInt8]) throws(HTTP1Error) -> Int? {
        var result: Result<Int?, HTTP1Error> = .success(nil)
        bytes.withUnsafeBytes { buffer in
            do throws(HTTP1Error) {
                result = .success(try scan(buffer))
            } catch {
                result = .failure(error)
            }
        }
        return try result.get()
    }
}
