public import HTTPCore

extension RequestHead {
    /// Writes the request head as sent upstream: `METHOD target HTTP/1.1`, the fields, the
    /// blank line, in one `write`.
    public func serialize(into sink: inout some ByteSink) {
        var method = method
        var target = target
        method.withUTF8 { method in
            target.withUTF8 { target in
                let version: StaticString = " HTTP/1.1\r\n"
                let versionBytes = UnsafeRawBufferPointer(
                    start: version.utf8Start, count: version.utf8CodeUnitCount)
                headers.serialize(
                    into: &sink, prefixCount: method.count + 1 + target.count + versionBytes.count
                ) {
                    var line = $0
                    line.copyMemory(from: UnsafeRawBufferPointer(method))
                    line[method.count] = UInt8(ascii: " ")
                    line = UnsafeMutableRawBufferPointer(rebasing: line[(method.count + 1)...])
                    line.copyMemory(from: UnsafeRawBufferPointer(target))
                    line = UnsafeMutableRawBufferPointer(rebasing: line[target.count...])
                    line.copyMemory(from: versionBytes)
                }
            }
        }
    }
}

extension ResponseHead {
    /// Writes the response head as sent to a client: `HTTP/1.1 status reason`, the fields, the
    /// blank line. The status is written as its decimal digits.
    public func serialize(into sink: inout some ByteSink) {
        sink.write("HTTP/1.1 ")
        Self.writeDecimal(status, into: &sink)
        sink.write(" ")
        sink.write(reason)
        sink.write("\r\n")
        headers.serialize(into: &sink)
    }

    /// Writes the decimal digits of a non-negative number (a status code, a length).
    public static func writeDecimal(_ value: some BinaryInteger, into sink: inout some ByteSink) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        var count = 0
        var rest = UInt64(max(0, value))
        withUnsafeMutableBytes(of: &digits) { buffer in
            repeat {
                buffer[23 - count] = UInt8(48 + rest % 10)
                rest /= 10
                count += 1
            } while rest > 0 && count < 20
            sink.write(UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
        }
    }
}

extension HeaderFields {
    /// Writes `Name: value\r\n` for each field, then the blank line.
    public func serialize(into sink: inout some ByteSink) {
        serialize(into: &sink, prefixCount: 0) { _ in }
    }

    /// Writes `prefixCount` bytes that `prefix` fills (a start line), `Name: value\r\n` for
    /// each field and the blank line, in one `write`: a head of a dozen fields written piece by
    /// piece cost 50 appends per request.
    public func serialize(
        into sink: inout some ByteSink, prefixCount: Int, prefix: (UnsafeMutableRawBufferPointer) -> Void
    ) {
        let total = prefixCount + serializedCount
        withUnsafeTemporaryAllocation(byteCount: total, alignment: 1) { buffer in
            prefix(UnsafeMutableRawBufferPointer(rebasing: buffer[..<prefixCount]))
            let at =
                prefixCount
                + writeFieldLines(into: UnsafeMutableRawBufferPointer(rebasing: buffer[prefixCount...]))
            buffer[at] = 0x0D
            buffer[at + 1] = 0x0A
            sink.write(UnsafeRawBufferPointer(buffer))
        }
    }
}
