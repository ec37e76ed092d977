import HTTPCore

extension MultipartParser {
    /// The body's first bytes: `--boundary` with no line break before it, or a preamble.
    mutating func scanStart(_ buffer: UnsafeRawBufferPointer, from start: Int, matched: Int)
        throws(MultipartError) -> Int
    {
        var matched = matched
        var index = start
        while index < buffer.count {
            guard buffer[index] == heldBytes[2 + matched] else {
                if matched >= 2 { throw MultipartError(.foreignDelimiter, at: offset(index)) }
                try flag(.dataBefore, at: offset(index))
                state = .preamble(matched: 0)
                return index
            }
            matched += 1
            index += 1
            if 1 + matched == delimiterCount {
                state = .afterDelimiter(cr: false)
                return index
            }
        }
        state = .start(matched: matched)
        return index
    }

    /// Discards a preamble until `\n--boundary`. A preamble line that starts with `--` but is
    /// not our delimiter is refused: it is a delimiter for some other boundary.
    mutating func scanPreamble(_ buffer: UnsafeRawBufferPointer, from start: Int, matched: Int)
        throws(MultipartError) -> Int
    {
        var matched = matched
        var index = start
        while index < buffer.count {
            let byte = buffer[index]
            if matched > 0 {
                if byte == heldBytes[1 + matched] {
                    matched += 1
                    index += 1
                    if matched == delimiterCount {
                        state = .afterDelimiter(cr: false)
                        return index
                    }
                    continue
                }
                if matched >= 3 { throw MultipartError(.foreignDelimiter, at: offset(index)) }
                matched = 0
            }
            if byte == 0x0A { matched = 1 }
            index += 1
        }
        state = .preamble(matched: matched)
        return index
    }

    /// The byte after `\n--boundary` decides: `-` may start the close delimiter, whitespace or
    /// a line break make it a delimiter, anything else makes it data.
    mutating func afterDelimiter(
        _ buffer: UnsafeRawBufferPointer, from index: Int, cr: Bool,
        _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) -> Int {
        switch buffer[index] {
        case UInt8(ascii: "-"):
            state = .afterDelimiterDash(cr: cr)
            return index + 1
        case 0x0D:
            state = .afterDelimiterCR(cr: cr)
            return index + 1
        case 0x20, 0x09, 0x0A:
            try acceptDelimiter(cr: cr, at: index, &handler)
            state = .delimiterLine
            return index
        default:
            try lookalike(cr: cr, trailer: nil, at: index, &handler)
            return index
        }
    }

    /// After `\n--boundary\r`: LF makes it a delimiter line; anything else makes it data.
    mutating func afterDelimiterCR(
        _ buffer: UnsafeRawBufferPointer, from index: Int, cr: Bool,
        _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) -> Int {
        guard buffer[index] == 0x0A else {
            try lookalike(cr: cr, trailer: 0x0D, at: index, &handler)
            return index
        }
        try acceptDelimiter(cr: cr, at: index, &handler)
        try beginHeaders(.crlf, at: index)
        return index + 1
    }

    /// After `\n--boundary-`: a second `-` closes the body; anything else makes it data. The
    /// `end` event waits for `finish`, after the epilogue was judged.
    mutating func afterDelimiterDash(
        _ buffer: UnsafeRawBufferPointer, from index: Int, cr: Bool,
        _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) -> Int {
        guard buffer[index] == UInt8(ascii: "-") else {
            try lookalike(cr: cr, trailer: UInt8(ascii: "-"), at: index, &handler)
            return index
        }
        try acceptDelimiter(cr: cr, at: index, &handler)
        state = .closeLine
        return index + 1
    }

    /// The delimiter is real: end the current part, checking the line break before it (in a
    /// CRLF body a bare-LF delimiter never gets here: `scanBody` keeps it as content; in an
    /// LF body a CR before it is refused).
    mutating func acceptDelimiter(cr: Bool, at index: Int, _ handler: inout some MultipartEventHandler)
        throws(MultipartError)
    {
        guard insidePart else { return }
        if cr != (lineEnding == .crlf) {
            throw MultipartError(.mixedLineEndings, at: offset(index))
        }
        insidePart = false
        handler.handle(.partEnd)
    }

