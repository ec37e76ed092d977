import EventLoop
import HTTPCore
import MultipartEncoding
import MultipartParsing
import Testing

/// `InputLoan`: a body re-encoded with file content moved out of the input comes out byte for
/// byte as the copying re-encoder writes it, wherever the input's chains split it (a
/// delimiter across two chains, a file ending on a chain's end), when the loan's move cap is
/// reached mid-file, and with bytes after the body left in the input.
@Suite struct InputLoanTests {
    static let boundary = "LoanBoundary7MA4YWxkTrZu0gW"

    /// A body with a small field, a file of `fileBytes` bytes (bytes that look like the start
    /// of a delimiter included) and a second small field.
    static func body(fileBytes: Int) -> [UInt8] {
        var file: [UInt8] = []
        file.reserveCapacity(fileBytes)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        while file.count < fileBytes {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            if state >> 60 == 0, file.count + 6 <= fileBytes {
                file += Array("\r\n--Lo".utf8)
            } else {
                file.append(UInt8(truncatingIfNeeded: state >> 33))
            }
        }
        let text = { (value: String) in Array(value.utf8) }
        return text("--\(boundary)\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nholiday\r\n")
            + text("--\(boundary)\r\nContent-Disposition: form-data; name=\"upload\"; filename=\"a.bin\"\r\n")
            + text("Content-Type: application/octet-stream\r\n\r\n") + file
            + text(
                "\r\n--\(boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nend\r\n--\(boundary)--\r\n"
            )
    }

    /// Where the re-encoder's writes go: through the loan into `output`, or copied.
    final class Destination {
        var loan: InputLoan
        let output = OwnedEvBuffer()

        init(maximumMoves: Int) {
            loan = InputLoan(maximumMoves: maximumMoves)
        }
    }

    struct LoanSink: ByteSink {
        let destination: Destination

        mutating func write(_ bytes: UnsafeRawBufferPointer) {
            if destination.loan.isOpen {
                destination.loan.write(bytes, to: destination.output.buffer)
            } else {
                destination.output.buffer.add(bytes)
            }
        }
    }

    /// Parses and re-encodes under a fixed boundary (a new head per part, content as it came).
    struct Reencoder: MultipartEventHandler {
        var encoder = MultipartEncoder(boundary: try! Boundary(Array("OutBoundary42".utf8)))
        var sink: LoanSink

        mutating func handle(_ event: MultipartEvent) {
            switch event {
            case .partBegin(let head):
                try! encoder.beginPart(head.disposition, into: &sink)
            case .body(let bytes):
                encoder.writeBody(bytes, into: &sink)
            case .partEnd:
                break
            case .end:
                try! encoder.finish(into: &sink)
            }
        }
    }

    /// An input holding `bytes` in chains that end at `splits` (offsets), then `trailing`.
    static func input(_ bytes: [UInt8], splits: [Int], trailing: [UInt8]) -> OwnedEvBuffer {
        let input = OwnedEvBuffer()
        var start = 0
        for end in splits + [bytes.count] where end > start {
            let chain = OwnedEvBuffer()
            chain.buffer.add(Array(bytes[start..<end]))
            chain.buffer.moveAll(to: input.buffer)
            start = end
        }
        if !trailing.isEmpty {
            let chain = OwnedEvBuffer()
            chain.buffer.add(trailing)
            chain.buffer.moveAll(to: input.buffer)
        }
        return input
    }

    /// Re-encodes `body`, split at `splits`, through a loan; returns what the output got, what
    /// the input kept and how many moves the loan made.
    static func reencode(_ body: [UInt8], splits: [Int], maximumMoves: Int = 256, trailing: [UInt8] = [])
        -> (output: [UInt8], rest: [UInt8], moved: Int64, moves: Int)
    {
        let input = input(body, splits: splits, trailing: trailing)
        let destination = Destination(maximumMoves: maximumMoves)
        var handler = Reencoder(sink: LoanSink(destination: destination))
        parse(body.count, of: input, through: destination, into: &handler)
        let output = destination.output.buffer.remove(destination.output.buffer.count)
        return (
            output, input.buffer.remove(input.buffer.count), destination.loan.movedBytes,
            destination.loan.moves
        )
    }

