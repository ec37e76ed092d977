import HTTPCore
import SharedState
import Testing

/// RESP2 replies read as they arrive: the same values at every split point, and a Redis that
/// sends garbage, lies about lengths or nests without end is an error at its byte, never a
/// crash or an unbounded buffer.
@Suite struct RESPReaderTests {
    /// Every reply in `wire`, fed in two pieces split at `cut`.
    static func replies(_ wire: [UInt8], cut: Int, limits: RESPLimits = RESPLimits()) throws(RESPError)
        -> [RESPValue]
    {
        var reader = RESPReader(limits: limits)
        var values: [RESPValue] = []
        for piece in [wire[..<cut], wire[cut...]] {
            Array(piece).withUnsafeBytes { reader.take($0) }
            while let value = try reader.next() { values.append(value) }
        }
        return values
    }

    static let wire = Array(
        "+OK\r\n-NOSCRIPT No matching script\r\n:-42\r\n$5\r\nhe\r\no\r\n$-1\r\n$0\r\n\r\n*2\r\n:1\r\n*2\r\n$1\r\nx\r\n*-1\r\n*0\r\n"
            .utf8)
    static let values: [RESPValue] = [
        .simple("OK"), .error("NOSCRIPT No matching script"), .integer(-42), .bulk(Array("he\r\no".utf8)),
        .bulk(nil), .bulk([]), .array([.integer(1), .array([.bulk([0x78]), .array(nil)])]), .array([]),
    ]

    @Test func everySplitGivesTheSameReplies() throws {
        for cut in 0...Self.wire.count {
            #expect(try Self.replies(Self.wire, cut: cut) == Self.values, "split at \(cut)")
        }
    }

    @Test func aReplyStillArrivingIsNotGuessed() throws {
        var reader = RESPReader()
        Array("*2\r\n:1\r\n$3\r\nab".utf8).withUnsafeBytes { reader.take($0) }
        #expect(try reader.next() == nil)
        Array("c\r\n".utf8).withUnsafeBytes { reader.take($0) }
        #expect(try reader.next() == .array([.integer(1), .bulk(Array("abc".utf8))]))
        #expect(try reader.next() == nil)
        #expect(reader.pendingBytes == 0)
    }

    @Test func hostileRepliesAreErrorsAtTheirByte() {
        let cases: [(String, RESPError.Reason, Int64)] = [
            ("?what\r\n", .unknownType, 0),
            (":12a\r\n", .badNumber, 0),
            (":99999999999999999999\r\n", .badNumber, 0),
            ("$-2\r\n", .badNumber, 0),
            ("$3\r\nabcX\r\n", .badLineEnd, 7),
            ("+OK\n", .badLineEnd, 3),
            ("+O\rK\r\n", .badLineEnd, 2),
            ("$2000000\r\n", .tooLarge, 0),
            ("*5000\r\n", .tooLarge, 0),
            ("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", .tooDeep, 16),
            ("+" + String(repeating: "a", count: 5000) + "\r\n", .tooLarge, 1),
            (":1\r\n:", .badNumber, 4),
        ]
        for (text, reason, offset) in cases {
            var reader = RESPReader()
            var wire = Array(text.utf8)
            if text.hasSuffix(":") { wire += Array("\r\n".utf8) }
            wire.withUnsafeBytes { reader.take($0) }
            var thrown: RESPError?
            do throws(RESPError) {
                while try reader.next() != nil {}
            } catch {
                thrown = error
            }
            #expect(
                thrown == RESPError(reason, at: offset), "\(text.prefix(40)): \(String(describing: thrown))")
            #expect(throws: RESPError.self) { try reader.next() }
        }
    }

    @Test func oneReplyHoldsAtMostItsLimitWhetherWholeOrArriving() {
        let bulk = "$1048576\r\n" + String(repeating: "z", count: 1 << 20) + "\r\n"
        let wire = Array((":7\r\n*8\r\n" + String(repeating: bulk, count: 8)).utf8)
        // Arriving in 64 KiB reads: refused once it holds more than 4 MiB, before the rest.
        var reader = RESPReader()
        var thrown: RESPError?
        var fed = 0
        var values: [RESPValue] = []
        reading: while fed < wire.count {
            let end = min(wire.count, fed + 65_536)
            Array(wire[fed..<end]).withUnsafeBytes { reader.take($0) }
            fed = end
            do throws(RESPError) {
                while let value = try reader.next() { values.append(value) }
            } catch {
                thrown = error
                break reading
            }
        }
        #expect(values == [.integer(7)])
        #expect(thrown == RESPError(.tooLarge, at: 4), "\(String(describing: thrown))")
        #expect(fed <= (4 << 20) + 4 + 2 * 65_536, "refused at \(fed) bytes")
        // Whole at once: refused the same.
        #expect(throws: RESPError(.tooLarge, at: 0)) {
            _ = try Self.replies(Array(wire[4...]), cut: wire.count - 4)
        }
        // Below the limit it is read.
        let small = RESPLimits(reply: 16 << 20)
        #expect((try? Self.replies(Array(wire[4...]), cut: 100, limits: small))?.count == 1)
    }

    @Test func manyRepliesAcrossManyReadsKeepTheirOrderAndOffsets() throws {
        var reader = RESPReader()
        var seen: [RESPValue] = []
        for index in 0..<20_000 {
            Array(":\(index)\r\n".utf8).withUnsafeBytes { reader.take($0) }
            while let value = try reader.next() { seen.append(value) }
        }
        #expect(seen == (0..<20_000).map { .integer(Int64($0)) })
        #expect(reader.pendingBytes == 0)
        Array("$x\r\n".utf8).withUnsafeBytes { reader.take($0) }
        let offset = (0..<20_000).reduce(Int64(0)) { $0 + Int64(":\($1)\r\n".utf8.count) }
        #expect(throws: RESPError(.badNumber, at: offset)) { try reader.next() }
    }

    @Test func commandsAreArraysOfBulkStringsWhateverTheirBytes() {
        #expect(
            RESPCommand.encode(["SET", "rl:route:alice\r\n*1", "1", "PX", "500"])
                == Array(
                    "*5\r\n$3\r\nSET\r\n$18\r\nrl:route:alice\r\n*1\r\n$1\r\n1\r\n$2\r\nPX\r\n$3\r\n500\r\n"
                        .utf8))
        var sink = ByteArraySink()
        RESPCommand.write([[0, 0xFF], []], into: &sink)
        #expect(sink.bytes == Array("*2\r\n$2\r\n".utf8) + [0, 0xFF] + Array("\r\n$0\r\n\r\n".utf8))
    }
}