    /// Delimiter-shaped bytes that are data: inside a part they are content; before the first
    /// part they mean the body uses another boundary. `trailer` is the byte read after the
    /// delimiter that made the decision, if it was consumed.
    mutating func lookalike(
        cr: Bool, trailer: UInt8?, at index: Int, _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) {
        guard insidePart else { throw MultipartError(.foreignDelimiter, at: offset(index)) }
        try flag(.boundaryLookalike, at: offset(index))
        let held = delimiterCount + (cr ? 1 : 0) + (trailer == nil ? 0 : 1)
        try emitHeld(cr: cr, count: delimiterCount, firstOffset: offset(index) - Int64(held), &handler)
        if let trailer {
            try countBody(1, firstOffset: offset(index) - 1)
            withUnsafeBytes(of: trailer) { handler.handle(.body($0)) }
        }
        state = .body
    }

    /// Emits `\r` (when `cr`) and the first `count` bytes of `\n--boundary` as part content:
    /// bytes matched earlier and held back as a count.
    mutating func emitHeld(
        cr: Bool, count: Int, firstOffset: Int64, _ handler: inout some MultipartEventHandler
    ) throws(MultipartError) {
        let start = cr ? 0 : 1
        guard 1 + count > start else { return }
        try countBody(1 + count - start, firstOffset: firstOffset)
        heldBytes.withUnsafeBytes { held in
            handler.handle(.body(UnsafeRawBufferPointer(rebasing: held[start..<(1 + count)])))
        }
    }

    /// Padding and the line break that end a delimiter line; then a part's headers begin.
    mutating func delimiterLine(_ buffer: UnsafeRawBufferPointer, from start: Int) throws(MultipartError)
        -> Int
    {
        var index = start
        while index < buffer.count {
            let byte = buffer[index]
            if state == .delimiterLineCR {
                guard byte == 0x0A else { throw MultipartError(.junkAfterDelimiter, at: offset(index)) }
                try beginHeaders(.crlf, at: index)
                return index + 1
            }
            switch byte {
            case 0x20, 0x09:
                try flag(.transportPadding, at: offset(index))
            case 0x0D:
                state = .delimiterLineCR
            case 0x0A:
                try beginHeaders(.lf, at: index)
                return index + 1
            default:
                throw MultipartError(.junkAfterDelimiter, at: offset(index))
            }
            index += 1
        }
        return index
    }

    /// A delimiter line ended with `ending`: the first one fixes the body's line ending.
    mutating func beginHeaders(_ ending: LineEnding, at index: Int) throws(MultipartError) {
        if let lineEnding {
            guard lineEnding == ending else { throw MultipartError(.mixedLineEndings, at: offset(index)) }
        } else {
            lineEnding = ending
            if ending == .lf { try flag(.lfLineEndings, at: offset(index)) }
        }
        partCount += 1
        guard partCount <= limits.parts else {
            throw MultipartError(.limitExceeded(.parts), at: offset(index))
        }
        headerLine.removeAll(keepingCapacity: true)
        headerLineCR = false
        headerBytes = 0
        // The buffers are reused from part to part. A handler that still holds the last
        // part's head keeps them (its view stays as it was): this part starts new ones.
        if isKnownUniquelyReferenced(&head) {
            head.releaseResults()
        } else {
            head = PartHeadFields()
        }
        headerFields.removeAll(keepingCapacity: true)
        partHeaders = PartHeaderIndex()
        state = .headers
    }

    /// After `--boundary--`: padding and one line break are expected; anything else is an
    /// epilogue, ignored and flagged.
    mutating func closeLine(_ buffer: UnsafeRawBufferPointer, from start: Int) throws(MultipartError) -> Int {
        var index = start
        while index < buffer.count {
            let byte = buffer[index]
            if state == .closeLineCR {
                if byte == 0x0A {
                    state = .epilogue
                    return index + 1
                }
                break
            }
            switch byte {
            case 0x20, 0x09: try flag(.transportPadding, at: offset(index))
            case 0x0D: state = .closeLineCR
            case 0x0A:
                state = .epilogue
                return index + 1
            default:
                state = .epilogue
                try flag(.dataAfter, at: offset(index))
                return buffer.count
            }
            index += 1
        }
        if index < buffer.count {
            state = .epilogue
            try flag(.dataAfter, at: offset(index))
            return buffer.count
        }
        return index
    }
}
