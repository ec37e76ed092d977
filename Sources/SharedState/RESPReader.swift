/// Reads RESP2 replies from a connection's input as it arrives, a push parser: `take` the
/// bytes that came, then `next()` each whole reply. It keeps what a reply still needs between
/// reads (bounded by `RESPLimits`), never rescans, and after an error reads nothing more: the
/// connection is out of step with its commands and must be closed.
public struct RESPReader: Sendable {
    public let limits: RESPLimits
    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes consumed before `buffer[0]` (for error offsets).
    private var consumed: Int64 = 0
    public private(set) var error: RESPError?

    public init(limits: RESPLimits = RESPLimits()) {
        self.limits = limits
    }

    /// Bytes held for the reply not yet whole.
    public var pendingBytes: Int { buffer.count - start }

    /// Appends received bytes.
    public mutating func take(_ bytes: UnsafeRawBufferPointer) {
        guard error == nil else { return }
        if start > 0, start == buffer.count {
            consumed += Int64(start)
            buffer.removeAll(keepingCapacity: true)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole reply, nil while it is still arriving; throws (and keeps throwing) once
    /// the input is not RESP2 within the limits.
    public mutating func next() throws(RESPError) -> RESPValue? {
        if let error { throw error }
        var position = start
        var elements = 0
        do throws(RESPError) {
            guard let value = try parse(&position, depth: 0, elements: &elements) else {
                // Still arriving: what it holds so far is bounded too.
                if buffer.count - start > limits.reply {
                    throw RESPError(.tooLarge, at: consumed + Int64(start))
                }
                return nil
            }
            guard position - start <= limits.reply else {
                throw RESPError(.tooLarge, at: consumed + Int64(start))
            }
            start = position
            if start > 64 << 10, start * 2 > buffer.count {
                consumed += Int64(start)
                buffer.removeFirst(start)
                start = 0
            }
            return value
        } catch {
            self.error = error
            throw error
        }
    }

    /// Parses one value at `position`; nil (position unchanged for the caller) when more bytes
    /// are needed.
    private func parse(_ position: inout Int, depth: Int, elements: inout Int) throws(RESPError) -> RESPValue?
    {
        guard position < buffer.count else { return nil }
        let type = buffer[position]
        let at = position
        guard let line = try line(after: position + 1) else { return nil }
        let text = buffer[(position + 1)..<line]
        position = line + 2
        switch type {
        case UInt8(ascii: "+"):
            return .simple(String(decoding: text, as: UTF8.self))
        case UInt8(ascii: "-"):
            return .error(String(decoding: text, as: UTF8.self))
        case UInt8(ascii: ":"):
            return .integer(try number(text, at: at))
        case UInt8(ascii: "$"):
            let length = try number(text, at: at)
            if length == -1 { return .bulk(nil) }
            guard length >= 0 else { throw offsetError(.badNumber, at) }
            guard length <= limits.bulk else { throw offsetError(.tooLarge, at) }
            let end = position + Int(length)
            guard end + 2 <= buffer.count else { return nil }
            guard buffer[end] == 0x0D, buffer[end + 1] == 0x0A else { throw offsetError(.badLineEnd, end) }
            let bytes = Array(buffer[position..<end])
            position = end + 2
            return .bulk(bytes)
        case UInt8(ascii: "*"):
            let count = try number(text, at: at)
            if count == -1 { return .array(nil) }
            guard count >= 0 else { throw offsetError(.badNumber, at) }
            guard depth < limits.depth else { throw offsetError(.tooDeep, at) }
            elements += Int(min(count, Int64(limits.elements) + 1))
            guard elements <= limits.elements else { throw offsetError(.tooLarge, at) }
            var values: [RESPValue] = []
            values.reserveCapacity(Int(count))
            for _ in 0..<count {
                guard let value = try parse(&position, depth: depth + 1, elements: &elements) else {
                    return nil
                }
                values.append(value)
            }
            return .array(values)
        default:
            throw offsetError(.unknownType, at)
        }
    }

    /// The index of the CR of the CRLF ending the line that starts at `from`; nil while it is
    /// not all here.
    private func line(after from: Int) throws(RESPError) -> Int? {
        var index = from
        while index < buffer.count {
            if buffer[index] == 0x0D {
                guard index + 1 < buffer.count else { return nil }
                guard buffer[index + 1] == 0x0A else { throw offsetError(.badLineEnd, index) }
                return index
            }
            if buffer[index] == 0x0A { throw offsetError(.badLineEnd, index) }
            index += 1
            if index - from > limits.line { throw offsetError(.tooLarge, from) }
        }
        return nil
    }

    /// A decimal integer (an optional `-`, digits).
    private func number(_ text: ArraySlice<UInt8>, at: Int) throws(RESPError) -> Int64 {
        var digits = text
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 19 else { throw offsetError(.badNumber, at) }
        var value: Int64 = 0
        for digit in digits {
            guard digit >= 0x30, digit <= 0x39 else { throw offsetError(.badNumber, at) }
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit - 0x30))
            guard !overflow, !overflow2 else { throw offsetError(.badNumber, at) }
            value = sum
        }
        return negative ? -value : value
    }

    private func offsetError(_ reason: RESPError.Reason, _ index: Int) -> RESPError {
        RESPError(reason, at: consumed + Int64(index))
    }
}
