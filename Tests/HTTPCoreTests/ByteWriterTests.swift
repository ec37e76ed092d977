import HTTPCore
import Testing

/// `ByteWriter` copies pieces of at most 16 bytes with word loads and stores (`copySmall`),
/// longer ones with `memmove`: every length, through each `append`, writes exactly its bytes
/// after what came before, and nothing past them.
@Suite struct ByteWriterTests {
    @Test func everyLengthWritesExactlyItsBytes() {
        let source = (0..<40).map { UInt8(0x41 + $0) }
        for lead in 0..<3 {
            for count in 0...source.count {
                let piece = Array(source[..<count])
                var typed = [UInt8](repeating: 0xEE, count: 64)
                var raw = typed
                let prefix = [UInt8](repeating: 0x2A, count: lead)
                typed.withUnsafeMutableBufferPointer { buffer in
                    var writer = ByteWriter(buffer)
                    prefix.withUnsafeBufferPointer { writer.append($0) }
                    piece.withUnsafeBufferPointer { writer.append($0) }
                    #expect(writer.written.count == lead + count)
                }
                raw.withUnsafeMutableBufferPointer { buffer in
                    var writer = ByteWriter(buffer)
                    prefix.withUnsafeBytes { writer.append($0) }
                    piece.withUnsafeBytes { writer.append($0) }
                    #expect(writer.written.count == lead + count)
                }
                let expected = prefix + piece + [UInt8](repeating: 0xEE, count: 64 - lead - count)
                #expect(typed == expected, "lead \(lead), count \(count)")
                #expect(raw == expected, "lead \(lead), count \(count)")
            }
        }
    }
}
