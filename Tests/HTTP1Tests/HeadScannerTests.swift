import HTTP1
import HTTPCore
import Testing

/// `HeadScanner` (memchr from line feed to line feed) against the byte-at-a-time definition:
/// the same end, the same error at the same offset, the same leading empty bytes, for random
/// heads of CR, LF and text fed whole, byte by byte and at every split point.
@Suite struct HeadScannerTests {
    /// The scanner's rules one byte at a time (what it did before memchr).
    struct Reference {
        let limit: Int
        let requireCRLF: Bool
        var scanned = 0
        var leadingEmptyBytes = 0
        var lineLength = 0
        var lastWasCR = false
        var sawStartLine = false

        mutating func scan(_ bytes: ArraySlice<UInt8>) throws(HTTP1Error) -> Int? {
            for (offset, byte) in bytes.enumerated() {
                scanned += 1
                guard scanned <= limit else { throw HTTP1Error(.headTooLarge, at: limit) }
                guard byte == 0x0A else {
                    lineLength += 1
                    lastWasCR = byte == 0x0D
                    continue
                }
                if requireCRLF, !lastWasCR { throw HTTP1Error(.bareLineFeed, at: scanned - 1) }
                let empty = lineLength == 0 || (lineLength == 1 && lastWasCR)
                lineLength = 0
                lastWasCR = false
                if empty {
                    if sawStartLine { return offset + 1 }
                    leadingEmptyBytes = scanned
                } else {
                    sawStartLine = true
                }
            }
            return nil
        }
    }

    enum Outcome: Equatable {
        case end(Int, leading: Int)
        case error(HTTP1Error.Reason, Int)
        case incomplete
    }

    /// Feeds `bytes` in the pieces `cuts` makes; the absolute end offset or the error.
    static func run(_ bytes: [UInt8], cuts: [Int], limit: Int, requireCRLF: Bool, reference: Bool) -> Outcome
    {
        var scanner = HeadScanner(limit: limit, requireCRLF: requireCRLF)
        var model = Reference(limit: limit, requireCRLF: requireCRLF)
        var start = 0
        for end in cuts + [bytes.count] where end >= start {
            let piece = bytes[start..<end]
            do throws(HTTP1Error) {
                let found: Int?
                if reference {
                    found = try model.scan(piece)
                } else {
                    found = try scanner.scan(Array(piece))
                }
                if let found {
                    let leading = reference ? model.leadingEmptyBytes : scanner.leadingEmptyBytes
                    return .end(start + found, leading: leading)
                }
            } catch {
                return .error(error.reason, error.offset)
            }
            start = end
        }
        return .incomplete
    }

    static func randomHead(_ random: inout some RandomNumberGenerator) -> [UInt8] {
        let alphabet: [UInt8] = [0x0D, 0x0A, 0x0D, 0x0A, UInt8(ascii: "a"), UInt8(ascii: ":"), 0x20]
        return (0..<Int.random(in: 0...40, using: &random)).map { _ in alphabet.randomElement(using: &random)!
        }
    }

    @Test func agreesWithTheByteByByteDefinitionAtEverySplit() {
        let seed: UInt64 = 0x5CA7
        var random = SplitMix64(seed: seed)
        for _ in 0..<400 {
            let bytes = Self.randomHead(&random)
            let limit = Int.random(in: 1...48, using: &random)
            let requireCRLF = Bool.random(using: &random)
            for cut in 0...bytes.count {
                let expected = Self.run(
                    bytes, cuts: [cut], limit: limit, requireCRLF: requireCRLF, reference: true)
                let actual = Self.run(
                    bytes, cuts: [cut], limit: limit, requireCRLF: requireCRLF, reference: false)
                #expect(
                    actual == expected, "\(bytes) cut \(cut) limit \(limit) crlf \(requireCRLF), seed \(seed)"
                )
            }
            let everyByte = Array(0...bytes.count)
            let expected = Self.run(
                bytes, cuts: everyByte, limit: limit, requireCRLF: requireCRLF, reference: true)
            let actual = Self.run(
                bytes, cuts: everyByte, limit: limit, requireCRLF: requireCRLF, reference: false)
            #expect(
                actual == expected, "\(bytes) byte by byte, limit \(limit) crlf \(requireCRLF), seed \(seed)")
        }
    }

    @Test func aResponseHeadEndsAfterItsEmptyLine() throws {
        let head = Array("\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok".utf8)
        var scanner = HeadScanner(limit: 1000)
        let end = try scanner.scan(head)
        #expect(end == head.count - 2)
        #expect(scanner.leadingEmptyBytes == 2)
    }
}
