public import HTTPCore

/// Writes Redis commands in RESP2's request form: an array of bulk strings, whatever bytes the
/// arguments hold (a key built from an identity cannot break out of its argument).
public enum RESPCommand {
    /// Writes `arguments` as one command into `sink`.
    public static func write(_ arguments: [[UInt8]], into sink: inout some ByteSink) {
        header(UInt8(ascii: "*"), arguments.count, into: &sink)
        for argument in arguments {
            header(UInt8(ascii: "$"), argument.count, into: &sink)
            sink.write(argument)
            sink.write("\r\n")
        }
    }

    /// `arguments` given as text.
    public static func write(_ arguments: [String], into sink: inout some ByteSink) {
        write(arguments.map { Array($0.utf8) }, into: &sink)
    }

    /// One command's bytes.
    public static func encode(_ arguments: [String]) -> [UInt8] {
        var sink = ByteArraySink()
        write(arguments, into: &sink)
        return sink.bytes
    }

    private static func header(_ type: UInt8, _ count: Int, into sink: inout some ByteSink) {
        var line: [UInt8] = [type]
        line.append(contentsOf: String(count).utf8)
        line.append(contentsOf: [0x0D, 0x0A])
        sink.write(line)
    }
}
