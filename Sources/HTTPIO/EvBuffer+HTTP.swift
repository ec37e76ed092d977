public import EventLoop
public import HTTP1
public import HTTPCore

extension EvBuffer: ByteSink {
    /// Appends a copy of `bytes` (an `evbuffer_add`).
    public func write(_ bytes: UnsafeRawBufferPointer) {
        add(bytes)
    }
}

extension EvBuffer {
    /// Looks for the end of an HTTP head in the buffer, continuing where `scanner` stopped
    /// (the buffer still holds the bytes it scanned). When the head is complete, removes it
    /// (with any empty lines before it) and returns it.
    ///
    /// - Throws: `.headTooLarge` past the scanner's limit.
    public func takeHead(_ scanner: inout HeadScanner) throws(HTTP1Error) -> [UInt8]? {
        var skip = scanner.scanned
        var end: Int?
        var failure: HTTP1Error?
        var offset = 0
        forEachChunk { chunk in
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
        guard let end else { return nil }
        drain(scanner.leadingEmptyBytes)
        return remove(end - scanner.leadingEmptyBytes)
    }

    /// Runs the buffer's bytes through `decoder`, draining what the body used; `onData`
    /// receives payload bytes (borrowed).
    ///
    /// - Returns: whether the body is complete.
    public func decodeBody(_ decoder: inout BodyDecoder, _ onData: (UnsafeRawBufferPointer) -> Void)
        throws(HTTP1Error) -> Bool
    {
        var used = 0
        var failure: HTTP1Error?
        forEachChunk { chunk in
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
