extension JSONCursor {
    /// Reads a string starting at its opening quote; the cursor ends after the closing quote.
    mutating func string() throws(JSONError) -> String {
        let start = position
        position += 1
        // Fast path: no escapes, so the string is its bytes (and ASCII needs no UTF-8 check).
        var index = position
        var union: UInt8 = 0
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let slice = UnsafeBufferPointer(rebasing: bytes[position..<index])
                guard union < 0x80 || isWellFormedUTF8(slice) else {
                    throw JSONError(.invalidUTF8, at: start)
                }
                position = index + 1
                return String(decoding: slice, as: UTF8.self)
            }
            if byte == UInt8(ascii: "\\") { break }
            if byte < 0x20 { throw JSONError(.controlCharacter, at: index) }
            union |= byte
            index += 1
        }
        guard index < bytes.count else { throw JSONError(.unexpectedEnd, at: bytes.count) }
        return try escapedString(start: start, plainUntil: index)
    }

    /// Reads a string with escapes; `plainUntil` is the first backslash.
    private mutating func escapedString(start: Int, plainUntil firstEscape: Int) throws(JSONError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(firstEscape - position + 16)
        out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[position..<firstEscape]))
        position = firstEscape
        while true {
            let byte = try peek()
            switch byte {
            case UInt8(ascii: "\""):
                position += 1
                return try out.withUnsafeBufferPointer { out throws(JSONError) in
                    guard isWellFormedUTF8(out) else { throw JSONError(.invalidUTF8, at: start) }
                    return String(decoding: out, as: UTF8.self)
                }
            case UInt8(ascii: "\\"):
                try escape(into: &out)
            case 0..<0x20:
                throw JSONError(.controlCharacter, at: position)
            default:
                out.append(byte)
                position += 1
            }
        }
    }

    /// Reads one escape at the backslash and appends what it stands for as UTF-8.
    private mutating func escape(into out: inout [UInt8]) throws(JSONError) {
        let escapeStart = position
        position += 1
        let letter = try peek()
        position += 1
        switch letter {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(letter)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try hexQuad(escapeStart: escapeStart)
            var scalarValue = UInt32(unit)
            if 0xD800..<0xDC00 ~= unit {
                // A high surrogate must be followed by `\u` and a low surrogate.
                guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                    bytes[position + 1] == UInt8(ascii: "u")
                else { throw JSONError(.unpairedSurrogate, at: escapeStart) }
                let lowStart = position
                position += 2
                let low = try hexQuad(escapeStart: lowStart)
                guard 0xDC00..<0xE000 ~= low else { throw JSONError(.unpairedSurrogate, at: escapeStart) }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if 0xDC00..<0xE000 ~= unit {
                throw JSONError(.unpairedSurrogate, at: escapeStart)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else {
                throw JSONError(.unpairedSurrogate, at: escapeStart)
            }
            out.append(contentsOf: UTF8.encode(scalar)!)
        default:
            throw JSONError(.invalidEscape, at: escapeStart)
        }
    }

    /// Reads four hex digits after `\u`.
    private mutating func hexQuad(escapeStart: Int) throws(JSONError) -> UInt16 {
        guard position + 4 <= bytes.count else { throw JSONError(.unexpectedEnd, at: bytes.count) }
        var unit: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw JSONError(.invalidEscape, at: escapeStart)
            }
            unit = unit << 4 | UInt16(digit)
            position += 1
        }
        return unit
    }
}