    /// Parses the first `count` bytes of `input` into `handler` chunk by chunk, under a loan
    /// that `destination`'s writes go through, and settles it.
    static func parse(
        _ count: Int, of input: OwnedEvBuffer, through destination: Destination,
        into handler: inout some MultipartEventHandler
    ) {
        var parser = try! MultipartParser(boundary: boundary)
        destination.loan.open(input.buffer)
        var offset = 0
        input.buffer.forEachChunk(limit: count) { chunk in
            destination.loan.lend(chunk, at: offset)
            try! parser.feed(chunk, into: &handler)
            offset += chunk.count
            return true
        }
        try! parser.finish(into: &handler)
        destination.loan.settle(used: count)
    }

    /// What the copying path writes for `body`.
    static func copied(_ body: [UInt8]) -> [UInt8] {
        let destination = Destination(maximumMoves: 0)
        var parser = try! MultipartParser(boundary: boundary)
        var handler = Reencoder(sink: LoanSink(destination: destination))
        try! parser.feed(body, into: &handler)
        try! parser.finish(into: &handler)
        return destination.output.buffer.remove(destination.output.buffer.count)
    }

    @Test func everySplitPointGivesTheCopyingOutput() {
        let body = Self.body(fileBytes: 9_000)
        let expected = Self.copied(body)
        for split in 1..<body.count {
            let result = Self.reencode(body, splits: [split])
            #expect(result.output == expected, "split at \(split)")
            #expect(result.rest.isEmpty, "split at \(split)")
            if result.output != expected { return }
        }
        // Unsplit, the file's content moves.
        #expect(Self.reencode(body, splits: []).moved >= 9_000 - 64)
    }

    @Test func twoSplitsAroundTheFileEnd() {
        let body = Self.body(fileBytes: 6_000)
        let expected = Self.copied(body)
        let fileEnd =
            body.count
            - ("\r\n--\(Self.boundary)\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nend\r\n--\(Self.boundary)--\r\n")
            .utf8.count
        // Chains ending on the file's last byte, and every split of the delimiter after it.
        for first in [fileEnd - 3_000, fileEnd - 1, fileEnd] {
            for second in (fileEnd + 1)...(fileEnd + 2 + 2 + Self.boundary.utf8.count + 2)
            where second > first {
                let result = Self.reencode(body, splits: [first, second])
                #expect(result.output == expected, "splits at \(first), \(second)")
                if result.output != expected { return }
            }
        }
        #expect(Self.reencode(body, splits: [fileEnd]).moved > 0)
    }

    @Test(arguments: [0, 1, 2, 5])
    func theMoveCapReachedMidFileCopiesTheRest(cap: Int) {
        let body = Self.body(fileBytes: 64_000)
        let splits = Array(stride(from: 4_096, to: body.count, by: 4_096))
        let result = Self.reencode(body, splits: splits, maximumMoves: cap)
        #expect(result.output == Self.copied(body))
        // Pieces that follow each other in the input merge into one move; past the cap, the
        // rest of the file was copied.
        #expect(result.moves <= cap)
        #expect(cap == 0 ? result.moved == 0 : result.moved > 0)
        #expect(result.moved < 64_000)
    }

    @Test func bytesAfterTheBodyStayInTheInput() {
        let body = Self.body(fileBytes: 20_000)
        let next = Array("POST /next HTTP/1.1\r\nHost: a\r\n\r\n".utf8)
        for splits in [[], [body.count - 10], [10_000, body.count]] {
            let result = Self.reencode(body, splits: splits, trailing: next)
            #expect(result.output == Self.copied(body))
            #expect(result.rest == next)
        }
    }
}
