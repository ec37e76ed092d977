/// Buffered bytes that a reader consumes from the front: an `evbuffer` in the proxy, an array
/// in tests. The reader peeks at contiguous chunks, then drains what it used.
///
/// The requirements are non-mutating: a source is a view of storage owned elsewhere.
public protocol ByteSource {
    /// Bytes buffered.
    var count: Int { get }
    /// Calls `body` with the buffered bytes in contiguous chunks, in order, up to `limit`
    /// bytes, until it returns `false`. The chunks are valid only during the call.
    func forEachChunk(limit: Int, _ body: (UnsafeRawBufferPointer) -> Bool)
    /// Removes the first `count` bytes.
    func drain(_ count: Int)
    /// Removes and returns the first `count` bytes.
    func remove(_ count: Int) -> [UInt8]
    /// Removes the first `count` bytes, appending them to `buffer` (whose capacity a caller
    /// that keeps it reuses).
    func remove(_ count: Int, appendingTo buffer: inout [UInt8])
}

extension ByteSource {
    /// Looks for the end of an HTTP head, continuing where `scanner` stopped (the source still
    /// holds the bytes it scanned). When the head is complete, removes it (with any empty
    /// lines before it) and returns it.
    ///
    /// - Throws: what `HeadScanner.scan` throws (`.headTooLarge`, `.bareLineFeed`).
    public func takeHead(_ scanner: inout HeadScanner) throws(HTTP1Error) -> [UInt8]? {
        guard let end = try scanHead(&scanner) else { return nil }
        drain(scanner.leadingEmptyBytes)
        return remove(end - scanner.leadingEmptyBytes)
    }

    /// `takeHead(_:)` into `buffer` (its bytes replaced, its capacity kept): whether the head
    /// was complete (when not, `buffer` is untouched).
    public func takeHead(_ scanner: inout HeadScanner, into buffer: inout [UInt8]) throws(HTTP1Error) -> Bool
    {
        guard let end = try scanHead(&scanner) else { return false }
        drain(scanner.leadingEmptyBytes)
        buffer.removeAll(keepingCapacity: true)
        remove(end - scanner.leadingEmptyBytes, appendingTo: &buffer)
        return true
    }

    /// Where the head ends (counted from the first buffered byte, any empty lines before it
    /// included), once `scanner` found it; nil while it is incomplete.
    func scanHead(_ scanner: inout HeadScanner) throws(HTTP1Error) -> Int? {
        var skip = scanner.scanned
        var end: Int?
        var failure: HTTP1Error?
        var offset = 0
        forEachChunk(limit: .max) { chunk in
            defer { offset += chunk.count }
            if skip >= chunk.count {
                skip -= chunk.count
                return true
            }
            let rest = UnsafeRawBufferPointer(rebasing: chunk[skip...])
            let restStart = offset + skip
            skip = 0
            do throws(HTTP1Error) {
                if let found = try scanner.scan(rest) {
                    end = restStart + found
                    return false
                }
            } catch {
                failure = error
                return false
            }
            return true
        }
        if let failure { throw failure }
        return end
    }

    /// Appends the removed bytes (a source without its own way to fill a buffer).
    public func remove(_ count: Int, appendingTo buffer: inout [UInt8]) {
        buffer.append(contentsOf: remove(count))
    }

    /// Runs the buffered bytes (the first `limit` of them) through `decoder`, draining what the
    /// body used; `onData` receives payload bytes (borrowed).
    ///
    /// - Returns: whether the body is complete.
    public func decodeBody(
        _ decoder: inout BodyDecoder, limit: Int = .max, _ onData: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTP1Error) -> Bool {
        try decodeBody(&decoder, limit: limit, reading: { _, _ in }, drain: { drain($0) }, onData)
    }

    /// `decodeBody(_:limit:_:)` that tells `reading` each chunk before it is decoded (with its
    /// offset from the first byte) and lets `drain` remove the bytes the body used (it must
    /// remove exactly that many), so a sink can forward payload bytes by moving them
    /// (`InputLoan`).
    public func decodeBody(
        _ decoder: inout BodyDecoder, limit: Int, reading: (UnsafeRawBufferPointer, Int) -> Void,
        drain: (Int) -> Void, _ onData: (UnsafeRawBufferPointer) -> Void
    ) throws(HTTP1Error) -> Bool {
        var used = 0
        var failure: HTTP1Error?
        forEachChunk(limit: limit) { chunk in
            reading(chunk, used)
            do throws(HTTP1Error) {
                let taken = try decoder.decode(chunk, onData)
                used += taken
                return taken == chunk.count && !decoder.isComplete
            } catch {
                failure = error
                return false
            }
        }
        drain(used)
        if let failure { throw failure }
        return decoder.isComplete
    }
}
