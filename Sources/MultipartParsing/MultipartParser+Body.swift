import CByteSearch

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension MultipartParser {
    /// Streams part content until `\n--boundary`, searching the caller's buffer in place
    /// (`fg_find_soon`: `memchr` over the first bytes, then `memmem`).
    ///
    /// Between buffers it carries only a count: a held CR and how many delimiter bytes matched
    /// at the end of the previous buffer. Those bytes are known (they are the delimiter), so
    /// they are re-emitted from `heldBytes` if the match fails.
    mutating func scanBody(
        _ buffer: UnsafeRawBufferPointer, from start: Int, _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) -> Int {
        let base = buffer.baseAddress!
        let count = buffer.count
        let needleCount = delimiterCount
        if carryCR || carryMatched > 0 {
            let need = needleCount - carryMatched
            let available = min(need, count - start)
            let continues = delimiter.withUnsafeBytes { needle in
                memcmp(base + start, needle.baseAddress! + carryMatched, available) == 0
            }
            if continues {
                if available < need {
                    carryMatched += available
                    return count
                }
                if !carryCR, lineEnding == .crlf {
                    let lineFeed = offset(start) - Int64(carryMatched)
                    carryMatched = 0
                    try bareLFDelimiter(at: lineFeed, &handler)
                    return start + available
                }
                state = .afterDelimiter(cr: carryCR)
                carryCR = false
                carryMatched = 0
                return start + available
            }
            let (cr, matched) = (carryCR, carryMatched)
            carryCR = false
            carryMatched = 0
            try emitHeld(
                cr: cr, count: matched, firstOffset: offset(start) - Int64(matched + (cr ? 1 : 0)), &handler)
        }
        // A small part's delimiter is found by the probe; a large one's by memmem.
        let found = delimiter.withUnsafeBytes { needle in
            fg_find_soon(base + start, count - start, needle.baseAddress!, needleCount, 256)
        }
        if let found {
            let position = UnsafeRawPointer(found) - base
            let cr = position > start && buffer[position - 1] == 0x0D
            if !cr, lineEnding == .crlf {
                try flag(.bareLFDelimiter, at: offset(position))
                try emitBody(
                    UnsafeRawBufferPointer(rebasing: buffer[start..<(position + needleCount)]), of: buffer,
                    &handler)
                return position + needleCount
            }
            try emitBody(
                UnsafeRawBufferPointer(rebasing: buffer[start..<(cr ? position - 1 : position)]), of: buffer,
                &handler)
            state = .afterDelimiter(cr: cr)
            return position + needleCount
        }
        // No whole delimiter: hold back a delimiter prefix (or a CR) at the end of the buffer.
        let tailStart = max(start, count - (needleCount - 1))
        if let newline = fg_memrchr(base + tailStart, 0x0A, count - tailStart) {
            let position = UnsafeRawPointer(newline) - base
            let isPrefix = delimiter.withUnsafeBytes { needle in
                memcmp(base + position, needle.baseAddress!, count - position) == 0
            }
            if isPrefix {
                let cr = position > start && buffer[position - 1] == 0x0D
                try emitBody(
                    UnsafeRawBufferPointer(rebasing: buffer[start..<(cr ? position - 1 : position)]),
                    of: buffer, &handler)
                carryCR = cr
                carryMatched = count - position
                return count
            }
        }
        if buffer[count - 1] == 0x0D {
            try emitBody(UnsafeRawBufferPointer(rebasing: buffer[start..<(count - 1)]), of: buffer, &handler)
            carryCR = true
        } else {
            try emitBody(UnsafeRawBufferPointer(rebasing: buffer[start..<count]), of: buffer, &handler)
        }
        return count
    }

    /// In a CRLF body, `\n--boundary` without its CR is content: flags it, then emits the
    /// delimiter bytes, matched across reads and held back as a count, at body offset `lineFeed`.
    mutating func bareLFDelimiter(at lineFeed: Int64, _ handler: inout some MultipartEventHandler)
        throws(MultipartError)
    {
        try flag(.bareLFDelimiter, at: lineFeed)
        try emitHeld(cr: false, count: delimiterCount, firstOffset: lineFeed, &handler)
    }

    /// Reports part content, enforcing the field or file byte limit.
    @inline(__always)
    mutating func emitBody(
        _ bytes: UnsafeRawBufferPointer, of buffer: UnsafeRawBufferPointer,
        _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) {
        guard !bytes.isEmpty else { return }
        let position = bytes.baseAddress! - buffer.baseAddress!
        try countBody(bytes.count, firstOffset: offset(position))
        handler.handle(.body(bytes))
    }

    /// Adds `count` content bytes starting at body offset `firstOffset` to the current part,
    /// enforcing the field or file limit (the error names the first byte over it).
    @inline(__always)
    mutating func countBody(_ count: Int, firstOffset: Int64) throws(MultipartError) {
        guard partBytes + Int64(count) <= partByteLimit else {
            throw MultipartError(.limitExceeded(partLimit), at: firstOffset + partByteLimit - partBytes)
        }
        partBytes += Int64(count)
    }
}
