public import HTTPCore

/// Writes the chunked transfer coding: `size-in-hex CRLF data CRLF`, then `0 CRLF CRLF`.
public enum ChunkedEncoder {
    /// The size line for a chunk of `count` bytes (`count` > 0).
    public static func chunkHeader(_ count: Int) -> [UInt8] {
        var digits = 1
        while count >> (4 * digits) > 0, digits < 16 { digits += 1 }
        return [UInt8](unsafeUninitializedCapacity: digits + 2) { buffer, initialized in
            var value = count
            for index in stride(from: digits - 1, through: 0, by: -1) {
                let nibble = UInt8(value & 15)
                buffer[index] = nibble < 10 ? 0x30 + nibble : 0x57 + nibble  // lower-case hex
                value >>= 4
            }
            buffer[digits] = 0x0D
            buffer[digits + 1] = 0x0A
            initialized = digits + 2
        }
    }

    /// Writes one chunk holding `bytes`; writes nothing for an empty buffer (an empty chunk
    /// would end the body).
    public static func writeChunk(_ bytes: UnsafeRawBufferPointer, into sink: inout some ByteSink) {
        guard !bytes.isEmpty else { return }
        sink.write(chunkHeader(bytes.count))
        sink.write(bytes)
        sink.write("\r\n")
    }

    /// Writes `bytes` as one chunk, the bytes themselves through `write(_:sharingWith:)`;
    /// returns whether the sink shares them with `reader`.
    public static func writeChunk(
        _ bytes: UnsafeRawBufferPointer, into sink: inout some ByteSink,
        sharingWith reader: any SharedBytesReader
    ) -> Bool {
        guard !bytes.isEmpty else { return false }
        sink.write(chunkHeader(bytes.count))
        let shared = sink.write(bytes, sharingWith: reader)
        sink.write("\r\n")
        return shared
    }

    /// Writes the last chunk and an empty trailer section.
    public static func writeEnd(into sink: inout some ByteSink) {
        sink.write("0\r\n\r\n")
    }
}
