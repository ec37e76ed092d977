import Inspection
import Testing

/// clamd's INSTREAM framing and replies, as clamd 1.4 (Debian 12) writes them.
@Suite struct ClamdCodecTests {
    @Test func repliesAreJudged() {
        #expect(ClamdReply(Array("stream: OK".utf8)) == .clean)
        #expect(
            ClamdReply(Array("stream: FormGate.Test.EICAR.UNOFFICIAL FOUND".utf8))
                == .infected(signature: "FormGate.Test.EICAR.UNOFFICIAL"))
        #expect(
            ClamdReply(Array("stream: Heuristics.Limits.Exceeded.MaxFileSize FOUND".utf8))
                == .limitExceeded(signature: "Heuristics.Limits.Exceeded.MaxFileSize"))
        #expect(
            ClamdReply(Array("INSTREAM size limit exceeded. ERROR".utf8))
                == .error("INSTREAM size limit exceeded."))
        #expect(ClamdReply(Array("stream: OK\n".utf8)) == .clean, "a newline-ended reply")
        for garbage in ["", "PONG", "stream: ", "stream:  FOUND", "HTTP/1.1 200 OK", "stream: OKAY"] {
            #expect(ClamdReply(Array(garbage.utf8)) == .garbage, "\(garbage)")
        }
    }

    @Test func signaturesAreSafeToLog() {
        let reply = ClamdReply(Array("stream: Evil\r\n\u{1b}[31m\"name\" FOUND".utf8))
        #expect(reply == .infected(signature: "Evil???[31m\"name\""))
        let long = ClamdReply(Array(("stream: " + String(repeating: "A", count: 500) + " FOUND").utf8))
        #expect(long == .infected(signature: String(repeating: "A", count: ClamdReply.maxSignatureLength)))
    }

    @Test func theReaderWaitsForTheNULWhereverTheReadsSplit() {
        let wire = Array("stream: OK".utf8) + [0] + Array("extra".utf8)
        for split in 0...wire.count {
            var reader = ClamdReplyReader()
            let first = wire[..<split].withUnsafeBytes { reader.take($0) }
            let second = wire[split...].withUnsafeBytes { reader.take($0) }
            #expect(reader.reply == .clean, "split at \(split)")
            #expect(first + second == 11, "the NUL ends the reply; what follows is not taken")
        }
    }

    @Test func aReplyCutOrEndlessIsGarbage() {
        var cut = ClamdReplyReader()
        _ = Array("stream: OK".utf8).withUnsafeBytes { cut.take($0) }
        #expect(cut.reply == nil)
        #expect(cut.finish() == .garbage, "OK without its NUL is not an answer")
        var endless = ClamdReplyReader()
        let flood = [UInt8](repeating: 0x41, count: 600)
        _ = flood.withUnsafeBytes { endless.take($0) }
        _ = flood.withUnsafeBytes { endless.take($0) }
        #expect(endless.reply == .garbage)
    }

    @Test func chunksAreFramedInNetworkOrder() {
        let header = ClamdStream.chunkHeader(0x0102_03)
        #expect([header.0, header.1, header.2, header.3] == [0, 1, 2, 3])
        #expect(ClamdStream.command == Array("zINSTREAM".utf8) + [0])
        #expect(ClamdStream.end == [0, 0, 0, 0])
    }
}
