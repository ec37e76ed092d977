public import HTTPCore

extension RequestHead {
    /// Writes the request head as sent upstream: `METHOD target HTTP/1.1`, the fields, the
    /// blank line.
    public func serialize(into sink: inout some ByteSink) {
        var method = method
        method.withUTF8 { sink.write(UnsafeRawBufferPointer($0)) }
        sink.write(" ")
        var target = target
        target.withUTF8 { sink.write(UnsafeRawBufferPointer($0)) }
        sink.write(" HTTP/1.1\r\n")
        headers.serialize(into: &sink)
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
        forEachField { name, value in
            sink.write(UnsafeRawBufferPointer(name))
            sink.write(": ")
            sink.write(UnsafeRawBufferPointer(value))
            sink.write("\r\n")
        }
        sink.write("\r\n")
    }
}
