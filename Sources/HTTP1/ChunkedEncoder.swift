public import HTTPCore

/// Writes the chunked transfer coding: `size-in-hex CRLF data CRLF`, then `0 CRLF CRLF`.
public enum ChunkedEncoder {
    /// The size line for a chunk of `count` bytes (`count` > 0).
    public static func chunkHeader(_ count: Int) -> [UInt8] {
        Array(String(count, radix: 16).utf8) + [0x0D, 0x0A]
    }

    /// Writes one chunk holding `bytes`; writes nothing for an empty buffer (an empty chunk
    /// would end the body).
    public static func writeChunk(_ bytes: UnsafeRawBufferPointer, into sink: inout some ByteSink) {
        guard !bytes.isEmpty else { return }
        sink.write(chunkHeader(bytes.count))
        sink.write(bytes)
        sink.write("\r\n")
    }

    /// Writes the last chunk and an empty trailer section.
    public static func writeEnd(into sink: inout some ByteSink) {
        sink.write("0\r\n\r\n")
    }
}
